#!/usr/bin/env bash
# bench/run.sh — the A/B benchmark: the same workloads with CUDA's stock device
# malloc and with devmalloc, in one invocation, on the GPU.
#
#   bench/run.sh [--out DIR] [--quick] [ab_bench options...]
#     --out DIR     where CSV files, the table and plots go (default bench-results/)
#     --quick       a short run (fewer sizes and repetitions)
#   ab_bench options: --heap BYTES --threads N --reps R --max-seconds S
#                     --workloads sizes,scaling,mixed,divergent,churn,graph,util,init
#                     --sizes 16,64,1K,...
# Needs a CUDA GPU; without one it says so and exits 2.
set -uo pipefail
cd "$(dirname "$0")/.."
B=${BUILD:-build}
out=bench-results
args=()
quick=0
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) args+=("$1"); shift ;;
  esac
done
for b in ab_stock ab_devmalloc; do
  [ -x "$B/bench/$b" ] || { echo "bench: $B/bench/$b missing: run 'make gpu-build' first" >&2; exit 2; }
done
if ! "$B/bench/ab_stock" --workloads none >/dev/null 2>"$out.probe.err"; then
  cat "$out.probe.err" >&2; rm -f "$out.probe.err"
  echo "bench: no usable CUDA GPU on this machine: the A/B benchmark needs one (it compares GPU allocators)" >&2
  exit 2
fi
rm -f "$out.probe.err"
mkdir -p "$out"
if [ $quick -eq 1 ]; then
  args=(--reps 3 --sizes 16,64,256,1K,4K,16K,64K,1M --workloads init,sizes,mixed,divergent,churn,graph "${args[@]}")
fi
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)
echo "# GPU: ${gpu:-unknown}" | tee "$out/gpu.txt"
header="variant,workload,size,threads,kernel,ms,mops,failures,note"
for v in stock devmalloc; do
  echo "== $v: ab_bench ${args[*]}" >&2
  { echo "$header"; "$B/bench/ab_$v" "${args[@]}"; } >"$out/$v.csv" || { echo "bench: ab_$v failed" >&2; exit 3; }
  # utilization: a small heap filled until NULL (256 MiB, as the papers do)
  if [ $quick -eq 0 ]; then
    "$B/bench/ab_$v" --heap 256M --workloads util >>"$out/$v.csv" || { echo "bench: ab_$v util failed" >&2; exit 3; }
  fi
done
python3 bench/report.py "$out" "$gpu"
