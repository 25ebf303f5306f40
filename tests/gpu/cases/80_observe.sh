#!/usr/bin/env bash
# 80_observe — stats records, the heap trace and NVTX on the GPU.
#   80_observe_trace  bench/run.sh --trace --nvtx on the churn workload: the
#                     trace has create/sync/exit samples naming k_churn, its last sample
#                     agrees with the JSON stats record, `devmalloc report`
#                     draws the plots (into $OUT/observe/ for docs/benchmarks.md)
#   80_observe_cost   churn time under the shim without the trace, with it, and
#                     with it and a 5 ms sampler thread (fails above +20%)
#   80_observe_lost   a program that faults (illegal address) after 1024
#                     mallocs: the JSON record says context_lost with the last
#                     known counters, the text line says so too
#   80_observe_nvtx   under nsys (when installed): the devmalloc NVTX domain's
#                     heap-creation range is in the report
set -u
shim=$BUILD/libdevmalloc_preload.so
[[ $shim == /* ]] || shim=$PWD/$shim # BUILD may be relative or absolute
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

# ---- cost: churn under the shim, trace off / on / on with the sampler thread ----
n=80_observe_cost
ms() { awk -F, '$2=="churn"{print $6}' "$1"; }
churn() {  # churn CSV [ENV...]
  local csv=$1; shift
  env LD_PRELOAD="$shim" "$@" "$ab" --shim-heap --workloads churn --threads 256K --reps 5 \
    >"$csv" 2>>"$d/cost.err"
}
churn "$d/cost-off.csv"
churn "$d/cost-on.csv" DEVMALLOC_TRACE="$d/cost-trace.jsonl"
churn "$d/cost-timer.csv" DEVMALLOC_TRACE="$d/cost-timer.jsonl" DEVMALLOC_TRACE_PERIOD=5
off=$(ms "$d/cost-off.csv"); on=$(ms "$d/cost-on.csv"); tm=$(ms "$d/cost-timer.csv")
if [ -z "$off" ] || [ -z "$on" ] || [ -z "$tm" ]; then
  echo "FAIL $n: no churn rows"; tail -5 "$d/cost.err"
else
  pct() { awk -v a="$off" -v b="$1" 'BEGIN{printf "%.1f", (b-a)/a*100}'; }
  p1=$(pct "$on"); p2=$(pct "$tm")
  s1=$(grep -c '"record":"sample"' "$d/cost-trace.jsonl"); s2=$(grep -c '"record":"sample"' "$d/cost-timer.jsonl")
  msg="churn $off ms without trace, $on ms with ($p1%, $s1 samples), $tm ms with a 5 ms sampler thread ($p2%, $s2 samples)"
  if awk -v a="$p1" -v b="$p2" 'BEGIN{exit !(a > 20 || b > 20)}'; then echo "FAIL $n: $msg"
  else echo "PASS $n: $msg"; fi
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
  if [ ! -s "$d/nvtx.nsys-rep" ]; then
    echo "SKIP $n: nsys made no report here ($(tail -1 "$d/nvtx.log"))"
  elif nsys stats --report nvtx_sum "$d/nvtx.nsys-rep" 2>/dev/null | grep -q "create heap"; then
    echo "PASS $n: heap creation range in $d/nvtx.nsys-rep"
  else
    echo "FAIL $n: no devmalloc range in the nsys report"; tail -5 "$d/nvtx.log"
  fi
fi
