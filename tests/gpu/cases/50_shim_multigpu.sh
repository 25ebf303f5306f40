#!/usr/bin/env bash
# Two GPUs or more: one heap per device's context, all served. SKIP on one GPU.
set -u
. "$(dirname "$0")/../progs/shim_lib.sh"
run_shim multigpu "$P/shim_multigpu"
if [ $RC -eq 77 ]; then echo "SKIP shim_multigpu: fewer than 2 GPUs"; exit 0; fi
ngpu=$(grep -c "^device[0-9]*:" <<<"$OUT"); ngpu=$((ngpu / 2))
check_served shim_multigpu "$OUT" $RC $((ngpu * 65536)) "$ngpu"
run_plain multigpu "$P/shim_multigpu"; check_unbound shim_multigpu_unbound "$OUT" $RC
