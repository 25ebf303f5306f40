#!/usr/bin/env bash
# 71_pool_bench — the pool benchmark runs (quick settings) and writes its CSV.
# The full run is: build/pool/pool_bench OUTDIR ; python3 bench/plot_pool.py OUTDIR
set -u
n=71_pool_bench
b=$BUILD/pool/pool_bench
[ -x "$b" ] || { echo "FAIL $n: $b not built (make gpu-build)"; exit 0; }
d=${OUT:-$GPU_TMP}/pool_bench_quick
"$b" "$d" --quick; rc=$?
[ $rc -eq 0 ] || { echo "FAIL $n: exit status $rc"; exit 0; }
for f in pool_sizes.csv pool_live.csv; do
  [ "$(wc -l <"$d/$f")" -gt 10 ] || { echo "FAIL $n: $d/$f too short"; exit 0; }
done
if grep -q '^pool,[0-9]*,pair,0,' "$d/pool_sizes.csv"; then echo "FAIL $n: pool allocations failed"; exit 0; fi
if python3 -c 'import matplotlib' 2>/dev/null; then
  python3 bench/plot_pool.py "$d" || { echo "FAIL $n: plot script failed"; exit 0; }
fi
echo "PASS $n: $(grep -c . "$d/pool_sizes.csv") size rows, $(grep -c . "$d/pool_live.csv") live rows in $d"
