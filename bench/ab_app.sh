#!/usr/bin/env bash
# bench/ab_app.sh OUT REPS "CMD ARGS" — A/B of one unmodified program: run it
# REPS times without the shim and REPS times with it (DEVMALLOC_STATS=1), take
# the median wall time of each, check that their standard outputs agree, and
# write OUT/app.csv. Called by bench/run.sh --app.
set -uo pipefail
out=$1 reps=$2 cmd=$3
shim=${DEVMALLOC_PRELOAD:-$(pwd)/${BUILD:-build}/libdevmalloc_preload.so}
[ -e "$shim" ] || { echo "bench --app: $shim missing: run make first" >&2; exit 2; }
command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 || {
  echo "bench --app: no CUDA GPU on this machine: the A/B run needs one" >&2; exit 2; }
mkdir -p "$out"
run() { # $1 = label, rest = env; prints ms
  local s e
  s=$(date +%s%N)
  env "${@:2}" bash -c "$cmd" >"$out/app.$1.out" 2>"$out/app.$1.err"
  local rc=$?
  e=$(date +%s%N)
  echo "$(( (e - s) / 1000000 )) $rc"
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
declare -a ts tm
for i in $(seq "$reps"); do
  read -r t rc < <(run stock DEVMALLOC_DISABLE=1)
  [ "$rc" -eq 0 ] || { echo "bench --app: the program failed without the shim (rc $rc)" >&2; exit 3; }
  ts+=("$t")
  read -r t rc < <(run devmalloc LD_PRELOAD="$shim" DEVMALLOC_STATS=1)
  [ "$rc" -eq 0 ] || { echo "bench --app: the program failed under the shim (rc $rc)" >&2; exit 3; }
  tm+=("$t")
done
ms_s=$(printf '%s\n' "${ts[@]}" | median); ms_d=$(printf '%s\n' "${tm[@]}" | median)
same=no; cmp -s "$out/app.stock.out" "$out/app.devmalloc.out" && same=yes
echo "variant,ms_median,runs,output_identical" >"$out/app.csv"
echo "stock,$ms_s,$reps,$same" >>"$out/app.csv"
echo "devmalloc,$ms_d,$reps,$same" >>"$out/app.csv"
grep -h "devmalloc: stats" "$out/app.devmalloc.err" | head -3
printf '\nA/B of one unmodified program: %s\n' "$cmd"
printf '%-10s %12s\n' variant "wall ms (median of $reps)"
printf '%-10s %12s\n' stock "$ms_s" devmalloc "$ms_d"
awk -v a="$ms_s" -v b="$ms_d" 'BEGIN { if (b > 0) printf "ratio (stock / devmalloc wall time): %.2fx\n", a / b }'
echo "outputs identical: $same"
