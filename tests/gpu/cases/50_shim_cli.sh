#!/usr/bin/env bash
# tools/devmalloc run --stats on a relinked program prints the summary; also a
# process without CUDA under the shim is unaffected.
set -u
. "$(dirname "$0")/../progs/shim_lib.sh"
OUT=$(BUILD=$B tools/devmalloc run --stats --heap-size 128M -- "$P/shim_static" 2>&1); RC=$?
echo "$OUT"
if [ $RC -eq 0 ] && grep -q "^devmalloc: stats: context .*\(heap 128 MiB\|max 128 MiB\)" <<<"$OUT"; then
  echo "PASS shim_cli_run_stats"
else echo "FAIL shim_cli_run_stats: exit $RC, no 128 MiB stats line"; fi
OUT=$(LD_PRELOAD="$SHIM_SO" DEVMALLOC_STATS=1 sh -c 'echo hello' 2>&1); RC=$?
if [ $RC -eq 0 ] && [ "$OUT" = hello ]; then echo "PASS shim_no_cuda_inert"
else echo "FAIL shim_no_cuda_inert: exit $RC, output '$OUT'"; fi
