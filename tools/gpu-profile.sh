#!/usr/bin/env bash
# tools/gpu-profile.sh — ncu profiles of the benchmark's kernels (on a GPU
# machine, after a build): per size, one steady-state launch of KERNEL
# (default k_free) of ab_devmalloc, its counters (time, instructions,
# atomics, memory) and the warp-state and source-counter sections; the
# reports go to $OUT/ncu-*.ncu-rep for `ncu -i` elsewhere.
#   PROFILE_SIZES="64 256 1K 16K"  PROFILE_KERNEL=k_free  PROFILE_BIN=ab_devmalloc
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-$(mktemp -d)}
k=${PROFILE_KERNEL:-k_free}
bin=build/bench/${PROFILE_BIN:-ab_devmalloc}
metrics=gpu__time_duration.sum,smsp__inst_executed.sum,smsp__thread_inst_executed.sum,\
l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum,l1tex__t_requests_pipe_lsu_mem_global_op_red.sum,\
l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,\
lts__t_requests_op_atom.sum,lts__t_requests_op_red.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,\
dram__bytes_read.sum,dram__bytes_write.sum,sm__warps_active.avg.pct_of_peak_sustained_active,\
smsp__membar_count.sum
for s in ${PROFILE_SIZES:-64 256 1K 16K}; do
  rep="$OUT/ncu-$k-$s"
  ncu -f -o "$rep" -k "regex:^$k\$" --launch-skip 1 --launch-count 1 \
      --section WarpStateStats --section SourceCounters --section SpeedOfLight --metrics "$metrics" \
      "$bin" --workloads sizes --sizes "$s" --reps 2 ${PROFILE_ARGS:-} >"$OUT/ncu-$k-$s.log" 2>&1 ||
    { echo "profile $s: ncu failed"; tail -5 "$OUT/ncu-$k-$s.log"; continue; }
  echo "== $k $s"
  ncu -i "$rep.ncu-rep" --page raw --csv --metrics "$metrics" 2>/dev/null | tail -2 | python3 -c '
import csv,sys
r=list(csv.reader(sys.stdin))
for h,v in zip(r[0],r[1]):
    if "__" in h: print("  %s = %s" % (h, v))'
  ncu -i "$rep.ncu-rep" --page details --section WarpStateStats --section SourceCounters 2>/dev/null |
    grep -vE "^ *-+ *$|^ *$" | sed -n '1,60p' | grep -iE "stall|warp cycles|per issued|Location|0x|lts|uncoalesced|Branch|Instructions" | head -40
done
