#!/usr/bin/env bash
# Heap-size limit: cudaDeviceSetLimit before the first launch sizes the
# devmalloc heap and reads back; another value after it is refused
# (cudaErrorInvalidValue), the same value accepted; DEVMALLOC_HEAP_SIZE
# overrides it.
set -u
. "$(dirname "$0")/../progs/shim_lib.sh"
# (fixed heaps: DEVMALLOC_GROW=0; the rules for heaps that grow are checked
# by 14_device_grow.sh and the host tests)
run_shim limit DEVMALLOC_GROW=0 "$P/shim_limit"; check_served shim_limit "$OUT" $RC 16384
if grep -q "heap 64 MiB" <<<"$OUT" && grep -q "set same after launch: cudaSuccess" <<<"$OUT"; then
  echo "PASS shim_limit_sizes_heap"
else echo "FAIL shim_limit_sizes_heap: no 64 MiB heap in the stats, or same value refused"; fi
OUT=$(env LD_PRELOAD="$SHIM_SO" DEVMALLOC_GROW=0 DEVMALLOC_STATS=1 DEVMALLOC_HEAP_SIZE=96M "$P/shim_static" 2>&1); RC=$?
echo "$OUT"
if [ $RC -eq 0 ] && grep -q "heap 96 MiB" <<<"$OUT"; then echo "PASS shim_heap_size_env"
else echo "FAIL shim_heap_size_env: exit $RC, no 96 MiB heap in the stats"; fi
OUT=$(env LD_PRELOAD="$SHIM_SO" DEVMALLOC_HEAP_SIZE=bogus "$P/shim_static" 2>&1); RC=$?
if [ $RC -eq 0 ] && [ "$(grep -c 'DEVMALLOC_HEAP_SIZE="bogus" is not valid' <<<"$OUT")" -eq 1 ]; then
  echo "PASS shim_heap_size_malformed"
else echo "FAIL shim_heap_size_malformed: exit $RC or warning not printed once"; fi
