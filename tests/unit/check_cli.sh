#!/usr/bin/env bash
# check_cli.sh — the user-facing scripts without a GPU:
#   - build/devmalloc --help lists every option of host/options/options.def;
#     --version on the CLI (also after `run`) and on devmalloc-inspect;
#   - `devmalloc run`: every option with a value as --opt X and --opt=X, -vv,
#     a missing shim refused, bad DEVMALLOC_* values refused before the
#     program starts (unless --no-check-env); `devmalloc check-env`;
#   - bench --help is real help; bad usage exits 2; the benchmark binary
#     takes the project's size syntax (1.5G) and names it when refusing;
#   - with nvidia-smi failing (a stand-in on PATH), tests/gpu/run.sh and
#     bench/run.sh exit 2 with one "needs a GPU" line, and so do `make
#     gpu-check` and `make bench`, before building anything;
#   - plot_pool.py prints its tables when matplotlib cannot be imported.
# Run from the repository root (make check does).
#   check_cli.sh BUILD_DIR
set -u
B=$1 fails=0
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fails=$((fails + 1)); }

ver=$(sed -n 's/^#define DEVMALLOC_VERSION_STRING "\(.*\)"/\1/p' include/devmalloc.h)
help=$("$B/devmalloc" --help)
missing=$(grep -o '"DEVMALLOC_[A-Z_]*"' host/options/options.def | tr -d '"' |
          while read -r v; do grep -q "^  $v  (default" <<<"$help" || echo "$v"; done)
[ -z "$missing" ] && ok "devmalloc --help lists every option" || bad "devmalloc --help misses: $missing"
grep -q "values: a byte count" <<<"$help" && ok "devmalloc --help gives the value forms" ||
  bad "devmalloc --help: no value forms"
[ "$("$B/devmalloc" --version)" = "devmalloc $ver" ] && ok "devmalloc --version" || bad "devmalloc --version"
[ "$("$B/devmalloc" run --version)" = "devmalloc $ver" ] && ok "devmalloc run --version" || bad "devmalloc run --version"
[ "$("$B/devmalloc-inspect" --version)" = "devmalloc-inspect $ver" ] && ok "devmalloc-inspect --version" ||
  bad "devmalloc-inspect --version"
[ "$(bash bench/run.sh --version)" = "devmalloc bench $ver" ] && ok "bench --version" || bad "bench --version"
"$B/devmalloc" run --bogus >/dev/null 2>&1; [ $? -eq 2 ] && ok "devmalloc run --bogus: exit 2" ||
  bad "devmalloc run --bogus: not exit 2"

