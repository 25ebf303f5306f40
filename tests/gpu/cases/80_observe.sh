#!/usr/bin/env bash
# 80_observe — stats records, the heap trace and NVTX on the GPU.
#   80_observe_trace  bench/run.sh --trace --nvtx on the churn workload: the
#                     trace has create/sync/exit samples naming k_churn, its last sample
#                     agrees with the JSON stats record, `devmalloc report`
#                     draws the plots (into $OUT/observe/ for docs/benchmarks.md)
#   80_observe_cost   churn time under the shim without and with the trace
#   80_observe_lost   a program that faults (illegal address) after 1024
#                     mallocs: the JSON record says context_lost with the last
#                     known counters, the text line says so too
#   80_observe_nvtx   under nsys (when installed): the devmalloc NVTX domain's
#                     heap-creation range is in the report
set -u
shim=$PWD/$BUILD/libdevmalloc_preload.so
ab=$BUILD/bench/ab_devmalloc
d=${OUT:-$GPU_TMP}/observe
mkdir -p "$d"
for f in "$shim" "$ab" "$BUILD/bench/ab_stock" "$BUILD/gpu/observe/obs_fault"; do
  [ -e "$f" ] || { echo "FAIL 80_observe: $f not built (make gpu-build)"; exit 0; }
done
jq_py() { python3 -c "import json,sys; $1" "${@:2}"; }

# ---- trace + NVTX + JSON stats through the benchmark ----
n=80_observe_trace
rm -f "$d/churn-trace.jsonl"
DEVMALLOC_STATS=json DEVMALLOC_STATS_FILE=$d/churn-stats.jsonl \
  bash bench/run.sh --out "$d/bench" --workloads init,churn,noutil --threads 256K --reps 3 \
  --trace "$d/churn-trace.jsonl" --nvtx >"$d/bench.log" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
  echo "FAIL $n: bench/run.sh exit $rc"; tail -5 "$d/bench.log"
elif ! out=$(jq_py '
recs = [json.loads(l) for l in open(sys.argv[1])]
assert recs[0]["record"] == "trace", "no trace header"
s = [r for r in recs if r["record"] == "sample"]
assert len(s) >= 5, "only %d samples" % len(s)
ks = {r["kernel"] for r in s if r["kernel"]}
assert any("k_churn" in k for k in ks), "no sample names k_churn: %s" % ks
ev = {r["event"] for r in s}
assert {"create", "sync", "exit"} <= ev, "events: %s" % ev
last = s[-1]
st = [json.loads(l) for l in open(sys.argv[2])]
assert len(st) == 1 and st[0]["status"] == "live", "stats: %s" % st
assert st[0]["allocs"] == last["allocs"] > 0, "stats allocs %d, trace %d" % (st[0]["allocs"], last["allocs"])
print("%d samples, %d allocations, %d failures, kernels %s"
      % (len(s), last["allocs"], last["failures"], ",".join(sorted(ks))))
' "$d/churn-trace.jsonl" "$d/churn-stats.jsonl" 2>&1); then
  echo "FAIL $n: $out"
elif [ ! -s "$d/bench/trace-timeline.png" ] || [ ! -s "$d/bench/trace-classes.png" ]; then
  echo "FAIL $n: no plots in $d/bench"; tail -5 "$d/bench.log"
else
  echo "PASS $n: $out; plots $d/bench/trace-timeline.png, trace-classes.png"
fi

# ---- cost: churn under the shim, trace off / on (default interval) ----
n=80_observe_cost
ms() { awk -F, '$2=="churn"{print $6}' "$1"; }
LD_PRELOAD=$shim "$ab" --shim-heap --workloads churn --threads 256K --reps 5 >"$d/cost-off.csv" 2>&1
LD_PRELOAD=$shim DEVMALLOC_TRACE=$d/cost-trace.jsonl "$ab" --shim-heap --workloads churn \
  --threads 256K --reps 5 >"$d/cost-on.csv" 2>&1
off=$(ms "$d/cost-off.csv"); on=$(ms "$d/cost-on.csv")
if [ -z "$off" ] || [ -z "$on" ]; then
  echo "FAIL $n: no churn rows"; cat "$d/cost-off.csv" "$d/cost-on.csv" | tail -5
else
  pct=$(awk -v a="$off" -v b="$on" 'BEGIN{printf "%.1f", (b-a)/a*100}')
  samples=$(grep -c '"record":"sample"' "$d/cost-trace.jsonl")
  if awk -v p="$pct" 'BEGIN{exit !(p > 20)}'; then
    echo "FAIL $n: churn $off ms without trace, $on ms with ($pct%, $samples samples)"
  else
    echo "PASS $n: churn $off ms without trace, $on ms with ($pct%, $samples samples)"
  fi
fi

# ---- a device fault: the stats say context_lost, with the last known counters ----
n=80_observe_lost
LD_PRELOAD=$shim DEVMALLOC_STATS=json DEVMALLOC_STATS_FILE=$d/lost.jsonl DEVMALLOC_TRACE_INTERVAL=0 \
  "$BUILD/gpu/observe/obs_fault" >"$d/lost.log" 2>&1
rc=$?
LD_PRELOAD=$shim DEVMALLOC_STATS=1 DEVMALLOC_TRACE_INTERVAL=0 \
  "$BUILD/gpu/observe/obs_fault" >"$d/lost-text.log" 2>&1
if [ $rc -ne 0 ]; then
  echo "FAIL $n: obs_fault exit $rc (no illegal address seen)"; cat "$d/lost.log"
elif ! out=$(jq_py '
st = [json.loads(l) for l in open(sys.argv[1])]
assert len(st) == 1, "%d records" % len(st)
r = st[0]
assert r["status"] == "context_lost" and r["counters"] == "last_known" and r["allocs"] == 1024, r
print("status %s, counters %s, allocs %d" % (r["status"], r["counters"], r["allocs"]))
' "$d/lost.jsonl" 2>&1); then
  echo "FAIL $n: $out"
elif ! grep -q "context lost, last known counters): heap .* allocs 1024" "$d/lost-text.log"; then
  echo "FAIL $n: text summary:"; grep devmalloc "$d/lost-text.log"
else
  echo "PASS $n: $out"
fi

# ---- NVTX under Nsight Systems ----
n=80_observe_nvtx
if ! command -v nsys >/dev/null 2>&1; then
  echo "SKIP $n: nsys not installed"
else
  rm -f "$d/nvtx.nsys-rep" "$d/nvtx.sqlite"
  DEVMALLOC_NVTX=1 nsys profile --trace=cuda,nvtx -o "$d/nvtx" --force-overwrite true \
    env LD_PRELOAD="$shim" "$ab" --shim-heap --workloads churn --threads 64K --reps 1 \
    >"$d/nvtx.log" 2>&1
  if nsys stats --report nvtx_sum "$d/nvtx.nsys-rep" 2>/dev/null | grep -q "create heap"; then
    echo "PASS $n: heap creation range in $d/nvtx.nsys-rep"
  else
    echo "FAIL $n: no devmalloc range in the nsys report"; tail -5 "$d/nvtx.log"
  fi
fi
