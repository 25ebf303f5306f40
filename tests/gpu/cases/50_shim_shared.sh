#!/usr/bin/env bash
# Shared cudart (-cudart shared): the same program, reached through libcudart.so.
set -u
. "$(dirname "$0")/../progs/shim_lib.sh"
run_shim shared "$P/shim_shared"; check_served shim_shared "$OUT" $RC 131072
run_plain shared "$P/shim_shared"; check_unbound shim_shared_unbound "$OUT" $RC
