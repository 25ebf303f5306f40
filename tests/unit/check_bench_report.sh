#!/usr/bin/env bash
# check_bench_report.sh — bench/report.py against a made-up run: on an H200 it
# compares with bench/reference_h200.csv and says met/missed per row; on
# another GPU it says the reference does not apply.
set -u
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
h="variant,workload,size,threads,kernel,ms,mops,failures,note"
{ echo "$h"; echo "stock,sizes,16,1048576,alloc,300,3.5,0,"; echo "stock,sizes,64,1048576,free,100,8.0,0,"
  echo "stock,util,16,1,fill-until-NULL,1,0,0,util 17.0%"; } >"$d/stock.csv"
{ echo "$h"; echo "devmalloc,sizes,16,1048576,alloc,0.1,9000,0,"; echo "devmalloc,sizes,64,1048576,free,0.2,5000,0,"
  echo "devmalloc,util,16,1,fill-until-NULL,1,0,0,util 99.0%"; } >"$d/devmalloc.csv"
fail=0
out=$(MPLBACKEND=Agg python3 bench/report.py "$d" "NVIDIA H200, 580.00" 2>&1)
grep -Eq "sizes 16 B alloc +9000.00 +4791.00 .* met" <<<"$out" || { echo "FAIL: 16 B alloc not met"; fail=1; }
grep -Eq "sizes 64 B free +5000.00 +22444.00 .* missed" <<<"$out" || { echo "FAIL: 64 B free not missed"; fail=1; }
grep -Eq "util 16 B fill-until-NULL +99.00 .* met" <<<"$out" || { echo "FAIL: utilization row"; fail=1; }
grep -q "targets: 2 met, 1 missed" <<<"$out" || { echo "FAIL: target count"; fail=1; }
grep -q "below 10x stock" <<<"$out" && { echo "FAIL: a row above 10x stock reported below"; fail=1; }
out=$(MPLBACKEND=Agg python3 bench/report.py "$d" "NVIDIA H100 80GB HBM3" 2>&1)
grep -q "do not apply" <<<"$out" || { echo "FAIL: H100 run compared with the H200 reference"; fail=1; }
[ $fail -eq 0 ] && echo "check_bench_report: all passed"
[ $fail -eq 0 ]
