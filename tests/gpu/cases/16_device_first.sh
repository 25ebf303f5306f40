#!/usr/bin/env bash
# A fresh heap's first kernels (docs/design.md, "Never worse than stock"):
# each cell is a fresh process (tests/gpu/progs/dm_first.cu) whose first
# kernel meets an empty heap. Sizes 16 B .. 64 MiB, threads up to 1M, live
# bytes at most half the heap; heaps of 64 MiB, 4 GiB and 16 GiB, fixed and
# growing, relinked and the plain build under the shim, pair kernels (malloc,
# write, free) and alloc-all kernels (a second kernel frees): 0 NULL in every
# kernel, the first included. One PASS/FAIL line per group of cells; the
# cells' lines (NULLs of the first and later kernels, the first kernel's
# time) stay in the log. Stock runs the 4 GiB pair cells beside them. Then
# fills of one size to 90% of a 1 GiB heap (below each size's utilization).
set -u
. tests/gpu/case_lib.sh
need_built 16_device_first "$B/gpu/dm_first" "$B/gpu/dm_first_plain" "$SHIM_SO"
SIZES_ALL="16 100 1024 4096 5000 16384 24576 65536 262144 1048576 3145728 8388608 67108864"
SIZES_FEW="16 1024 16384 65536 1048576 8388608"
threads_for() { # heap size -> threads (multiple of 32, at most 1M, live <= half the heap), 0: none
  local t=$(( $1 / 2 / $2 ))
  [ $t -gt 1048576 ] && t=1048576
  t=$(( t / 32 * 32 ))
  echo $t
}
group() { # name heap build(relinked|shim|stock) grow(fixed|grow) kind sizes...
  local name=$1 heap=$2 build=$3 grow=$4 kind=$5; shift 5
  local bad="" cells=0 s t out rc prog env=()
  for s in "$@"; do
    t=$(threads_for "$heap" "$s")
    [ "$t" -ge 32 ] || continue
    case $build in
      relinked) prog=("$B/gpu/dm_first") ;;
      shim) prog=("$B/gpu/dm_first_plain"); env=(LD_PRELOAD="$SHIM_SO") ;;
      stock) prog=("$B/gpu/dm_first_plain") ;;
    esac
    [ "$grow" = grow ] && [ "$build" = shim ] && env+=(DEVMALLOC_GROW=1)
    out=$(env "${env[@]}" "${prog[@]}" "$heap" "$s" "$t" "$kind" "$grow" 2>&1); rc=$?
    echo "cell $name size=$s threads=$t: $(tail -1 <<<"$out") rc=$rc"
    cells=$((cells + 1))
    [ $rc -eq 0 ] || bad="$bad ${s}B($(grep -o 'first=[0-9]* later=[0-9]*' <<<"$out" || echo "rc $rc"))"
  done
  local verdict=PASS
  [ -z "$bad" ] || verdict=FAIL
  [ "$build" = stock ] && verdict="stock (for comparison, not judged):"
  if [ -z "$bad" ]; then echo "$verdict first_$name: $cells cells, 0 NULL in every kernel"
  else echo "$verdict first_$name: NULL or error at$bad"; fi
}
G=$((1 << 30)); M=$((1 << 20))
for build in relinked shim; do
  for grow in fixed grow; do
    for kind in pair all; do
      group "4g_${build}_${grow}_${kind}" $((4 * G)) $build $grow $kind $SIZES_ALL
    done
    group "64m_${build}_${grow}_pair" $((64 * M)) $build $grow pair $SIZES_FEW
    group "16g_${build}_${grow}_all" $((16 * G)) $build $grow all $SIZES_FEW
  done
  group "64m_${build}_fixed_all" $((64 * M)) $build fixed all $SIZES_FEW
done
group "4g_stock_fixed_pair" $((4 * G)) stock fixed pair $SIZES_ALL

# Fill: one size at a time, one kernel, a fresh 1 GiB heap, to 90% of the
# heap or 3 points below the size's documented utilization (docs/benchmarks.md,
# the utilization rows: 16 B requests take 32-byte blocks), whichever is lower:
# 0 NULL. Relinked and under the shim.
declare -A UTIL=([16]=49 [64]=98 [256]=97 [1024]=93 [4096]=96 [65536]=99 [1048576]=99)
for build in relinked shim; do
  bad="" cells=0
  for sz in 16 64 256 1024 4096 65536 1048576; do
    pct=$(( UTIL[$sz] - 3 )); [ $pct -gt 90 ] && pct=90
    t=$(( G / 100 * pct / sz ))
    prog=("$B/gpu/dm_first"); env=()
    [ $build = shim ] && { prog=("$B/gpu/dm_first_plain"); env=(LD_PRELOAD="$SHIM_SO"); }
    out=$(env "${env[@]}" "${prog[@]}" "$G" "$sz" "$t" fill 2>&1); rc=$?
    echo "cell fill_${build} size=$sz threads=$t (${pct}% of 1 GiB): $(tail -1 <<<"$out") rc=$rc"
    cells=$((cells + 1))
    [ $rc -eq 0 ] || bad="$bad ${sz}B($(grep -o 'first=[0-9]*' <<<"$out" || echo "rc $rc"))"
  done
  if [ -z "$bad" ]; then echo "PASS first_fill_1g_${build}: $cells sizes filled to 90% (or their utilization less 3 points), 0 NULL"
  else echo "FAIL first_fill_1g_${build}: NULL or error at$bad"; fi
done
