#!/usr/bin/env bash
# Lock-free structures that read published nodes with plain loads
# (tests/gpu/corpus/plainreads.cu: a skiplist, a chained hash table, a
# binary search tree), run three ways (stock; relinked under the shim; the
# stock build under the shim), PLAIN_RUNS times each (default 20), at the
# sizes that failed on dense packing (4 x 32 threads, 125 x 256) and with
# 1M inserts: every run's digest identical to stock's, 0 failures. Before
# them, the placement probe (where blocks of different SMs and warps land)
# on each way, for the log.
#
# Stock's reference digest of each cell (structure x size) comes from one
# stock run first; then all runs of all cells and ways go PLAIN_JOBS
# processes at a time (each a process of its own; their kernels share the
# GPU by time-slicing, which changes nothing a kernel does). Each run leaves
# its output and exit status in $CT/plainreads/KIND.SIZE.WAY.RUN.{out,rc}; the
# PASS/FAIL lines are written after all runs, in a fixed order, from those
# files. The last line: runs per way and the wall time.
#
# case-timeout: 900
set -u
# PLAIN_ENV (e.g. DEVMALLOC_DENSE=1) is given to the two devmalloc ways;
# PLAIN_CFGS, PLAIN_KINDS narrow a run; PLAIN_TIMEOUT: seconds per run (90:
# stock's skiplist runs for tens of seconds when the GPU is shared);
# PLAIN_JOBS runs at once (default: the cores less four, 2 .. 12; 1: one
# after another). The whole case took six minutes on an H200 machine (12 at
# once, beside a soak); the suite gives it 15 (the case-timeout line above).
. "$(dirname "$0")/../corpus/corpus_lib.sh"
t0=$(date +%s%N)
runs=${PLAIN_RUNS:-20}
dj=$(($(nproc) - 4)); [ $dj -ge 2 ] || dj=2; [ $dj -le 12 ] || dj=12
jobs=${PLAIN_JOBS:-$dj}
[[ $jobs =~ ^[1-9][0-9]*$ ]] || { echo "plainreads: PLAIN_JOBS '$jobs' is not a positive count; $dj"; jobs=$dj; }
P=$C/plainreads
[ -x "$P.stock" ] && [ -x "$P.relinked" ] || { echo "FAIL plainreads: $P.stock or .relinked missing (make gpu-build)"; exit 0; }
T=$CT/plainreads
rm -rf "$T" && mkdir -p "$T"
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
tp=$(date +%s%N)
IFS=, read -r -a cfgs <<<"${PLAIN_CFGS:-4 32 20000,125 256 500000,4096 256 1000000}"
kinds=${PLAIN_KINDS:-skiplist hash tree}
ways="stock relinked shim"

# 1. stock's reference digest of each cell, one run each, one after another
for kind in $kinds; do
  for cfg in "${cfgs[@]}"; do
    timeout "${PLAIN_TIMEOUT:-90}" $(way_cmd stock) $kind $cfg 2>/dev/null </dev/null \
      | grep '^digest' >"$T/$kind.${cfg// /x}.ref"
  done
done
t1=$(date +%s%N)

# 2. every run of every cell that has a reference, PLAIN_JOBS at a time
one_run() { # kind cfg way run: output and exit status to files of its own
  local f=$T/$1.${2// /x}.$3.$4 t
  timeout "${PLAIN_TIMEOUT:-90}" $(way_cmd "$3") $1 $2 >"$f.out" 2>&1 </dev/null &
  t=$!
  trap 'kill $t; exit 143' TERM  # timeout passes it on to the program
  wait $t
  echo $? >"$f.rc"
}
# killed (the suite's case timeout): the runs in flight end too
trap 'kill $(jobs -p) 2>/dev/null; exit 143' TERM INT
cells=0
for kind in $kinds; do
  for cfg in "${cfgs[@]}"; do
    [ -s "$T/$kind.${cfg// /x}.ref" ] || continue
    cells=$((cells + 1))
    for r in $(seq 1 "$runs"); do
      for w in $ways; do
        while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
        one_run "$kind" "$cfg" "$w" "$r" &
      done
    done
  done
done
wait
t2=$(date +%s%N)

# 3. the lines, in a fixed order, from the files
for kind in $kinds; do
  for cfg in "${cfgs[@]}"; do
    c=$kind.${cfg// /x}
    ref=$(cat "$T/$c.ref")
    [ -n "$ref" ] || { echo "FAIL plainreads/$kind/${cfg// /x}/stock: no digest"; continue; }
    for w in $ways; do
      fails=0 why=""
      for r in $(seq 1 "$runs"); do
        f=$T/$c.$w.$r
        rc=$(cat "$f.rc" 2>/dev/null); rc=${rc:-none}
        d=$(grep '^digest' "$f.out" 2>/dev/null)
        if [ "$rc" != 0 ] || [ "$d" != "$ref" ]; then
          fails=$((fails + 1))
          [ -n "$why" ] || why="run $r rc $rc: $(grep -v '^digest' "$f.out" 2>/dev/null | grep -v '^devmalloc: stats' | head -2 | tr '\n' ' ')"
        fi
      done
      if [ $fails -eq 0 ]; then echo "PASS plainreads/$kind/${cfg// /x}/$w: $runs runs, digests identical to stock"
      else echo "FAIL plainreads/$kind/${cfg// /x}/$w: $fails of $runs runs failed ($why)"; fi
    done
  done
done
ms() { echo $((($2 - $1) / 1000000)); }
echo "plainreads: $((cells * runs)) runs per way ($cells cells x $runs; stock also $cells reference runs), $jobs at once;" \
  "wall $(ms "$t0" "$(date +%s%N)") ms (probes $(ms "$t0" "$tp"), references $(ms "$tp" "$t1"), runs $(ms "$t1" "$t2")); logs in $T"
