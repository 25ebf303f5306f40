#!/usr/bin/env bash
# bench/compare_builds.sh — the same rows from several builds of
# ab_devmalloc, one after the other on one GPU, side by side: for deciding
# whether an allocator change stays (each build is a binary built from its
# own tree with `make build/bench/ab_devmalloc`, copied anywhere).
#   bench/compare_builds.sh [--out DIR] [--fresh] [--sizes LIST] NAME=PATH [NAME=PATH ...]
# --fresh: each size of the 4 GiB rows in its own process (a fresh heap, as
# a harness that runs one size per process sees it); by default they run in
# one process, each row on a heap the previous rows used. --sizes: the sizes
# of the 4 GiB rows (default 16,256,1K,4K,8K,16K,64K; `make bench` runs
# 16,32,64,128,256,512,1K,... in one process, so the earlier rows' chunks are
# still kept by their bins when the later rows run).
# Rows: the `sizes` workload at 16 B .. 64 KiB and `mixed` in a 4 GiB heap,
# 16 B / 256 B / 1 KiB in a 64 MiB heap (the same thread counts as the small-
# heap target), and mixed utilization in 256 MiB. Prints one table of Mop/s
# (utilization in %) with a column per build; the first build is the base
# and the others get their ratio to it. Needs a CUDA GPU; without one it says
# so and exits 2.
set -uo pipefail
cd "$(dirname "$0")/.."
. tools/need-gpu.sh
out=bench-results/compare
builds=()
fresh=0
sizes=16,256,1K,4K,8K,16K,64K
while [ $# -gt 0 ]; do
  case $1 in
    --out) out=$2; shift 2 ;;
    --fresh) fresh=1; shift ;;
    --sizes) sizes=$2; shift 2 ;;
    -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *=*) builds+=("$1"); shift ;;
    *) echo "compare_builds: '$1' is not NAME=PATH" >&2; exit 1 ;;
  esac
done
[ ${#builds[@]} -ge 1 ] || { echo "usage: bench/compare_builds.sh [--out DIR] NAME=PATH [NAME=PATH ...]" >&2; exit 1; }
for b in "${builds[@]}"; do
  [ -x "${b#*=}" ] || { echo "compare_builds: ${b#*=} is not an executable" >&2; exit 1; }
done
need_gpu "the build comparison"
mkdir -p "$out"
for b in "${builds[@]}"; do
  name=${b%%=*} bin=${b#*=}
  main_rows() {
    if [ $fresh = 0 ]; then
      "$bin" --variant-name "$name" --workloads sizes,mixed --sizes "$sizes" --reps 3
      return
    fi
    local s
    for s in ${sizes//,/ }; do
      "$bin" --variant-name "$name" --workloads sizes --sizes $s --reps 3 || return
    done
    "$bin" --variant-name "$name" --workloads mixed --reps 3
  }
  { main_rows &&
    "$bin" --variant-name "$name@64M" --heap 64M --workloads sizes --sizes 16:1M,256:64K,1K:32K --reps 3 &&
    "$bin" --variant-name "$name@256M" --heap 256M --workloads util --max-seconds 20
  } >"$out/$name.csv" || { echo "compare_builds: $name failed (see $out/$name.csv)" >&2; exit 1; }
done
names=() csvs=()
for b in "${builds[@]}"; do names+=("${b%%=*}"); csvs+=("$out/${b%%=*}.csv"); done
awk -F, -v names="${names[*]}" '
  function label(v, w, s, k,   base, heap) {
    heap = v ~ /@64M$/ ? "64 MiB " : (v ~ /@256M$/ ? "256 MiB " : "")
    if (w == "util") return heap "util " (s == 0 ? "mixed" : s " B")
    return heap w " " (s == 0 ? "mixed" : s " B") " " k
  }
  $1 == "variant" { next }
  {
    v = $1; sub(/@.*/, "", v)
    if ($2 == "util") {
      if ($3 != 0) next
      val = $9; sub(/.*utilization /, "", val); sub(/%.*/, "", val)
    } else if ($2 == "sizes" || $2 == "mixed") val = $7
    else next
    r = label($1, $2, $3, $5)
    if (!(r in seen)) { seen[r] = 1; order[n++] = r }
    cell[r, v] = val
  }
  END {
    m = split(names, nm, " ")
    printf "%-28s", "row"
    for (j = 1; j <= m; j++) printf " %12s", nm[j]
    for (j = 2; j <= m; j++) printf " %10s", nm[j] "/" nm[1]
    printf "\n"
    for (i = 0; i < n; i++) {
      r = order[i]; printf "%-28s", r
      for (j = 1; j <= m; j++) printf " %12s", ((r, nm[j]) in cell ? cell[r, nm[j]] : "-")
      for (j = 2; j <= m; j++) {
        a = cell[r, nm[1]] + 0; b = cell[r, nm[j]] + 0
        printf " %10s", (a > 0 && ((r, nm[j]) in cell) ? sprintf("%.2fx", b / a) : "-")
      }
      printf "\n"
    }
  }' "${csvs[@]}" | tee "$out/compare.txt"
