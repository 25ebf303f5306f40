#!/usr/bin/env bash
# 23_mpi — the corpus's MPI program (tests/gpu/corpus/mpi_ranks.cu) under
# `mpirun -np 2`, with the Open MPI that tools/setup-deps.sh unpacks into
# $BUILD/mpi-root (run from there: its env.sh). Three ways, as the corpus
# case: stock; relinked under the shim; the stock build under the shim. The
# shim reaches every rank through `mpirun -x LD_PRELOAD=...`, mpirun itself
# runs without it. Each rank's output is kept apart (--output-filename).
# A way passes when mpirun exits 0, rank 0's digest line equals stock's, and
# every rank's DEVMALLOC_STATS lines count at least the nodes that rank says
# it allocated.
#   mpi/two_gpus/WAY  rank k on GPU k (two GPUs or more; SKIP on one)
#   mpi/one_gpu/WAY   both ranks on the first GPU (always)
# SKIP without the Open MPI folder, when its mpirun does not run, or without
# a GPU. Options: CORPUS_SMALL=1, CORPUS_TIMEOUT (seconds per run, 120).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../case_lib.sh"
. "$here/../../../tools/need-gpu.sh"
M=$B/mpi-root C=$B/corpus
CT=${GPU_TMP:-$(mktemp -d)}/mpi
mkdir -p "$CT"
if [ ! -f "$M/env.sh" ]; then
  echo "SKIP mpi: no Open MPI in $M (tools/setup-deps.sh --for check unpacks it where Debian's packages can be reached)"
  exit 0
fi
. "$M/env.sh"
MPIRUN=$MPI_ROOT/usr/bin/mpirun
if ! v=$("$MPIRUN" --version 2>&1); then
  echo "SKIP mpi: $MPIRUN does not run: $(head -1 <<<"$v")"; exit 0
fi
echo "mpi: $(head -1 <<<"$v") from $MPI_ROOT"
if ! nogpu=$( (need_gpu "the MPI case") 2>&1); then echo "SKIP mpi: $nogpu"; exit 0; fi
need_built mpi "$C/mpi_ranks.stock" "$C/mpi_ranks.relinked" "$SHIM_SO"

# The GPUs CUDA will see: CUDA_VISIBLE_DEVICES's list where it is set.
gpus=$(nvidia-smi -L 2>/dev/null | sed -n 's/^GPU \([0-9]*\):.*/\1/p' | paste -sd, -)
[ -z "${CUDA_VISIBLE_DEVICES:-}" ] || gpus=$CUDA_VISIBLE_DEVICES
ngpu=$(tr ',' '\n' <<<"$gpus" | grep -c .)
first=${gpus%%,*}

# run_mpi LAYOUT WAY: leaves $CT/LAYOUT.WAY.{out,err,rc} and the ranks' own
# files under $CT/LAYOUT.WAY.ranks/*/rank.N/.
run_mpi() {
  local l=$1 w=$2 bin=$C/mpi_ranks.stock x=()
  [ "$w" = relinked ] && bin=$C/mpi_ranks.relinked
  [ "$l" = one_gpu ] && x+=(-x CUDA_VISIBLE_DEVICES="$first")
  [ -z "${CORPUS_SMALL:-}" ] || x+=(-x CORPUS_SMALL="$CORPUS_SMALL")
  [ "$w" = stock ] || x+=(-x LD_PRELOAD="$SHIM_SO" -x DEVMALLOC_STATS=1 -x DEVMALLOC_VERBOSE=1)
  local r=$CT/$l.$w t0; rm -rf "$r.ranks"; t0=$(date +%s%N)
  env -u LD_PRELOAD timeout "${CORPUS_TIMEOUT:-120}" "$MPIRUN" --allow-run-as-root --oversubscribe -np 2 \
    --mca btl self,vader --mca btl_vader_single_copy_mechanism none --output-filename "$r.ranks" \
    "${x[@]}" "$bin" >"$r.out" 2>"$r.err"
  echo $? >"$r.rc"
  echo "---- mpi/$l/$w: rc $(cat "$r.rc"), $(( ($(date +%s%N) - t0) / 1000000 )) ms"
  sed 's/^/  out| /' "$r.out" | head -20
  sed 's/^/  err| /' "$r.err" | head -60
}
rank_err() { ls "$CT/$1.ranks"/*/rank."$2"/stderr 2>/dev/null | head -1; }
# Why a run failed, in one line: a rank's own last words, else mpirun's first.
why() {
  local l
  l=$(cat "$CT/$1.ranks"/*/rank.*/stderr 2>/dev/null | grep -v "^devmalloc" | grep -v "^\s*$" | tail -1)
  [ -n "$l" ] || l=$(grep -v "^\s*$" "$CT/$1.err" | grep -v "^---" | head -1)
  echo "${l:0:200}"
}
digest_of() { grep "^digest mpi_ranks " "$CT/$1.out" 2>/dev/null | head -1; }

