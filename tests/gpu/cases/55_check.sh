#!/usr/bin/env bash
# DEVMALLOC_CHECK: a plain nvcc program that writes one byte past a 24-byte
# device malloc block, under the shim. With check mode the block is reported
# (address and size); the same program without the overflow reports nothing;
# without check mode nothing is said. Also the cost: the stock benchmark
# binary under the shim with and without check mode.
set -u
. tests/gpu/case_lib.sh
P=$B/gpu/check_overflow
need_built 55_check "$SHIM_SO" "$P"
out=$(env LD_PRELOAD="$SHIM_SO" DEVMALLOC_CHECK=1 "$P" bad 2>&1); rc=$?
echo "$out"
if [ $rc -eq 0 ] && grep -q "check: context [0-9]*: 1 block(s) written past their end.*24 bytes asked" <<<"$out"; then
  echo "PASS check_reports_overflow: $(grep -o 'the first, at 0x[0-9a-f]*' <<<"$out" | head -1)"
else echo "FAIL check_reports_overflow: exit $rc, no report of one damaged 24-byte block"; fi
out=$(env LD_PRELOAD="$SHIM_SO" DEVMALLOC_CHECK=1 DEVMALLOC_STATS=1 "$P" clean 2>&1); rc=$?
echo "$out"
if [ $rc -eq 0 ] && ! grep -q "check:" <<<"$out" && grep -q "allocs 16384" <<<"$out"; then
  echo "PASS check_clean_silent"
else echo "FAIL check_clean_silent: exit $rc, a report for a clean program or not served by devmalloc"; fi
out=$(env LD_PRELOAD="$SHIM_SO" "$P" bad 2>&1); rc=$?
if [ $rc -eq 0 ] && ! grep -q "check:" <<<"$out"; then echo "PASS check_off_silent"
else echo "FAIL check_off_silent: exit $rc, or a check report without DEVMALLOC_CHECK"; fi
# cost (H200 figures go to docs/benchmarks.md)
ab=$B/bench/ab_stock
if [ -x "$ab" ]; then
  for c in 0 1; do
    echo "-- DEVMALLOC_CHECK=$c"
    env LD_PRELOAD="$SHIM_SO" DEVMALLOC_CHECK=$c DEVMALLOC_HEAP_SIZE=4G "$ab" --workloads sizes \
      --sizes 16,256,1K,16K --reps 3 2>/dev/null | cut -d, -f2-7
  done
  echo "PASS check_cost_measured"
fi
