#!/usr/bin/env bash
# bench/grow_ab.sh — throughput of a heap that grows vs a fixed heap: the
# 16 B and 1 KiB rows of the `sizes` workload (alloc, free, pair kernels) with
# build/bench/ab_devmalloc, fixed (--heap, default 4G) and --grow (64 MiB at
# first, --heap at most), one invocation each. Prints both CSVs and a table
# of Mop/s with the ratio grow/fixed (target: >= 0.90).
#   bench/grow_ab.sh [--out DIR] [ab_bench options, e.g. --reps 9 --heap 8G]
# Needs a CUDA GPU; without one it says so and exits 2.
set -uo pipefail
cd "$(dirname "$0")/.."
. tools/need-gpu.sh
need_gpu "the growth benchmark"
out=bench-results
args=()
while [ $# -gt 0 ]; do
  case $1 in
    --out) out=$2; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
B=${BUILD:-build}/bench/ab_devmalloc
[ -x "$B" ] || { echo "grow_ab: $B missing (make gpu-build)"; exit 1; }
mkdir -p "$out"
"$B" --workloads sizes --sizes 16,1K "${args[@]}" >"$out/grow_fixed.csv" || exit 1
"$B" --workloads sizes --sizes 16,1K --grow "${args[@]}" >"$out/grow_grow.csv" || exit 1
cat "$out/grow_fixed.csv" "$out/grow_grow.csv"
echo
awk -F, '
  $1 == "devmalloc" && $2 == "sizes" { k = $3 "," $5; fixed[k] = $7; order[n++] = k }
  $1 == "devmalloc-grow" && $2 == "sizes" { grow[$3 "," $5] = $7 }
  END {
    printf "%-8s %-8s %12s %12s %8s\n", "size", "kernel", "fixed Mop/s", "grow Mop/s", "ratio"
    worst = 1e9
    for (i = 0; i < n; i++) {
      k = order[i]; split(k, a, ",")
      r = fixed[k] > 0 ? grow[k] / fixed[k] : 0
      if (r < worst) worst = r
      printf "%-8s %-8s %12.1f %12.1f %8.3f\n", a[1], a[2], fixed[k], grow[k], r
    }
    printf "worst ratio %.3f (target >= 0.90): %s\n", worst, (worst >= 0.9 ? "met" : "missed")
  }' "$out/grow_fixed.csv" "$out/grow_grow.csv" | tee "$out/grow_ab.txt"
