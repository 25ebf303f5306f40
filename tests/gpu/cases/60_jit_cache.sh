#!/usr/bin/env bash
# 60_jit_cache — the JIT cache: the first start JIT-links and stores the
# image (directory created 0700), the second start hits the cache (verbose
# line); a corrupted entry is detected, not used, and rewritten. Prints the
# load-time cost: cold JIT vs cached (the shim's measure of the re-link and
# the process wall time), next to the stock run.
set -u
c=60_jit_cache
. tests/gpu/progs/jit_lib.sh
jit_need $c
cache=$GPU_TMP/jit61-cache; rm -rf "$cache"
E=(DEVMALLOC_CACHE_DIR="$cache" DEVMALLOC_VERBOSE=1 LD_PRELOAD="$SHIM")
fail=""

run_prog stock61 -- "$PROG" || { echo "FAIL $c: program fails without the shim"; exit 1; }
run_prog cold61 "${E[@]}" -- "$PROG" || fail="$fail; cold run failed"
run_prog warm61 "${E[@]}" -- "$PROG" || fail="$fail; cached run failed"
cold=$(jit_ms cold61); warm=$(hit_ms warm61)
[ -n "$cold" ] || fail="$fail; first start did not JIT-link (no 'JIT link' line)"
[ -n "$warm" ] || fail="$fail; second start did not hit the cache (no 'cache hit' line)"
grep -q "JIT link" "$GPU_TMP/warm61.err" && fail="$fail; second start JIT-linked again"
[ "$(stat -c %a "$cache" 2>/dev/null)" = 700 ] || fail="$fail; cache dir mode is $(stat -c %a "$cache" 2>/dev/null), not 700"
entry=$(ls "$cache"/*.cubin 2>/dev/null | head -1)
[ -n "$entry" ] || fail="$fail; no cache entry written"
for r in cold61 warm61; do
  [ "$(field $r 'small ')" = "$(field stock61 'small ')" ] || fail="$fail; $r small phase differs from stock"
  grep -q "^result OK" "$GPU_TMP/$r.out" || fail="$fail; $r result not OK"
done

# Corrupt the entry: one byte in the middle. It must be refused and rebuilt.
if [ -n "$entry" ]; then
  sz=$(stat -c %s "$entry")
  printf '\x5a' | dd of="$entry" bs=1 seek=$((sz / 2)) conv=notrunc 2>/dev/null
  run_prog corrupt61 "${E[@]}" -- "$PROG" || fail="$fail; run with a corrupted entry failed"
  grep -q "cache hit" "$GPU_TMP/corrupt61.err" && fail="$fail; corrupted entry was used"
  grep -q "JIT link" "$GPU_TMP/corrupt61.err" || fail="$fail; corrupted entry did not lead to a fresh JIT link"
  grep -q "^result OK" "$GPU_TMP/corrupt61.out" || fail="$fail; result not OK after corruption"
  run_prog again61 "${E[@]}" -- "$PROG" >/dev/null
  grep -q "cache hit" "$GPU_TMP/again61.err" || fail="$fail; rewritten entry not hit"
fi

echo "load-time cost ($PROG): cold JIT link ${cold:-?} ms, cached ${warm:-?} ms;" \
     "process wall: stock $(cat "$GPU_TMP/stock61.ms") ms, cold $(cat "$GPU_TMP/cold61.ms") ms," \
     "cached $(cat "$GPU_TMP/warm61.ms") ms; first launch: stock $(field stock61 time | cut -d= -f2) ms," \
     "cold $(field cold61 time | cut -d= -f2) ms, cached $(field warm61 time | cut -d= -f2) ms"
if [ -n "$fail" ]; then echo "FAIL $c: ${fail#; }"; exit 1; fi
echo "PASS $c: cold JIT ${cold} ms, cache hit ${warm} ms; corrupted entry refused and rewritten"
