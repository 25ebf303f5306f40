#!/usr/bin/env bash
# tools/startup-probe.sh — where a warm start under the shim spends its time
# (needs a GPU): the benchmark binary's start (context, modules, a 4 GiB heap,
# the first malloc kernel, exit) as process wall time, median of REPS runs,
# for stock, the shim made inert, the shim with no re-link, the shim with its
# warm cache (with and without the read-ahead), the relinked build, the shim
# with an empty cache (cold: the re-link compiles) and stock with the driver's
# JIT of the same PTX; then one warm and one cold run's timeline at
# DEVMALLOC_VERBOSE=2 (every line stamped with the milliseconds since the shim
# read its options).
#   REPS (default 7)   OUT (default: a new temporary directory)
set -u
cd "$(dirname "$0")/.."
. tools/need-gpu.sh
need_gpu "the start-up probe"
B=${BUILD:-build}
case $B in /*) ;; *) B=$PWD/$B ;; esac
reps=${REPS:-7} out=${OUT:-$(mktemp -d)}
pre=$B/libdevmalloc_preload.so
run=("$B/bench/ab_stock" --heap 4G --workloads init --reps 1)
rel=("$B/bench/ab_devmalloc" --heap 4G --workloads init --reps 1)
cache=$(mktemp -d)
env LD_PRELOAD="$pre" DEVMALLOC_CACHE_DIR="$cache" "${run[@]}" >/dev/null 2>&1 # fill the cache
wall_us() { local t0; t0=$(date +%s%N); "$@" >/dev/null 2>&1 || { echo fail; return; }; echo $((($(date +%s%N) - t0) / 1000)); }
median() { sort -n | awk '{a[NR]=$1} END {printf "%.2f", a[int((NR+1)/2)] / 1000}'; }
declare -A ways=(
  [1-stock]="env"
  [2-shim-inert]="env LD_PRELOAD=$pre DEVMALLOC_DISABLE=1"
  [3-shim-no-relink]="env LD_PRELOAD=$pre DEVMALLOC_JIT=off DEVMALLOC_CACHE_DIR=$cache"
  [4-shim-warm]="env LD_PRELOAD=$pre DEVMALLOC_CACHE_DIR=$cache"
  [5-shim-warm-no-ahead]="env LD_PRELOAD=$pre DEVMALLOC_JIT_AHEAD=0 DEVMALLOC_CACHE_DIR=$cache"
  [6-shim-warm-4G-heap-env]="env LD_PRELOAD=$pre DEVMALLOC_HEAP_SIZE=4G DEVMALLOC_CACHE_DIR=$cache"
)
declare -A times
for i in $(seq "$reps"); do # the ways in turn, so that drift touches each alike
  for w in "${!ways[@]}"; do
    # shellcheck disable=SC2086
    times[$w]+="$(wall_us ${ways[$w]} "${run[@]}") "
  done
  times[7-relinked]+="$(wall_us "${rel[@]}") "
  c=$(mktemp -d)
  times[8-shim-cold]+="$(wall_us env CUDA_CACHE_DISABLE=1 LD_PRELOAD="$pre" DEVMALLOC_CACHE_DIR="$c" "${run[@]}") "
  rm -rf "$c"
  times[9-stock-driver-jit]+="$(wall_us env CUDA_CACHE_DISABLE=1 CUDA_FORCE_PTX_JIT=1 "${run[@]}") "
done
{
  printf '%-26s %10s   (%s)\n' way "median ms" "runs, us"
  for w in $(printf '%s\n' "${!times[@]}" | sort); do
    printf '%-26s %10s   (%s)\n' "$w" "$(tr ' ' '\n' <<<"${times[$w]}" | grep -v '^$' | median)" "${times[$w]}"
  done
} | tee "$out/startup-probe.txt"
echo "-- timeline of one warm run under the shim (DEVMALLOC_VERBOSE=2):" | tee -a "$out/startup-probe.txt"
t0=$(date +%s%N)
env LD_PRELOAD="$pre" DEVMALLOC_CACHE_DIR="$cache" DEVMALLOC_VERBOSE=2 "${run[@]}" 2>&1 >/dev/null |
  grep "^devmalloc" | tee -a "$out/startup-probe.txt"
echo "process wall: $((($(date +%s%N) - t0) / 1000000)) ms" | tee -a "$out/startup-probe.txt"
c=$(mktemp -d)
echo "-- timeline of one cold run under the shim (empty cache; DEVMALLOC_VERBOSE=2):" | tee -a "$out/startup-probe.txt"
t0=$(date +%s%N)
env CUDA_CACHE_DISABLE=1 LD_PRELOAD="$pre" DEVMALLOC_CACHE_DIR="$c" DEVMALLOC_VERBOSE=2 "${run[@]}" 2>&1 >/dev/null |
  grep "^devmalloc" | tee -a "$out/startup-probe.txt"
echo "process wall: $((($(date +%s%N) - t0) / 1000000)) ms" | tee -a "$out/startup-probe.txt"
rm -rf "$cache" "$c"
