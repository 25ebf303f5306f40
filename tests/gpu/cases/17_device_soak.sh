#!/usr/bin/env bash
# A short soak (tests/gpu/soak.sh is the long one): the relinked build for
# 20 s, then 8 s of each under compute-sanitizer memcheck and racecheck, with
# fewer slots (the sanitizers run kernels much slower); every check passes,
# whole at the end, and the sanitizers report nothing; no NULL in the plain
# run (under a sanitizer NULLs are counted, not failed: its slowdown outlasts
# the allocator's bounded waits).
set -u
. tests/gpu/case_lib.sh
need_built 17_device_soak "$B/gpu/dm_soak"
out=$("$B/gpu/dm_soak" 20 5 2>&1); rc=$?
echo "$out" | tail -3
if [ $rc -eq 0 ]; then echo "PASS soak_short: $(grep '^soak:' <<<"$out")"
else echo "FAIL soak_short: exit $rc: $(grep -E '^soak:|check .*: [^o]' <<<"$out" | head -2 | tr '\n' ' ')"; fi
if ! command -v compute-sanitizer >/dev/null; then
  echo "SKIP soak_sanitizer: compute-sanitizer not found"; exit 0
fi
for tool in memcheck racecheck; do
  out=$(SOAK_NULLS_OK=1 compute-sanitizer --tool $tool --error-exitcode 9 "$B/gpu/dm_soak" 8 4 8192 2>&1); rc=$?
  echo "$out" | tail -4
  if [ $rc -eq 0 ]; then echo "PASS soak_$tool: $(grep '^soak:' <<<"$out")"
  else echo "FAIL soak_$tool: exit $rc: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|^soak:' <<<"$out" | head -2 | tr '\n' ' ')"; fi
done
