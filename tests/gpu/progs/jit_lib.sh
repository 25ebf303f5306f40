# jit_lib.sh — shared by tests/gpu/cases/60_jit_*.sh (sourced, not a case).
# Sets PROG, SASS, SHIM, INSPECT and helpers; every case runs under run.sh's
# BUILD and GPU_TMP.
BUILD=${BUILD:-build}
GPU_TMP=${GPU_TMP:-$(mktemp -d)}
PROG=$BUILD/gpu/jit_alloc
SASS=$BUILD/gpu/jit_alloc_sass_only
SHIM=$BUILD/libdevmalloc_preload.so
INSPECT=$BUILD/devmalloc-inspect

jit_need() {   # jit_need CASE: SKIP/FAIL unless the programs and the shim exist
  local c=$1
  for f in "$PROG" "$SASS"; do
    [ -x "$f" ] || { echo "FAIL $c: $f not built (make gpu-build)"; exit 1; }
  done
  [ -f "$SHIM" ] || { echo "SKIP $c: $SHIM not built yet"; exit 0; }
}

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# run_prog NAME [ENV...] -- PROG ARGS: runs it, output in $GPU_TMP/NAME.{out,err},
# wall time in ms in $GPU_TMP/NAME.ms; returns the program's status.
run_prog() {
  local name=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  local t0; t0=$(now_ms)
  env "${envs[@]}" "$@" >"$GPU_TMP/$name.out" 2>"$GPU_TMP/$name.err"
  local rc=$?
  echo $(( $(now_ms) - t0 )) >"$GPU_TMP/$name.ms"
  echo "--- $name (rc $rc, $(cat "$GPU_TMP/$name.ms") ms)"; sed 's/^/  out| /' "$GPU_TMP/$name.out"
  sed 's/^/  err| /' "$GPU_TMP/$name.err" | head -40
  return $rc
}

field() { grep "^$2" "$GPU_TMP/$1.out" | head -1; }            # field RUN PREFIX
big_ok() { sed -n 's/^big ok=\([0-9]*\)\/.*/\1/p' "$GPU_TMP/$1.out"; }
big_n()  { sed -n 's/^big ok=[0-9]*\/\([0-9]*\).*/\1/p' "$GPU_TMP/$1.out"; }
# The shim's DEVMALLOC_STATS output: the largest number following "allocs"
# on a devmalloc line (format owned by the shim; adjust here if it changes).
stats_allocs() {
  grep -i 'devmalloc' "$GPU_TMP/$1.err" | grep -io 'allocs[^0-9]\{0,12\}[0-9][0-9]*' |
    grep -o '[0-9][0-9]*$' | sort -n | tail -1
}
# "JIT link 123.4 ms" / "cache hit, 1.2 ms" from the verbose re-link line
jit_ms()   { sed -n 's/.*re-linked with devmalloc (JIT link \([0-9.]*\) ms.*/\1/p' "$GPU_TMP/$1.err" | head -1; }
hit_ms()   { sed -n 's/.*re-linked with devmalloc (cache hit, \([0-9.]*\) ms.*/\1/p' "$GPU_TMP/$1.err" | head -1; }
