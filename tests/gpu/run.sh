#!/usr/bin/env bash
# tests/gpu/run.sh — the whole GPU suite in one call (needs a GPU).
#
# Runs every tests/gpu/cases/*.sh in name order. A case prints lines
#   PASS <name>            PASS <name>: detail
#   FAIL <name>: why       SKIP <name>: why
# and may print anything else (kept in the log). Cases find the built programs
# under $BUILD (default build/) and write scratch files under $GPU_TMP.
# The last line printed is "N passed, M failed" (skips are listed, not counted).
# Each case runs under a limit of 300 s, or what its file asks for in a line
# "# case-timeout: SECONDS"; GPU_CASE_TIMEOUT=S sets every case's.
# Logs go to $OUT/gpu-suite.log when $OUT is set. Without a GPU it prints one
# line saying so and exits 2.
set -u
cd "$(dirname "$0")/../.."
. tools/need-gpu.sh
need_gpu "the GPU suite (make gpu-check)"
export BUILD=${BUILD:-build}
export GPU_TMP=${GPU_TMP:-$(mktemp -d)}
log=${OUT:-$GPU_TMP}/gpu-suite.log
: >"$log"
only=${GPU_CASES:-}
for c in tests/gpu/cases/*.sh; do
  n=$(basename "$c" .sh)
  if [ -n "$only" ] && ! echo " $only " | grep -q " $n "; then continue; fi
  echo "== case $n" | tee -a "$log"
  start=$(date +%s%N)
  # a case may ask for more than the default 300 s: a line "# case-timeout: SECONDS"
  ct=$(sed -n 's/^# case-timeout: \([0-9][0-9]*\)$/\1/p' "$c" | head -1)
  timeout "${GPU_CASE_TIMEOUT:-${ct:-300}}" bash "$c" >>"$log" 2>&1
  rc=$?
  [ $rc -eq 124 ] && echo "FAIL $n: timed out" >>"$log"
  [ $rc -ne 0 ] && ! grep -q "^FAIL" <(sed -n "/^== case $n\$/,\$p" "$log") && echo "FAIL $n: exit status $rc" >>"$log"
  echo "   $(( ($(date +%s%N) - start) / 1000000 )) ms" | tee -a "$log"
done
echo "---- summary"
grep -E "^(PASS|FAIL|SKIP) " "$log"
p=$(grep -c "^PASS " "$log"); f=$(grep -c "^FAIL " "$log")
echo "$p passed, $f failed"
[ "$f" -eq 0 ]