# check_mpi LAYOUT WAY: one PASS/FAIL line.
check_mpi() {
  local l=$1 w=$2 r=$1.$2 name=mpi/$1/$2 rc
  rc=$(cat "$CT/$r.rc")
  if [ "$rc" = 124 ]; then echo "FAIL $name: timed out after ${CORPUS_TIMEOUT:-120} s"; return; fi
  if [ "$rc" != 0 ]; then
    echo "FAIL $name: mpirun exit status $rc: $(why "$r")"
    return
  fi
  if [ -z "$(digest_of "$r")" ]; then echo "FAIL $name: no digest line on stdout"; return; fi
  local k f d want
  for k in 0 1; do  # where each rank ran
    f=$(rank_err "$r" $k)
    d=$(sed -n 's/^mpi_ranks: rank [0-9]* of [0-9]* on device \([0-9]* of [0-9]*\):.*/\1/p' "$f" 2>/dev/null | head -1)
    want="0 of 1"; [ "$l" = one_gpu ] || want="$k of $ngpu"
    if [ "$d" != "$want" ]; then echo "FAIL $name: rank $k ran on device '${d:-?}' (want $want)"; return; fi
  done
  if [ "$w" = stock ]; then echo "PASS $name: $(digest_of "$r" | cut -d' ' -f3-)"; return; fi
  if [ "$(cat "$CT/$l.stock.rc")" != 0 ] || [ -z "$(digest_of "$l.stock")" ]; then
    echo "FAIL $name: the stock run gave no result to compare with"; return; fi
  if [ "$(digest_of "$r")" != "$(digest_of "$l.stock")" ]; then
    echo "FAIL $name: '$(digest_of "$r")' differs from stock's '$(digest_of "$l.stock")'"; return; fi
  local a n fr served=""
  for k in 0 1; do
    f=$(rank_err "$r" $k)
    if [ -z "$f" ]; then echo "FAIL $name: no stderr file of rank $k under $CT/$r.ranks"; return; fi
    if grep -q "no heap bound" "$f" "$(dirname "$f")/stdout"; then echo "FAIL $name: rank $k: the device library saw no heap"; return; fi
    a=$(grep -o "^devmalloc: stats: context .* allocs [0-9]*" "$f" | awk '{s+=$NF} END {print s+0}')
    fr=$(grep -o "^devmalloc: stats: context .* frees [0-9]*" "$f" | awk '{s+=$NF} END {print s+0}')
    n=$(sed -n 's/^mpi_ranks: rank [0-9]* of .*: \([0-9]*\) nodes allocated$/\1/p' "$f" | head -1)
    if [ -z "$n" ]; then echo "FAIL $name: rank $k did not say how many nodes it allocated"; return; fi
    if [ "$a" -lt "$n" ] || [ "$n" -eq 0 ]; then
      local nr; nr=$(grep -o "\(not re-linked\|cannot be re-linked\).*" "$f" | head -1 | cut -c1-160)
      echo "FAIL $name: rank $k allocated $n nodes, devmalloc counted $a${nr:+; $nr}"; return
    fi
    served="$served, rank $k: $a allocations and $fr frees"
  done
  echo "PASS $name: identical digest$served served by devmalloc"
}

layouts=one_gpu
if [ "$ngpu" -ge 2 ]; then layouts="two_gpus one_gpu"
else echo "SKIP mpi/two_gpus: one GPU (needs two)"; fi
for l in $layouts; do
  for w in stock relinked shim; do run_mpi "$l" "$w"; done
  for w in stock relinked shim; do check_mpi "$l" "$w"; done
done
