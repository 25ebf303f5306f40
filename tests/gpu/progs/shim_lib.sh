# shim_lib.sh — sourced by tests/gpu/cases/50_shim_*.sh: paths and checks.
#   run_shim NAME PROG [ARGS]   run under the shim with DEVMALLOC_STATS=1
#   run_plain NAME PROG [ARGS]  run without the shim
#   check_served NAME OUT RC    PASS/FAIL: exit 0, and the stats show allocations
#   check_unbound NAME OUT RC   PASS/FAIL: exit 2 (NULL returned) and the
#                               device library's "no heap bound" line
B=${BUILD:-build}
SHIM_SO=$(cd "$(dirname "$B/libdevmalloc_preload.so")" 2>/dev/null && pwd)/libdevmalloc_preload.so
P=$B/gpu/shim
T=${GPU_TMP:-/tmp}

run_shim() {  # sets OUT, RC
  local name=$1; shift
  OUT=$(env LD_PRELOAD="$SHIM_SO" DEVMALLOC_STATS=1 DEVMALLOC_VERBOSE=1 "$@" 2>&1); RC=$?
  printf '%s\n' "---- $name (shim)" "$OUT"
}
run_plain() {
  local name=$1; shift
  OUT=$(env -u LD_PRELOAD "$@" 2>&1); RC=$?
  printf '%s\n' "---- $name (no shim)" "$OUT"
}
# Sum of "allocs N" over the stats lines.
stats_allocs() { grep -o "^devmalloc: stats: context .* allocs [0-9]*" <<<"$1" | awk '{s+=$NF} END {print s+0}'; }
stats_contexts() { grep -c "^devmalloc: stats: context " <<<"$1"; }

check_served() {  # name out rc [min_allocs] [min_contexts]
  local name=$1 out=$2 rc=$3 min=${4:-1} minctx=${5:-1}
  local a c; a=$(stats_allocs "$out"); c=$(stats_contexts "$out")
  if [ ! -f "$SHIM_SO" ]; then echo "FAIL $name: $SHIM_SO not built"; return; fi
  if [ "$rc" -ne 0 ]; then echo "FAIL $name: exit status $rc (2: device malloc returned NULL)"
  elif grep -q "no heap bound" <<<"$out"; then echo "FAIL $name: the device library saw no heap"
  elif [ "$a" -lt "$min" ]; then echo "FAIL $name: stats show $a allocations (want >= $min)"
  elif [ "$c" -lt "$minctx" ]; then echo "FAIL $name: stats for $c contexts (want >= $minctx)"
  else echo "PASS $name: $a allocations served by devmalloc in $c context(s)"; fi
}
check_unbound() {
  local name=$1 out=$2 rc=$3
  if [ "$rc" -eq 2 ] && grep -q "devmalloc: no heap bound" <<<"$out"; then
    echo "PASS $name: NULL returned and 'no heap bound' reported"
  else echo "FAIL $name: exit $rc, 'no heap bound' line $(grep -c 'no heap bound' <<<"$out") times (want exit 2 and the line)"; fi
}
