#!/usr/bin/env bash
# check_interposers.sh — the shim preloaded beside other interposers: the
# ASan, TSan and UBSan runtimes, a lazy malloc wrapper (both orders),
# jemalloc and tcmalloc. Under each: /bin/echo, ls, python3 -c, and the probe
# (dlsym paths of a CUDA program against the toolkit's stub libcuda); an
# MPI-style launcher starting four probes at once (jemalloc and tcmalloc are
# optional: skipped, saying so, when not installed). Also:
# the shim alone maps neither libelf nor zlib into a process, and costs
# little on dlsym(RTLD_NEXT) of non-driver names.
#   check_interposers.sh SHIM LAZY_MALLOC_SO PROBE STUB_LIBCUDA
set -u
shim=$1 lazy=$2 probe=$3 stub=$4 fails=0 runs=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export ASAN_OPTIONS=detect_leaks=0 TSAN_OPTIONS=report_bugs=0
runtime() { local f; f=$(gcc -print-file-name="$1" 2>/dev/null); [ -f "$f" ] && echo "$f"; }
syslib() {  # first existing path of a Debian multiarch library
  local d; for d in /usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu /usr/lib64 /usr/lib; do
    [ -f "$d/$1" ] && { echo "$d/$1"; return; }; done
}
fail() { echo "FAIL: $*"; fails=$((fails+1)); }
# one NAME PRELOAD WANT CMD...: CMD under PRELOAD exits 0 and its first
# line starts with WANT. A command that fails the same way under the
# other interposer alone (without the shim) is noted and not counted.
one() {
  local name=$1 pre=$2 want=$3 out alone; shift 3
  out=$(LD_PRELOAD=$pre "$@" 2>&1) && [[ "$(head -n1 <<<"$out")" == "$want"* ]] && return
  alone=$(sed "s|$shim||; s|^:||; s|:$||" <<<"$pre")
  if [ "$1" != "$probe" ] && [ "$alone" != "$pre" ] &&
     ! { o=$(LD_PRELOAD=$alone "$@" 2>&1) && [[ "$(head -n1 <<<"$o")" == "$want"* ]]; }; then
    echo "note: $name: $1 fails without the shim too: not counted"; return
  fi
  fail "$name: $*: $(head -c 300 <<<"$out" | tr '\n' ' ')"
}
run() {
  local name=$1 pre=$2
  runs=$((runs+1))
  one "$name" "$pre" devmalloc-echo /bin/echo devmalloc-echo
  one "$name" "$pre" / ls -d /
  one "$name" "$pre" "[42]" python3 -c 'import json; print(json.dumps([6*7]))'
  one "$name" "$pre" "probe: ok" "$probe" "$stub"
}

run "shim alone" "$shim"
asan=$(runtime libasan.so); tsan=$(runtime libtsan.so); ubsan=$(runtime libubsan.so)
for v in asan tsan ubsan; do [ -n "${!v}" ] || fail "$v runtime not found (gcc -print-file-name)"; done
[ -n "$asan" ] && run "ASan runtime + shim" "$asan:$shim"
[ -n "$tsan" ] && run "TSan runtime + shim" "$tsan:$shim"
[ -n "$ubsan" ] && { run "UBSan runtime + shim" "$ubsan:$shim"; run "shim + UBSan runtime" "$shim:$ubsan"; }
run "lazy malloc wrapper + shim" "$lazy:$shim"
run "shim + lazy malloc wrapper" "$shim:$lazy"
out=$(LAZY_MALLOC_REPORT=1 LD_PRELOAD=$shim:$lazy python3 -c 'x=[bytes(64) for _ in range(1000)]' 2>&1)
grep -qE '^lazy_malloc: [1-9][0-9]* calls' <<<"$out" || fail "lazy malloc wrapper not in use: '$out'"
je=$(syslib libjemalloc.so.2); tc=$(syslib libtcmalloc_minimal.so.4)
if [ -n "$je" ]; then run "jemalloc + shim" "$je:$shim"; run "shim + jemalloc" "$shim:$je"
else echo "skip jemalloc + shim: libjemalloc.so.2 not installed (optional; tools/setup-deps.sh installs libjemalloc2)"; fi
if [ -n "$tc" ]; then run "tcmalloc + shim" "$tc:$shim"; run "shim + tcmalloc" "$shim:$tc"
else echo "skip tcmalloc + shim: libtcmalloc_minimal.so.4 not installed (optional; tools/setup-deps.sh installs libtcmalloc-minimal4)"; fi

# an MPI-style launcher: a parent that starts several children at once, each
# inheriting LD_PRELOAD (shim and a malloc wrapper), and waits for them all
out=$(LD_PRELOAD="$shim:$lazy" sh -c 'for i in 1 2 3 4; do "$0" "$1" >"$2.$i" 2>&1 & done; wait
  cat "$2".1 "$2".2 "$2".3 "$2".4' "$probe" "$stub" "$tmp/child" 2>&1)
[ "$(grep -c '^probe: ok' <<<"$out")" -eq 4 ] && echo "launcher: 4 children under shim + lazy wrapper ok" ||
  fail "launcher with 4 children: $(head -c 300 <<<"$out" | tr '\n' ' ')"

# nothing but the shim is mapped into a process that does not use CUDA
maps=$(LD_PRELOAD=$shim cat /proc/self/maps)
grep -q libdevmalloc_preload <<<"$maps" || fail "shim not mapped (test is broken)"
grep -qE 'libelf|libz\.so' <<<"$maps" && fail "shim maps libelf/zlib into a non-CUDA process"
# dlsym of a non-driver name costs about what glibc's does
base=$("$probe" "$stub" --no-shim | sed -n 's/.*dlsym(RTLD_NEXT) \([0-9]*\) ns/\1/p')
with=$(LD_PRELOAD=$shim "$probe" "$stub" | sed -n 's/.*dlsym(RTLD_NEXT) \([0-9]*\) ns/\1/p')
echo "dlsym(RTLD_NEXT, \"strlen\"): ${base:-?} ns without the shim, ${with:-?} ns with it"
[ -n "$base" ] && [ -n "$with" ] && [ "$with" -le $((2 * base + 500)) ] ||
  fail "dlsym through the shim too slow: ${with:-?} ns vs ${base:-?} ns"
[ $fails -eq 0 ] && echo "check_interposers: $runs combinations passed" ||
  { echo "check_interposers: $fails failed"; exit 1; }
