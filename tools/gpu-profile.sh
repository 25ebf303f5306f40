#!/usr/bin/env bash
# tools/gpu-profile.sh — ncu profiles of the benchmark's kernels (on a GPU
# machine, after a build): per size, one steady-state launch of KERNEL
# (default k_free) of ab_devmalloc, its counters (time, instructions,
# atomics, memory) and the warp-state and source-counter sections; the
# reports go to $OUT/ncu-*.ncu-rep for `ncu -i` elsewhere.
# PROFILE_SIZES may name `mixed` (the mixed workload, 16..4096 B) beside sizes.
#   PROFILE_SIZES="64 256 1K 16K"  PROFILE_KERNEL=k_free  PROFILE_BIN=build/bench/ab_devmalloc
set -u
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:-$(mktemp -d)}
k=${PROFILE_KERNEL:-k_free}
bin=${PROFILE_BIN:-build/bench/ab_devmalloc}
metrics=gpu__time_duration.sum,smsp__inst_executed.sum,smsp__thread_inst_executed.sum,\
l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum,l1tex__t_requests_pipe_lsu_mem_global_op_red.sum,\
l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,\
lts__t_requests_op_atom.sum,lts__t_requests_op_red.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,\
dram__bytes_read.sum,dram__bytes_write.sum,sm__warps_active.avg.pct_of_peak_sustained_active,\
smsp__membar_count.sum,launch__grid_size,launch__block_size
# The size's k_free launches: its pilot (at most 16K threads, ab_workloads.cuh)
# and one per repetition; the third launch is always a full repetition (the
# grid size printed with the counters says which launch it was).
for s in ${PROFILE_SIZES:-64 256 1K 16K}; do
  rep="$OUT/ncu-$k-$s"
  if [ "$s" = mixed ]; then wl=(--workloads mixed); else wl=(--workloads sizes --sizes "$s"); fi
  # shellcheck disable=SC2086 # PROFILE_ARGS: several arguments
  ncu -f -o "$rep" -k "regex:^$k\$" --launch-skip 2 --launch-count 1 \
      --section WarpStateStats --section SourceCounters --section SpeedOfLight --metrics "$metrics" \
      "$bin" "${wl[@]}" --reps 3 ${PROFILE_ARGS:-} >"$OUT/ncu-$k-$s.log" 2>&1 ||
    { echo "profile $s: ncu failed"; tail -5 "$OUT/ncu-$k-$s.log"; continue; }
  echo "== $k $s"
  ncu -i "$rep.ncu-rep" --page raw --csv --print-units base --metrics "$metrics" 2>/dev/null | python3 -c '
import csv,sys
r=list(csv.reader(sys.stdin))
for h,v in zip(r[0],r[-1]):
    if "__" in h: print("  %s = %s" % (h, v))'
  ncu -i "$rep.ncu-rep" --page details --section WarpStateStats 2>/dev/null | grep -E "stall|Warp Cycles" | head -6
  # The instructions with the most stall samples (SASS, every function of the kernel).
  ncu -i "$rep.ncu-rep" --page source --csv --print-source sass 2>/dev/null >"$rep.source.csv"
  python3 - "$rep.source.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], errors="replace")))
hdr = next((r for r in rows if any("Sampling (All" in c for c in r)), None)
if not hdr:
    print("  (no source page)"); sys.exit()
si = next(i for i, c in enumerate(hdr) if "Sampling (All" in c)
ie = next((i for i, c in enumerate(hdr) if c.startswith("Instructions Executed")), None)
src = next((i for i, c in enumerate(hdr) if c == "Source"), 1)
data = [r for r in rows[rows.index(hdr) + 1:] if len(r) > si and r[si].replace(",", "").isdigit()]
tot = sum(int(r[si].replace(",", "")) for r in data) or 1
ins = sum(int(r[ie].replace(",", "")) for r in data if ie is not None and r[ie].replace(",", "").isdigit())
print("  samples %d, warp instructions executed %d" % (tot, ins))
for r in sorted(data, key=lambda r: -int(r[si].replace(",", "")))[:25]:
    print("  %5.1f%%  %s" % (100.0 * int(r[si].replace(",", "")) / tot, r[src][:90]))
PY
done
