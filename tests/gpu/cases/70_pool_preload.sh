#!/usr/bin/env bash
# 70_pool_preload — a cudaMalloc/cudaFree-heavy program (build/pool/pool_app)
# runs unchanged under the shim with the MAM host pool on
# (DEVMALLOC_HOST_POOL=auto and =1G) and prints the same result line as
# without the shim; pointers must really come from the pool ("pooled" > 0).
set -u
n=70_pool_preload
app=$BUILD/pool/pool_app
shim=$BUILD/libdevmalloc_preload.so
[ -x "$app" ] || { echo "FAIL $n: $app not built (make gpu-build)"; exit 0; }
[ -f "$shim" ] || { echo "SKIP $n: $shim not built"; exit 0; }
base=$("$app" 2>&1); rc=$?
echo "--- baseline (rc $rc)"; echo "$base"
[ $rc -eq 0 ] || { echo "FAIL $n: baseline run failed (rc $rc)"; exit 0; }
ref=$(echo "$base" | grep '^result ')
ok=1
for mode in auto 1G; do
  out=$(DEVMALLOC_HOST_POOL=$mode LD_PRELOAD=$(realpath "$shim") "$app" 2>&1); rc=$?
  echo "--- DEVMALLOC_HOST_POOL=$mode (rc $rc)"; echo "$out"
  res=$(echo "$out" | grep '^result ')
  pooled=$(echo "$out" | sed -n 's/^pooled //p')
  if [ $rc -ne 0 ]; then echo "FAIL $n: pool=$mode exit status $rc"; ok=0
  elif [ "$res" != "$ref" ]; then echo "FAIL $n: pool=$mode result differs: '$res' vs '$ref'"; ok=0
  elif [ "${pooled:-0}" -le 0 ]; then echo "FAIL $n: pool=$mode: no pointer came from the pool (hooks not wired?)"; ok=0
  fi
done
[ $ok -eq 1 ] && echo "PASS $n: same results with DEVMALLOC_HOST_POOL=auto and =1G"
exit 0
