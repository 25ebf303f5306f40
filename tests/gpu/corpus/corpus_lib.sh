# shellcheck shell=bash
# corpus_lib.sh — sourced by tests/gpu/cases/2*_corpus*.sh: paths, the list of
# programs, how each way runs, and the checks. Not a case.
#
# Ways:  stock     build/corpus/P.stock, no shim
#        relinked  build/corpus/P.relinked under the shim (LD_PRELOAD)
#        shim      build/corpus/P.stock under the shim (re-linked at load)
# Each run leaves $CT/P.WAY.{out,err,rc}. Environment:
#   CORPUS_PROGS="a b"   run only these programs
#   CORPUS_SMALL=1       reduced sizes (passed to the programs)
#   CORPUS_TIMEOUT=N     seconds per run (default 120)
B=${BUILD:-build}
C=$B/corpus
CT=${GPU_TMP:-$(mktemp -d)}/corpus
mkdir -p "$CT"
SHIM_SO=$(cd "$B" 2>/dev/null && pwd)/libdevmalloc_preload.so
# skiplist, cdp, plugin and cmake_rdc are -rdc=true (separate compilation) in
# their stock build too: way "shim" re-links them from their relocatable code.
ALL_PROGS="raytrace skiplist recurse polyobj scratch hashtable growarray exhaust streams cdp plugin thrust_cub modules cmake_rdc"
PROGS=${CORPUS_PROGS:-$ALL_PROGS}

# Lower bounds for the allocations devmalloc must count (stats "allocs"),
# full size and CORPUS_SMALL size. plugin: more than its library alone makes.
# modules: its NVRTC cubin runs on the stock allocator and is not counted.
declare -A MIN_FULL=([raytrace]=2000 [skiplist]=800000 [recurse]=1000000 [polyobj]=500000
  [scratch]=1000000 [hashtable]=1000000 [growarray]=300000 [exhaust]=10 [streams]=5000000
  [cdp]=262144 [plugin]=800000 [thrust_cub]=50000 [modules]=400000 [cmake_rdc]=300000)
declare -A MIN_SMALL=([raytrace]=130 [skiplist]=90000 [recurse]=60000 [polyobj]=30000
  [scratch]=60000 [hashtable]=80000 [growarray]=30000 [exhaust]=10 [streams]=80000
  [cdp]=4096 [plugin]=50000 [thrust_cub]=2000 [modules]=25000 [cmake_rdc]=30000)

min_allocs() {
  if [ -n "${CORPUS_SMALL:-}" ] && [ "${CORPUS_SMALL}" != 0 ]; then echo "${MIN_SMALL[$1]:-1}"
  else echo "${MIN_FULL[$1]:-1}"; fi
}

# run_way P WAY [extra env...]: runs it, prints a log block, leaves the files.
run_way() {
  local p=$1 w=$2; shift 2
  local bin=$C/$p.stock pre=()
  [ "$w" = relinked ] && bin=$C/$p.relinked
  if [ "$w" != stock ]; then pre=(LD_PRELOAD="$SHIM_SO" DEVMALLOC_STATS=1 DEVMALLOC_VERBOSE=1); fi
  local t0; t0=$(date +%s%N)
  env -u LD_PRELOAD "${pre[@]}" "$@" timeout "${CORPUS_TIMEOUT:-120}" "$bin" \
    >"$CT/$p.$w.out" 2>"$CT/$p.$w.err"
  echo $? >"$CT/$p.$w.rc"
  echo "---- corpus/$p/$w: rc $(cat "$CT/$p.$w.rc"), $(( ($(date +%s%N) - t0) / 1000000 )) ms"
  sed 's/^/  out| /' "$CT/$p.$w.out" | head -20
  sed 's/^/  err| /' "$CT/$p.$w.err" | head -60
}

digest_of() { grep "^digest " "$CT/$1.out" 2>/dev/null | head -1; }
# Sum of "allocs N" over the shim's per-context stats lines.
stats_allocs() {
  grep -o "^devmalloc: stats: context .* allocs [0-9]*" "$CT/$1.err" | awk '{s+=$NF} END {print s+0}'
}
stats_frees() {
  grep -o "^devmalloc: stats: context .* frees [0-9]*" "$CT/$1.err" | awk '{s+=$NF} END {print s+0}'
}
# Why a run failed, in one line: the program's own last words, else the shim's.
why() {
  local l
  l=$(grep -v "^devmalloc" "$CT/$1.err" | grep -v "^\s*$" | tail -1)
  [ -z "$l" ] && l=$(grep "^devmalloc" "$CT/$1.err" | grep -iE "error|fail|warn" | tail -1)
  echo "${l:0:200}"
}

# check_way P WAY: one PASS/FAIL line.
check_way() {
  local p=$1 w=$2 r=$1.$2
  local rc; rc=$(cat "$CT/$r.rc")
  local name="corpus/$p/$w"
  if [ ! -x "$C/$p.stock" ] || { [ "$w" = relinked ] && [ ! -x "$C/$p.relinked" ]; }; then
    echo "FAIL $name: not built (make gpu-build)"; return; fi
  if [ "$w" != stock ] && [ ! -f "$SHIM_SO" ]; then echo "FAIL $name: $SHIM_SO not built"; return; fi
  if [ "$rc" = 124 ]; then echo "FAIL $name: timed out after ${CORPUS_TIMEOUT:-120} s"; return; fi
  if [ "$rc" != 0 ]; then echo "FAIL $name: exit status $rc: $(why "$r")"; return; fi
  if [ -z "$(digest_of "$r")" ]; then echo "FAIL $name: no digest line on stdout"; return; fi
  if [ "$w" = stock ]; then echo "PASS $name: $(digest_of "$r" | cut -d' ' -f3-)"; return; fi
  local ref=$p.stock
  if [ "$(cat "$CT/$ref.rc")" != 0 ] || [ -z "$(digest_of "$ref")" ]; then
    echo "FAIL $name: the stock run gave no result to compare with"; return; fi
  # the device library says so with a device printf (stdout)
  if grep -q "no heap bound" "$CT/$r.out" "$CT/$r.err"; then echo "FAIL $name: the device library saw no heap"; return; fi
  if ! diff <(sort "$CT/$ref.out") <(sort "$CT/$r.out") >"$CT/$r.diff"; then
    echo "FAIL $name: output differs from stock: $(grep '^[<>]' "$CT/$r.diff" | head -2 | tr '\n' ' ')"; return; fi
  local a min; a=$(stats_allocs "$r"); min=$(min_allocs "$p")
  if [ "$a" -lt "$min" ]; then
    local nr; nr=$(grep -o "\(not re-linked\|cannot be re-linked\).*" "$CT/$r.err" | head -1)
    echo "FAIL $name: identical output, but devmalloc counted $a allocations (want >= $min)${nr:+; $nr}"
    return
  fi
  echo "PASS $name: identical output, $a allocations and $(stats_frees "$r") frees served by devmalloc"
}
