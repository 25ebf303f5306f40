#!/usr/bin/env bash
# run_test.sh PROGRAM LOG — run one host test program for make check: its
# output to LOG, one line saying how it went, the output in full (its last
# 200 lines) when it failed. The exit status goes to LOG.rc; this script
# exits 0 so that the other tests still run.
# run_test.sh --summary LOG... — the summary line of those tests; exits 1
# when one failed or did not run.
set -u
if [ "$1" = --summary ]; then
  shift
  pass=0 fail=0 failed=
  for log in "$@"; do
    rc=$(cat "$log.rc" 2>/dev/null || echo missing)
    if [ "$rc" = 0 ]; then pass=$((pass + 1))
    else fail=$((fail + 1)) failed="$failed $(basename "$log" .log)"; fi
  done
  [ $fail -eq 0 ] || echo "failed:$failed (logs in $(dirname "$1")/)"
  echo "host tests: $pass passed, $fail failed"
  [ $fail -eq 0 ]
  exit
fi
prog=$1 log=$2 name=$(basename "$2" .log)
rm -f "$log.rc"
start=$(date +%s)
"$prog" >"$log" 2>&1
rc=$?
secs=$(( $(date +%s) - start ))
echo $rc >"$log.rc"
if [ $rc -eq 0 ]; then
  printf 'ok    %-32s %4d s\n' "$name" "$secs"
else
  lines=$(wc -l <"$log")
  [ "$lines" -le 200 ] || echo "---- $name: last 200 of $lines lines (all in $log)"
  tail -n 200 "$log"
  printf 'FAIL  %-32s %4d s  (exit %d, log %s)\n' "$name" "$secs" "$rc" "$log"
fi
exit 0
