#!/usr/bin/env bash
# The suite (reduced) under compute-sanitizer memcheck and racecheck.
set -u
B=${BUILD:-build}/gpu
if ! command -v compute-sanitizer >/dev/null; then echo "SKIP sanitizer: compute-sanitizer not found"; exit 0; fi
for tool in memcheck racecheck; do
  out=$(compute-sanitizer --tool $tool --print-limit 20 "$B/dm_suite" --quick 2>&1); rc=$?
  echo "$out" | tail -25
  if [ $rc -eq 0 ] && grep -qE "ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards" <<<"$out" && ! grep -q "^FAIL" <<<"$out"; then
    echo "PASS sanitizer_$tool"
  else
    echo "FAIL sanitizer_$tool: rc=$rc, $(grep -E 'SUMMARY' <<<"$out")"
  fi
done
