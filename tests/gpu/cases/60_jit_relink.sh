#!/usr/bin/env bash
# 60_jit_relink — an unmodified `nvcc -arch=sm_90` program (stock device
# malloc, PTX embedded) run without and with the shim: the shim re-links its
# PTX with devmalloc at load time. Checks: same results where the stock heap
# suffices (small phase checksum, new/delete, aligned, __device__ symbols);
# the 16 MiB phase that the 8 MiB stock heap cannot hold fully succeeds under
# the shim; the verbose line says the module was re-linked; DEVMALLOC_STATS
# shows devmalloc served the allocations; devmalloc-inspect agrees.
set -u
c=60_jit_relink
. tests/gpu/progs/jit_lib.sh
jit_need $c
cache=$GPU_TMP/jit60-cache; rm -rf "$cache"

"$INSPECT" "$PROG" | tee "$GPU_TMP/60.inspect"
grep -q "re-link applies" "$GPU_TMP/60.inspect" || { echo "FAIL $c: devmalloc-inspect does not see a re-linkable module"; exit 1; }

run_prog stock60 -- "$PROG" || { echo "FAIL $c: program fails without the shim"; exit 1; }
run_prog shim60 DEVMALLOC_CACHE_DIR="$cache" DEVMALLOC_STATS=1 DEVMALLOC_VERBOSE=1 \
  LD_PRELOAD="$SHIM" -- "$PROG" || { echo "FAIL $c: program fails under the shim"; exit 1; }

fail=""
for f in "small " "new " "symbol seed="; do
  a=$(field stock60 "$f" | sed 's/ counter=.*//'); b=$(field shim60 "$f" | sed 's/ counter=.*//')
  [ -n "$a" ] && [ "$a" = "$b" ] || fail="$fail; '$f' differs: stock '$a' vs shim '$b'"
done
grep -q "^result OK" "$GPU_TMP/shim60.out" || fail="$fail; result not OK under the shim"
n=$(big_n shim60); s_ok=$(big_ok stock60); d_ok=$(big_ok shim60)
[ "$d_ok" = "$n" ] || fail="$fail; big phase under the shim: $d_ok/$n succeeded"
[ "${s_ok:-0}" -lt "$n" ] || echo "note: the stock heap held all $n blocks here: the big phase shows no difference"
grep -q "devmalloc: jit: .*re-linked with devmalloc" "$GPU_TMP/shim60.err" || fail="$fail; no 're-linked with devmalloc' verbose line"
allocs=$(stats_allocs shim60)
need=$(( n + 1024 ))
if [ -z "$allocs" ]; then fail="$fail; no allocation count in the DEVMALLOC_STATS output"
elif [ "$allocs" -lt "$need" ]; then fail="$fail; devmalloc stats count $allocs allocations, expected >= $need"; fi

if [ -n "$fail" ]; then echo "FAIL $c: ${fail#; }"; exit 1; fi
echo "PASS $c: stock big phase $s_ok/$n, re-linked $d_ok/$n; stats allocs=$allocs; small/new/aligned/symbols identical"
