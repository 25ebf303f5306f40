#!/usr/bin/env bash
# bench/grow_ab.sh — throughput of a heap that grows vs a fixed heap of the
# same final size: the 16 B and 1 KiB rows of the `sizes` workload (alloc,
# free, pair kernels) with build/bench/ab_devmalloc --grow (64 MiB at first,
# --heap at most, default 4G), then fixed at the most the growing heap
# mapped (its stats' mapped peak), and fixed at --heap for reference. Prints
# the CSVs and a table of Mop/s with the ratio grow / fixed at the same size
# (target: >= 0.90).
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
"$B" --workloads sizes --sizes 16,1K --grow "${args[@]}" >"$out/grow_grow.csv" 2>"$out/grow_grow.err" || exit 1
peak=$(sed -n 's/.*mapped peak \([0-9]*\) bytes.*/\1/p' "$out/grow_grow.err" | tail -1)
[ -n "$peak" ] || { echo "grow_ab: the growing run did not report its mapped peak"; cat "$out/grow_grow.err"; exit 1; }
mib=$(( (peak + (1 << 20) - 1) >> 20 ))
"$B" --workloads sizes --sizes 16,1K "${args[@]}" --heap "${mib}M" --variant-name devmalloc-same \
  >"$out/grow_fixed.csv" || exit 1
"$B" --workloads sizes --sizes 16,1K "${args[@]}" --variant-name devmalloc-max >"$out/grow_max.csv" || exit 1
cat "$out/grow_fixed.csv" "$out/grow_grow.csv" "$out/grow_max.csv"
echo
echo "the heap that grew mapped at most $mib MiB; fixed heaps: $mib MiB (judged) and the maximum (reference)"
awk -F, '
  $1 == "devmalloc-same" && $2 == "sizes" { k = $3 "," $5; fixed[k] = $7; order[n++] = k }
  $1 == "devmalloc-grow" && $2 == "sizes" { grow[$3 "," $5] = $7 }
  $1 == "devmalloc-max" && $2 == "sizes" { big[$3 "," $5] = $7 }
  END {
    printf "%-8s %-8s %12s %12s %8s %14s\n", "size", "kernel", "fixed Mop/s", "grow Mop/s", "ratio", "max-fixed Mop/s"
    worst = 1e9
    for (i = 0; i < n; i++) {
      k = order[i]; split(k, a, ",")
      r = fixed[k] > 0 ? grow[k] / fixed[k] : 0
      if (r < worst) worst = r
      printf "%-8s %-8s %12.1f %12.1f %8.3f %14.1f\n", a[1], a[2], fixed[k], grow[k], r, big[k]
    }
    printf "worst ratio %.3f (target >= 0.90): %s\n", worst, (worst >= 0.9 ? "met" : "missed")
  }' "$out/grow_fixed.csv" "$out/grow_grow.csv" "$out/grow_max.csv" | tee "$out/grow_ab.txt"
