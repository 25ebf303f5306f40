#!/usr/bin/env bash
# 60_jit_fallback — fallbacks lose nothing: DEVMALLOC_JIT=off, a SASS-only
# binary (no PTX: cannot be re-linked) and a cache directory with the wrong
# mode (refused with a warning, re-link still done, uncached). In the first
# two the program keeps stock malloc and gives the stock results.
set -u
c=60_jit_fallback
. tests/gpu/progs/jit_lib.sh
jit_need $c
fail=""
run_prog stock62 -- "$PROG" || { echo "FAIL $c: program fails without the shim"; exit 1; }
n=$(big_n stock62); s_ok=$(big_ok stock62)

run_prog off62 DEVMALLOC_JIT=off DEVMALLOC_VERBOSE=1 DEVMALLOC_CACHE_DIR="$GPU_TMP/jit62-c1" \
  LD_PRELOAD="$SHIM" -- "$PROG" || fail="$fail; DEVMALLOC_JIT=off run failed"
grep -q "re-linked with devmalloc" "$GPU_TMP/off62.err" && fail="$fail; re-linked although DEVMALLOC_JIT=off"
[ "$(field off62 'small ')" = "$(field stock62 'small ')" ] || fail="$fail; JIT=off small phase differs"

"$INSPECT" "$SASS" | grep -q "carries no PTX" || fail="$fail; inspect does not flag the SASS-only binary"
run_prog sass62 DEVMALLOC_VERBOSE=1 DEVMALLOC_CACHE_DIR="$GPU_TMP/jit62-c2" LD_PRELOAD="$SHIM" -- "$SASS" \
  || fail="$fail; SASS-only binary fails under the shim"
grep -q "re-linked with devmalloc" "$GPU_TMP/sass62.err" && fail="$fail; SASS-only binary claims a re-link"
grep -qi "no PTX" "$GPU_TMP/sass62.err" || echo "note: no 'no PTX' reason line at verbose level (the shim prints dm_relink_image's why)"
grep -q "^result OK" "$GPU_TMP/sass62.out" || fail="$fail; SASS-only result not OK"

bad=$GPU_TMP/jit62-open; rm -rf "$bad"; mkdir -m 0755 "$bad"
run_prog open62 DEVMALLOC_VERBOSE=1 DEVMALLOC_CACHE_DIR="$bad" LD_PRELOAD="$SHIM" -- "$PROG" \
  || fail="$fail; run with a 0755 cache dir failed"
grep -q "JIT cache disabled" "$GPU_TMP/open62.err" || fail="$fail; no warning for a 0755 cache dir"
[ -z "$(ls -A "$bad")" ] || fail="$fail; files written into the refused cache dir"
[ "$(big_ok open62)" = "$n" ] || fail="$fail; uncached re-link did not serve the big phase"

if [ -n "$fail" ]; then echo "FAIL $c: ${fail#; }"; exit 1; fi
echo "PASS $c: JIT=off and SASS-only keep stock ($s_ok/$n big), 0755 cache dir refused with a warning"
