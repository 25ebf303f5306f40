#!/usr/bin/env bash
# 61_stock_notice — no silent fallback: a program whose module calls the stock
# device malloc and cannot be re-linked (SASS only) gets exactly one warning
# at the default verbosity naming the reason; a re-linkable one gets none.
set -u
c=61_stock_notice
. tests/gpu/progs/jit_lib.sh
jit_need $c
fail=""
run_prog sass61 DEVMALLOC_CACHE_DIR="$GPU_TMP/jit61" LD_PRELOAD="$SHIM" -- "$SASS" \
  || fail="$fail; SASS-only binary fails under the shim"
n=$(grep -c "^devmalloc: warning: .* runs on CUDA's stock device malloc, not devmalloc: it cannot be re-linked (.*PTX" "$GPU_TMP/sass61.err")
[ "$n" = 1 ] || fail="$fail; $n stock-allocator warnings for the SASS-only binary (want 1)"
run_prog prog61 DEVMALLOC_CACHE_DIR="$GPU_TMP/jit61" LD_PRELOAD="$SHIM" -- "$PROG" \
  || fail="$fail; re-linkable binary fails under the shim"
grep -q "stock device malloc, not devmalloc" "$GPU_TMP/prog61.err" && fail="$fail; warning for a re-linked program"
if [ -n "$fail" ]; then echo "FAIL $c: ${fail#; }"; exit 1; fi
echo "PASS $c: one warning for the SASS-only program, none for the re-linked one"
