#!/bin/bash
# run_bounded.sh SECONDS WORKDIR SEEDS TARGET... — run each libFuzzer target
# for SECONDS over SEEDS plus its own corpus WORKDIR/<target> (kept between
# runs), artifacts to WORKDIR. Prints one line per target: executions,
# coverage (edges) and features; exits non-zero on the first crash, leak or
# timeout (the reproducer is named in the output).
set -u
secs=$1 work=$2 seeds=$3
shift 3
here=$(dirname "$0")
status=0
for bin in "$@"; do
  name=$(basename "$bin")
  mkdir -p "$work/$name"
  dict=""
  [ -f "$here/${name#fuzz_}.dict" ] && dict="-dict=$here/${name#fuzz_}.dict"
  log="$work/$name.log"
  if ! "$bin" -max_total_time="$secs" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
       -print_final_stats=1 -artifact_prefix="$work/$name-" $dict \
       "$work/$name" "$seeds" >"$log" 2>&1; then
    tail -40 "$log"
    echo "$name: FAILED (log $log)"
    status=1
    continue
  fi
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  last=$(grep -E '^#[0-9]+' "$log" | tail -1)
  cov=$(echo "$last" | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
  ft=$(echo "$last" | sed -n 's/.*ft: \([0-9]*\).*/\1/p')
  echo "$name: ${execs:-?} executions in ${secs} s, coverage ${cov:-?} edges, ${ft:-?} features"
done
exit $status
