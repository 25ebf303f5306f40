#!/usr/bin/env bash
# A heap that grows (docs/design.md, "A heap that grows"): a program that never
# sets a heap limit allocates 16 GiB over 8 kernels (all live) and 4 GiB in
# one kernel from a heap that starts with 64 MiB mapped; the heap grows while
# that kernel runs (counted); a kernel that wants more than the device has
# gets NULL and ends; mapped bytes drop after frees and a trim.
# Relinked (devmalloc_cuda_init_growing), then the plain build under the shim
# with DEVMALLOC_GROW=1 (its stats must say the heap grew).
set -u
. tests/gpu/case_lib.sh
need_built 14_device_grow "$B/gpu/dm_grow" "$B/gpu/dm_grow_plain" "$SHIM_SO"
"$B/gpu/dm_grow"
echo "---- plain build under the shim"
out=$(env LD_PRELOAD="$SHIM_SO" DEVMALLOC_GROW=1 DEVMALLOC_STATS=json DEVMALLOC_VERBOSE=1 "$B/gpu/dm_grow_plain" 2>&1); rc=$?
echo "$out"
grep -E "^(PASS|FAIL) " <<<"$out" | sed 's/^\(PASS\|FAIL\) grow_/\1 shim_grow_/'
json=$(grep -o '{"record":"stats".*}' <<<"$out" | head -1)
if [ $rc -eq 0 ] && [ -n "$json" ] && python3 - "$json" <<'PY'
import json, sys
r = json.loads(sys.argv[1])
ok = r["grows"] == 1 and r["growth_events"] > 0 and r["mapped_peak"] >= 16 << 30
print("shim stats: grows %d, %d growth events, peak %d MiB mapped, %d waits, %d timeouts"
      % (r["grows"], r["growth_events"], r["mapped_peak"] >> 20, r["grow_waits"], r["grow_timeouts"]))
sys.exit(0 if ok else 1)
PY
then echo "PASS shim_grow_stats"
else echo "FAIL shim_grow_stats: exit $rc, or the shim's stats do not show a heap that grew to 16 GiB"; fi
# DEVMALLOC_GROW=0 (the default) keeps the fixed heap (256 MiB): the 16 GiB phase fails there
out=$(env LD_PRELOAD="$SHIM_SO" DEVMALLOC_GROW=0 DEVMALLOC_STATS=1 "$B/gpu/dm_grow_plain" 2>&1)
if grep -q "^FAIL grow_16g_over_kernels" <<<"$out" && grep -q "heap 256 MiB" <<<"$out"; then
  echo "PASS shim_grow_off_fixed"
else echo "FAIL shim_grow_off_fixed: DEVMALLOC_GROW=0 did not keep a fixed 256 MiB heap"; fi
