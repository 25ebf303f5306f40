#!/usr/bin/env bash
# The shim beside other interposers on a CUDA program (shim_static, relinked
# with devmalloc): a lazy dlsym(RTLD_NEXT, "malloc") wrapper and jemalloc /
# tcmalloc preloads in both orders, the ASan runtime first, and the program
# under compute-sanitizer memcheck with the shim preloaded. Each must be
# served by devmalloc (stats) and exit 0; compute-sanitizer must report
# 0 errors.
set -u
. "$(dirname "$0")/../progs/shim_lib.sh"
LAZY=$(cd "$B/interpose/interposers" 2>/dev/null && pwd)/lazy_malloc.so
lib() { local d; for d in /usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu /usr/lib64 /usr/lib; do
  [ -f "$d/$1" ] && { echo "$d/$1"; return; }; done; }
# The first report of a failed sanitizer run (its tail is only the summary).
sanitizer_first_report() { grep -m 12 -E '^========= ' <<<"$1" | sed 's/^/  first report| /'; }
run_pre() {  # run_pre NAME PRELOAD [ENV...]
  local name=$1 pre=$2; shift 2
  OUT=$(env LD_PRELOAD="$pre" DEVMALLOC_STATS=1 "$@" "$P/shim_static" 2>&1); RC=$?
  printf '%s\n' "---- $name" "$OUT" | tail -15
  check_served "$name" "$OUT" $RC 131072
}
if [ -f "$LAZY" ]; then
  run_pre shim_coexist_lazy_first "$LAZY:$SHIM_SO"
  run_pre shim_coexist_lazy_after "$SHIM_SO:$LAZY"
else echo "FAIL shim_coexist_lazy: $LAZY not built (make gpu-build)"; fi
for l in libjemalloc.so.2 libtcmalloc_minimal.so.4; do
  f=$(lib $l); n=${l%%.so*}; n=${n#lib}
  if [ -z "$f" ]; then echo "SKIP shim_coexist_$n: $l not installed (tools/setup-deps.sh)"; continue; fi
  run_pre "shim_coexist_${n}_first" "$f:$SHIM_SO"
  run_pre "shim_coexist_${n}_after" "$SHIM_SO:$f"
done
asan=$(gcc -print-file-name=libasan.so 2>/dev/null)
if [ -f "$asan" ]; then
  run_pre shim_coexist_asan "$asan:$SHIM_SO" ASAN_OPTIONS=detect_leaks=0:protect_shadow_gap=0
else echo "SKIP shim_coexist_asan: libasan.so not found"; fi
if command -v compute-sanitizer >/dev/null; then
  OUT=$(LD_PRELOAD="$SHIM_SO" DEVMALLOC_STATS=1 compute-sanitizer --tool memcheck --print-limit 20 \
        "$P/shim_static" 2>&1); RC=$?
  printf '%s\n' "---- compute-sanitizer" "$OUT" | tail -15
  if grep -q "ERROR SUMMARY: 0 errors" <<<"$OUT"; then check_served shim_coexist_compute_sanitizer "$OUT" $RC 131072
  else echo "FAIL shim_coexist_compute_sanitizer: exit $RC, $(grep -E 'SUMMARY|No attachable' <<<"$OUT" | head -2)"
       sanitizer_first_report "$OUT"; fi
  # the CLI around the sanitizer, and the sanitizer around the CLI
  for form in cli_outside cli_inside; do
    if [ $form = cli_outside ]; then
      OUT=$(DEVMALLOC_PRELOAD="$SHIM_SO" bash tools/devmalloc run --stats -- \
            compute-sanitizer --tool memcheck --print-limit 20 "$P/shim_static" 2>&1); RC=$?
    else
      OUT=$(DEVMALLOC_PRELOAD="$SHIM_SO" compute-sanitizer --tool memcheck --print-limit 20 \
            bash tools/devmalloc run --stats -- "$P/shim_static" 2>&1); RC=$?
    fi
    printf '%s\n' "---- compute-sanitizer ($form)" "$OUT" | tail -8
    if grep -q "ERROR SUMMARY: 0 errors" <<<"$OUT"; then check_served "shim_coexist_compute_sanitizer_$form" "$OUT" $RC 131072
    else echo "FAIL shim_coexist_compute_sanitizer_$form: exit $RC, $(grep -E 'SUMMARY|No attachable' <<<"$OUT" | head -2)"
         sanitizer_first_report "$OUT"; fi
  done
else echo "SKIP shim_coexist_compute_sanitizer: compute-sanitizer not found"; fi