# run's options: --opt VALUE and --opt=VALUE alike, -vv, a missing shim, the
# environment checked before the program starts (env stands in for it)
shim=$(readlink -f "$B/libdevmalloc_preload.so")
runenv() { env -u DEVMALLOC_PRELOAD "$B/devmalloc" run "$@" -- env 2>&1; }
for f in "--heap-size:DEVMALLOC_HEAP_SIZE:1G" "--stats-format:DEVMALLOC_STATS:json" \
         "--stats-file:DEVMALLOC_STATS_FILE:$T/s.json" "--trace:DEVMALLOC_TRACE:$T/t.jsonl" \
         "--trace-interval:DEVMALLOC_TRACE_INTERVAL:5" "--trace-period:DEVMALLOC_TRACE_PERIOD:7" \
         "--log:DEVMALLOC_LOG:$T/l.log" "--jit:DEVMALLOC_JIT:off" "--cache-dir:DEVMALLOC_CACHE_DIR:$T/c" \
         "--host-pool:DEVMALLOC_HOST_POOL:auto"; do
  o=${f%%:*} rest=${f#*:}; var=${rest%%:*} v=${rest#*:}
  a=$(runenv "$o" "$v" | grep "^$var=") b=$(runenv "$o=$v" | grep "^$var=")
  [ "$a" = "$var=$v" ] && [ "$b" = "$var=$v" ] && ok "devmalloc run $o X and $o=X" ||
    bad "devmalloc run $o: '$a' / '$b'"
done
a=$(runenv --shim "$shim" | grep ^LD_PRELOAD=) b=$(runenv --shim="$shim" | grep ^LD_PRELOAD=)
[ "$a" = "LD_PRELOAD=$shim" ] && [ "$b" = "$a" ] && ok "devmalloc run --shim X and --shim=X" ||
  bad "devmalloc run --shim: '$a' / '$b'"
for f in "-v:1" "-vv:2" "-v -v:2" "--verbose --verbose:2" "-vvv:2"; do
  a=$(runenv ${f%%:*} | grep ^DEVMALLOC_VERBOSE=)
  [ "$a" = "DEVMALLOC_VERBOSE=${f#*:}" ] && ok "devmalloc run ${f%%:*}: verbose ${f#*:}" ||
    bad "devmalloc run ${f%%:*}: '$a'"
done
out=$("$B/devmalloc" run --stats=1 -- true 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q -- "--stats takes no value" <<<"$out" && ok "devmalloc run --stats=1: refused" ||
  bad "devmalloc run --stats=1: exit $rc, '$out'"
for s in "--shim $T/nonexistent.so" "--shim=$T/nonexistent.so"; do
  out=$("$B/devmalloc" run $s -- sh -c 'echo RAN' 2>&1); rc=$?
  [ $rc -eq 2 ] && [ "$out" = "devmalloc: --shim $T/nonexistent.so: no such file" ] &&
    ok "devmalloc run ${s%% *}: a missing shim fails, saying why" || bad "devmalloc run $s: exit $rc, '$out'"
done
out=$(DEVMALLOC_PRELOAD=$T "$B/devmalloc" run -- sh -c 'echo RAN' 2>&1); rc=$?
[ $rc -eq 2 ] && [ "$out" = "devmalloc: DEVMALLOC_PRELOAD $T: not a file" ] &&
  ok "devmalloc run: DEVMALLOC_PRELOAD not a file fails, saying why" || bad "DEVMALLOC_PRELOAD=dir: exit $rc, '$out'"
out=$(DEVMALLOC_HEAP_SIZE=lots DEVMALLOC_HEAPSIZE=1G "$B/devmalloc" run -- sh -c 'echo RAN' 2>&1); rc=$?
if [ $rc -eq 2 ] && ! grep -q RAN <<<"$out" && [ "$(wc -l <<<"$out")" -eq 3 ] &&
   grep -q '^devmalloc: DEVMALLOC_HEAP_SIZE="lots" is not valid: expected' <<<"$out" &&
   grep -q '^devmalloc: unknown option DEVMALLOC_HEAPSIZE; did you mean DEVMALLOC_HEAP_SIZE' <<<"$out"; then
  ok "devmalloc run: bad DEVMALLOC_* values stop it before the program, one line each"
else bad "devmalloc run with bad values: exit $rc, '$out'"; fi
out=$("$B/devmalloc" run --heap-size 1e-300% -- sh -c 'echo RAN' 2>&1); rc=$?
[ $rc -eq 2 ] && ! grep -q RAN <<<"$out" && ok "devmalloc run --heap-size 1e-300%: refused" ||
  bad "devmalloc run --heap-size 1e-300%: exit $rc, '$out'"
out=$(DEVMALLOC_HEAP_SIZE=lots "$B/devmalloc" run --no-check-env -- sh -c 'echo RAN' 2>&1)
grep -q RAN <<<"$out" && ok "devmalloc run --no-check-env: runs" || bad "devmalloc run --no-check-env: '$out'"
out=$(DEVMALLOC_MIN_BLOCK=16K "$B/devmalloc" check-env 2>&1); rc=$?
[ $rc -eq 1 ] && grep -q 'DEVMALLOC_MIN_BLOCK="16K" is not valid' <<<"$out" && ok "devmalloc check-env: a bad value, exit 1" ||
  bad "devmalloc check-env with MIN_BLOCK=16K: exit $rc, '$out'"
out=$(DEVMALLOC_GROW_STEP=4M "$B/devmalloc" check-env 2>&1); rc=$?
[ $rc -eq 0 ] && grep -q 'all valid' <<<"$out" && ok "devmalloc check-env: valid values, exit 0" ||
  bad "devmalloc check-env: exit $rc, '$out'"

out=$("$B/devmalloc" bench --help); [ $? -eq 0 ] && grep -q '^usage: devmalloc bench' <<<"$out" &&
  grep -q -- '--heap SIZE' <<<"$out" && ok "devmalloc bench --help" || bad "devmalloc bench --help: '$out'"

out=$("$B/bench/ab_stock" --heap 1.5Q 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q "bad size '1.5Q': expected a byte count .*1.5G" <<<"$out" &&
  ok "ab_bench: malformed size refused with the valid forms" || bad "ab_bench --heap 1.5Q: exit $rc, '$out'"
out=$("$B/bench/ab_stock" --heap 1.5G --sizes 1K,0.5M --workloads none 2>&1)
grep -q "bad size" <<<"$out" && bad "ab_bench refuses 1.5G / 0.5M: '$out'" || ok "ab_bench accepts 1.5G and 0.5M"

# no GPU: nvidia-smi fails
mkdir -p "$T/bin"
printf '#!/bin/sh\necho "NVIDIA-SMI has failed because it could not communicate with the NVIDIA driver."\nexit 9\n' \
  >"$T/bin/nvidia-smi"; chmod +x "$T/bin/nvidia-smi"
for cmd in "bash tests/gpu/run.sh" "bash bench/run.sh --quick" "bash bench/run.sh --pool"; do
  out=$(PATH="$T/bin:$PATH" $cmd 2>&1); rc=$?
  if [ $rc -eq 2 ] && [ "$(wc -l <<<"$out")" -eq 1 ] && grep -q "needs a GPU" <<<"$out"; then ok "$cmd without a GPU: one line, exit 2"
  else bad "$cmd without a GPU: exit $rc, '$out'"; fi
done
# make's GPU goals look first: one line, exit 2, nothing built
for goal in gpu-check bench; do
  out=$(PATH="$T/bin:$PATH" env -u MAKEFLAGS -u MAKELEVEL make --no-print-directory "$goal" BUILD="$T/nobuild" 2>&1); rc=$?
  if [ $rc -eq 2 ] && [ "$(wc -l <<<"$out")" -eq 1 ] && grep -q "make $goal needs a GPU" <<<"$out" && [ ! -e "$T/nobuild" ]; then
    ok "make $goal without a GPU: one line, exit 2, nothing built"
  else bad "make $goal without a GPU: exit $rc, built: $(ls "$T/nobuild" 2>/dev/null | head -3), '$(head -3 <<<"$out")'"; fi
done

# the stock binary failing mid-run (CUDA's own allocator): its rows so far
# are kept, devmalloc runs on, the report names the failure and shows
# devmalloc's rows without a stock figure (its results in --out=DIR); a
# failing devmalloc run still ends the benchmark (stand-ins for nvidia-smi and both benchmark binaries)
mkdir -p "$T/gpu/bin" "$T/fb/bench"
printf '#!/bin/sh
for a; do [ "$a" = -L ] && { echo "GPU 0: NVIDIA H100 80GB HBM3 (UUID: x)"; exit 0; }; done
echo "NVIDIA H100 80GB HBM3, 580.00"
' \
  >"$T/gpu/bin/nvidia-smi"
cat >"$T/fb/bench/ab_stock" <<'SH'
#!/bin/sh
case " $* " in *" none "*) exit 0 ;; esac
echo "stock,sizes,16,1048576,alloc,300,3.5,0,"
echo "ab_bench(stock): unspecified launch failure at bench/ab_bench.cu:187" >&2
exit 1
SH
cat >"$T/fb/bench/ab_devmalloc" <<'SH'
#!/bin/sh
[ -n "$DM_FAKE_FAIL" ] && exit 1
echo "devmalloc,sizes,16,1048576,alloc,0.1,9000,0,"
echo "devmalloc,sizes,1024,1048576,alloc,0.3,3000,0,"
SH
chmod +x "$T/gpu/bin/nvidia-smi" "$T/fb/bench/ab_stock" "$T/fb/bench/ab_devmalloc"
out=$(PATH="$T/gpu/bin:$PATH" BUILD="$T/fb" bash bench/run.sh --quick --out="$T/sf" 2>&1); rc=$?
if [ $rc -eq 0 ] && [ -n "$(ls "$T/sf" 2>/dev/null)" ] && grep -q "bench: ab_stock failed in the main run" <<<"$out" &&
   grep -q "stock's ab_bench failed in the main run (CUDA's own allocator); 1 devmalloc rows have no stock figure" <<<"$out" &&
   grep -Eq "^sizes +1 KiB alloc +1048576 +- +3000.00" <<<"$out" &&
   grep -Eq "^sizes +16 B +alloc +1048576 +3.50 +9000.00 +2571.4x" <<<"$out"; then
  ok "bench: stock failing mid-run keeps its rows, devmalloc runs on, the report says so"
else bad "bench with a failing stock run: exit $rc, '$out'"; fi
out=$(PATH="$T/gpu/bin:$PATH" BUILD="$T/fb" DM_FAKE_FAIL=1 bash bench/run.sh --quick --out "$T/sf2" 2>&1); rc=$?
[ $rc -eq 3 ] && grep -q "bench: ab_devmalloc failed" <<<"$out" && ok "bench: a failing devmalloc run ends it (exit 3)" ||
  bad "bench with a failing devmalloc run: exit $rc, '$out'"

# plot_pool.py without matplotlib keeps its tables
mkdir -p "$T/nompl/matplotlib" "$T/res"
echo 'raise ImportError("matplotlib stand-in: not installed")' >"$T/nompl/matplotlib/__init__.py"
for f in sizes:size live:live; do
  { echo "allocator,op,${f#*:},p50_ns,p99_ns"; echo "pool,pair,4096,1500,2500"; } >"$T/res/pool_${f%%:*}.csv"
done
out=$(PYTHONPATH="$T/nompl" python3 bench/plot_pool.py "$T/res" 2>&1); rc=$?
if [ $rc -eq 0 ] && grep -q '| 4 KiB | .*1.50 / 2.50' <<<"$out" && grep -q '^plots: skipped' <<<"$out"; then
  ok "plot_pool.py without matplotlib: tables kept, plots skipped with a note"
else bad "plot_pool.py without matplotlib: exit $rc, '$out'"; fi
PY=python3; python3 -c 'import matplotlib' 2>/dev/null || PY=/usr/bin/python3   # as bench/run.sh
out=$("$PY" bench/plot_pool.py "$T/res" 2>&1); rc=$?
if ! "$PY" -c 'import matplotlib' 2>/dev/null; then
  echo "skip plot_pool.py with matplotlib: python3-matplotlib not installed (optional; tools/setup-deps.sh installs it)"
else
  [ $rc -eq 0 ] && [ -s "$T/res/pool_sizes.png" ] && ok "plot_pool.py with matplotlib: plots written" ||
    bad "plot_pool.py with matplotlib: exit $rc, '$out'"
fi

[ $fails -eq 0 ] && echo "check_cli: all passed" || { echo "check_cli: $fails failed"; exit 1; }
