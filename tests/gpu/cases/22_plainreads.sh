#!/usr/bin/env bash
# Lock-free structures that read published nodes with plain loads
# (tests/gpu/corpus/plainreads.cu: a skiplist, a chained hash table, a
# binary search tree), run three ways (stock; relinked under the shim; the
# stock build under the shim), PLAIN_RUNS times each (default 20), at the
# sizes that failed on dense packing (4 x 32 threads, 125 x 256) and with
# 1M inserts: every run's digest identical to stock's, 0 failures. Before
# them, the placement probe (where blocks of different SMs and warps land)
# on each way, for the log.
set -u
# PLAIN_ENV (e.g. DEVMALLOC_DENSE=1) is given to the two devmalloc ways;
# PLAIN_CFGS, PLAIN_KINDS, PLAIN_TIMEOUT (s per run, 30) narrow a run.
. "$(dirname "$0")/../corpus/corpus_lib.sh"
runs=${PLAIN_RUNS:-20}
P=$C/plainreads
[ -x "$P.stock" ] && [ -x "$P.relinked" ] || { echo "FAIL plainreads: $P.stock or .relinked missing (make gpu-build)"; exit 0; }
way_cmd() { # way -> the command prefix
  case $1 in
    stock) echo "env -u LD_PRELOAD $P.stock" ;;
    relinked) echo "env LD_PRELOAD=$SHIM_SO ${PLAIN_ENV:-} $P.relinked" ;;
    shim) echo "env LD_PRELOAD=$SHIM_SO ${PLAIN_ENV:-} $P.stock" ;;
  esac
}
for w in stock relinked shim; do
  for s in 16 100; do
    for g in "4 32" "125 256"; do
      echo "probe $w: $($(way_cmd $w) place $g $s 2>&1 | tail -1)"
    done
  done
done
IFS=, read -r -a cfgs <<<"${PLAIN_CFGS:-4 32 20000,125 256 500000,4096 256 1000000}"
for kind in ${PLAIN_KINDS:-skiplist hash tree}; do
  for cfg in "${cfgs[@]}"; do
    ref=$(timeout "${PLAIN_TIMEOUT:-30}" $(way_cmd stock) $kind $cfg 2>/dev/null | grep '^digest')
    [ -n "$ref" ] || { echo "FAIL plainreads/$kind/${cfg// /x}/stock: no digest"; continue; }
    for w in stock relinked shim; do
      fails=0 why=""
      for r in $(seq 1 "$runs"); do
        out=$(timeout "${PLAIN_TIMEOUT:-30}" $(way_cmd $w) $kind $cfg 2>&1); rc=$?
        d=$(grep '^digest' <<<"$out")
        if [ $rc -ne 0 ] || [ "$d" != "$ref" ]; then
          fails=$((fails + 1))
          [ -n "$why" ] || why="run $r rc $rc: $(grep -v '^digest' <<<"$out" | grep -v '^devmalloc: stats' | head -2 | tr '\n' ' ')"
        fi
      done
      if [ $fails -eq 0 ]; then echo "PASS plainreads/$kind/${cfg// /x}/$w: $runs runs, digests identical to stock"
      else echo "FAIL plainreads/$kind/${cfg// /x}/$w: $fails of $runs runs failed ($why)"; fi
    done
  done
done
