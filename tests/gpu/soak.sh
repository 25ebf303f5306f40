#!/usr/bin/env bash
# tests/gpu/soak.sh — load held for minutes (`make soak`; needs a GPU):
# tests/gpu/progs/dm_soak.cu, the plain build unmodified under the shim with a
# heap that grows (DEVMALLOC_GROW=1), then the relinked build (its heap's
# counters and invariants checked at every period, trimmed after each check).
#   SOAK_SECONDS  length of each run (default 600)   SOAK_PERIOD  seconds between checks (5)
#   SOAK_PARALLEL=1  run the two at once (they share the GPU) instead of one after the other
# The shim's stats at exit must count what the program counted. Last line:
# "soak: passed" or "soak: FAILED (...)".
set -u
cd "$(dirname "$0")/../.."
. tools/need-gpu.sh
need_gpu "the soak (make soak)"
B=${BUILD:-build}
case $B in /*) ;; *) B=$PWD/$B ;; esac
secs=${SOAK_SECONDS:-600} period=${SOAK_PERIOD:-5} fail=""
for f in "$B/gpu/dm_soak" "$B/gpu/dm_soak_plain" "$B/libdevmalloc_preload.so"; do
  [ -e "$f" ] || { echo "soak: FAILED ($f missing: make gpu-build)"; exit 1; }
done
log=${OUT:-$(mktemp -d)}/soak-shim.log
shim_run() {
  env LD_PRELOAD="$B/libdevmalloc_preload.so" DEVMALLOC_GROW=1 DEVMALLOC_STATS=1 \
    "$B/gpu/dm_soak_plain" "$secs" "$period" >"$log" 2>&1 || echo "shim run (exit $?)"
}
relinked_run() { "$B/gpu/dm_soak" "$secs" "$period" >"${log%shim.log}relinked.log" 2>&1 || echo "relinked run (exit $?)"; }
if [ "${SOAK_PARALLEL:-0}" = 1 ]; then # both at once, sharing the GPU: ten minutes of each in ten
  shim_run >"$log.rc" &
  relinked_run >"$log.rrc"
  wait
  fail="$(cat "$log.rc" "$log.rrc" | tr '\n' ' ')"
  rm -f "$log.rc" "$log.rrc"
  how="at once"
else
  fail="$(shim_run)"
  fail="$fail $(relinked_run)"
  how="one after the other"
fi
grep -E "^(check|soak)" "$log" | tail -3
sum=$(grep "^soak:" "$log")
a=$(sed -n 's/.* \([0-9]*\) allocations.*/\1/p' <<<"$sum"); f=$(sed -n 's/.* \([0-9]*\) frees.*/\1/p' <<<"$sum")
stats=$(grep -o "allocs [0-9]*, frees [0-9]*, failures [0-9]*" "$log" | head -1)
[ -n "$a" ] && [ "$stats" = "allocs $a, frees $f, failures 0" ] ||
  fail="$fail shim stats ($stats) differ from the program's ($a allocations, $f frees)"
grep -E "^(check|soak)" "${log%shim.log}relinked.log" | tail -3
read -r fail <<<"$fail" || true # without the spaces around
if [ -z "$fail" ]; then echo "soak: passed ($secs s each, shim and relinked, $how)"; else echo "soak: FAILED ($fail)"; exit 1; fi
