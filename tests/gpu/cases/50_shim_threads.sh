#!/usr/bin/env bash
# Two host threads on two streams launch malloc kernels at once: one heap for
# the context, both served, nothing lost.
set -u
. "$(dirname "$0")/../progs/shim_lib.sh"
run_shim threads "$P/shim_threads"; check_served shim_threads "$OUT" $RC 262144 1
n=$(stats_contexts "$OUT")
[ "$n" -eq 1 ] && echo "PASS shim_threads_one_heap" || echo "FAIL shim_threads_one_heap: $n heaps"
run_plain threads "$P/shim_threads"; check_unbound shim_threads_unbound "$OUT" $RC
