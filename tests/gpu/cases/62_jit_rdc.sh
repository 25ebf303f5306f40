#!/usr/bin/env bash
# 62_jit_rdc — -rdc programs re-linked at load from their relocatable code:
# the corpus's cdp (dynamic parallelism), skiplist (three units), plugin (an
# -rdc executable and a shared library) and cmake_rdc (CMake separable
# compilation, two shared libraries), stock builds, at reduced size. Each
# runs under the shim with an empty cache: same digest as without the shim,
# allocations counted by devmalloc, a verbose line saying its images were
# re-linked from relocatable code (on sm_80/86/89/90/100/120, with devmalloc
# linked as SASS); then again: every image from the cache; then with
# DEVMALLOC_JIT_SASS=0 (devmalloc's PTX) for one of them. devmalloc-inspect
# agrees that the images are re-linked from relocatable code.
set -u
c=62_jit_rdc
. tests/gpu/progs/jit_lib.sh
C=$BUILD/corpus
[ -f "$SHIM" ] || { echo "SKIP $c: $SHIM not built yet"; exit 0; }
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')
sass=""
case " 80 86 89 90 100 120 " in *" $cc "*) sass=1 ;; esac
allocs() { grep -o "^devmalloc: stats: context .* allocs [0-9]*" "$GPU_TMP/$1.err" | awk '{s+=$NF} END {print s+0}'; }
digest() { grep "^digest " "$GPU_TMP/$1.out" | head -1; }
fail=""
for p in cdp skiplist plugin cmake_rdc; do
  bin=$C/$p.stock
  [ -x "$bin" ] || { fail="$fail; $bin not built (make gpu-build)"; continue; }
  "$INSPECT" --arch "${cc:-90}" "$bin" >"$GPU_TMP/62.$p.inspect" 2>&1
  grep -q "re-linked from relocatable code" "$GPU_TMP/62.$p.inspect" ||
    fail="$fail; $p: devmalloc-inspect does not say it is re-linked from relocatable code"
  cache=$GPU_TMP/jit62-$p; rm -rf "$cache"
  run_prog "62.$p.stock" CORPUS_SMALL=1 -- "$bin" || { fail="$fail; $p fails without the shim"; continue; }
  for w in cold warm; do
    run_prog "62.$p.$w" CORPUS_SMALL=1 DEVMALLOC_CACHE_DIR="$cache" DEVMALLOC_VERBOSE=1 DEVMALLOC_STATS=1 \
      LD_PRELOAD="$SHIM" -- "$bin" || { fail="$fail; $p ($w) fails under the shim"; continue; }
    [ -n "$(digest "62.$p.stock")" ] && [ "$(digest "62.$p.stock")" = "$(digest "62.$p.$w")" ] ||
      fail="$fail; $p ($w): digest '$(digest "62.$p.$w")' differs from stock '$(digest "62.$p.stock")'"
    [ "$(allocs "62.$p.$w")" -gt 0 ] || fail="$fail; $p ($w): no allocation served by devmalloc"
    grep -q "stock device malloc, not devmalloc" "$GPU_TMP/62.$p.$w.err" &&
      fail="$fail; $p ($w): a module kept the stock allocator: $(grep -o 'cannot be re-linked (.*' "$GPU_TMP/62.$p.$w.err" | head -1 | cut -c1-160)"
  done
  grep -q "jit: .*relocatable code of .* re-linked with devmalloc (JIT link" "$GPU_TMP/62.$p.cold.err" ||
    fail="$fail; $p: no 'relocatable code ... re-linked with devmalloc (JIT link' line on the cold start"
  [ -n "$sass" ] && ! grep -q "relocatable code of .*devmalloc as sm_$cc SASS" "$GPU_TMP/62.$p.cold.err" &&
    fail="$fail; $p: devmalloc not linked as sm_$cc SASS"
  grep -q "jit: .*relocatable code of .* re-linked with devmalloc (JIT link" "$GPU_TMP/62.$p.warm.err" &&
    fail="$fail; $p: linked again on the warm start (cache not used)"
  grep -q "relocatable code of .* (cache hit" "$GPU_TMP/62.$p.warm.err" ||
    grep -q "read from the cache ahead" "$GPU_TMP/62.$p.warm.err" ||
    fail="$fail; $p: no cache hit on the warm start"
  echo "note: $p: cold $(cat "$GPU_TMP/62.$p.cold.ms") ms, warm $(cat "$GPU_TMP/62.$p.warm.ms") ms, stock $(cat "$GPU_TMP/62.$p.stock.ms") ms; JIT link $(jit_ms "62.$p.cold") ms"
done
if [ -x "$C/skiplist.stock" ]; then
  run_prog 62.ptx CORPUS_SMALL=1 DEVMALLOC_CACHE_DIR="$GPU_TMP/jit62-ptx" DEVMALLOC_JIT_SASS=0 DEVMALLOC_VERBOSE=1 \
    DEVMALLOC_STATS=1 LD_PRELOAD="$SHIM" -- "$C/skiplist.stock" || fail="$fail; skiplist fails with DEVMALLOC_JIT_SASS=0"
  grep -q "relocatable code of .*devmalloc as compute_[0-9]* PTX" "$GPU_TMP/62.ptx.err" ||
    fail="$fail; DEVMALLOC_JIT_SASS=0 did not link devmalloc's PTX"
  [ "$(digest 62.ptx)" = "$(digest 62.skiplist.stock)" ] || fail="$fail; skiplist with devmalloc's PTX: digest differs"
fi
if [ -n "$fail" ]; then echo "FAIL $c: ${fail#; }"; exit 1; fi
echo "PASS $c: cdp, skiplist, plugin, cmake_rdc re-linked from relocatable code (devmalloc as $(if [ -n "$sass" ]; then echo "sm_$cc SASS"; else echo PTX; fi)), outputs identical to stock, served by devmalloc, cached"
