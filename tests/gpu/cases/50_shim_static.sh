#!/usr/bin/env bash
# Static cudart (nvcc default), unchanged program relinked with devmalloc:
# under the shim every allocation succeeds and is counted by devmalloc; without
# it malloc returns NULL and the device library says so.
set -u
. "$(dirname "$0")/../progs/shim_lib.sh"
run_shim static "$P/shim_static"; check_served shim_static "$OUT" $RC 131072
run_plain static "$P/shim_static"; check_unbound shim_static_unbound "$OUT" $RC
# modules were bound, said at verbose level
run_shim static_verbose "$P/shim_static"
if grep -q "bound to the heap of context" <<<"$OUT"; then echo "PASS shim_static_verbose_bound"
else echo "FAIL shim_static_verbose_bound: no 'bound to the heap' line at DEVMALLOC_VERBOSE=1"; fi
# DEVMALLOC_DISABLE=1: inert, as without the shim
OUT=$(env LD_PRELOAD="$SHIM_SO" DEVMALLOC_DISABLE=1 "$P/shim_static" 2>&1); RC=$?
echo "$OUT"; check_unbound shim_static_disabled "$OUT" $RC
