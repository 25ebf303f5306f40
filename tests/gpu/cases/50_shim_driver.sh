#!/usr/bin/env bash
# Driver API program linked with -lcuda: cuCtxCreate, cuModuleLoadData of a
# cubin device-linked with devmalloc, cuLaunchKernel, cuCtxDestroy, twice
# (heap torn down with its context and created again for the next).
set -u
. "$(dirname "$0")/../progs/shim_lib.sh"
run_shim driver "$P/shim_driver" "$P/shim_kernels.cubin"
check_served shim_driver "$OUT" $RC 131072 2
run_plain driver "$P/shim_driver" "$P/shim_kernels.cubin"; check_unbound shim_driver_unbound "$OUT" $RC
