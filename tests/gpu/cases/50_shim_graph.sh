#!/usr/bin/env bash
# CUDA graphs: the first malloc kernel of the process is captured (global
# capture mode, blocking stream) and replayed; then a graph built with
# cudaGraphAddKernelNode. Binding must neither break the capture nor be missed.
set -u
. "$(dirname "$0")/../progs/shim_lib.sh"
run_shim graph "$P/shim_graph"; check_served shim_graph "$OUT" $RC 262144
run_plain graph "$P/shim_graph"; check_unbound shim_graph_unbound "$OUT" $RC
