#!/usr/bin/env bash
# check_mpi.sh BUILD — host check (no GPU) of the MPI corpus program and its
# GPU case, where tools/setup-deps.sh has unpacked Open MPI into
# BUILD/mpi-root (skipped, exit 0, without it):
#   - mpirun runs relocated from that folder (`mpirun -np 2 hostname`);
#   - mpi_ranks is built both ways, linked with that libmpi, the relinked
#     build carrying devmalloc's device code and no host malloc/free;
#   - tests/gpu/cases/23_mpi.sh: SKIP without the folder and without a GPU;
#     with a stand-in nvidia-smi and fake programs run by the real mpirun,
#     its verdicts on one GPU and on two (LD_PRELOAD reaching every rank).
set -u
root=$(cd "$(dirname "$0")/../../.." && pwd)
B=$1 M=$1/mpi-root case=$root/tests/gpu/cases/23_mpi.sh
if [ ! -f "$M/env.sh" ]; then echo "check_mpi: skipped: no Open MPI in $M (tools/setup-deps.sh --for check)"; exit 0; fi
fail=0
bad() { echo "FAIL check_mpi: $*"; fail=1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mpirun_ok=0
if out=$(. "$M/env.sh" && env -u LD_PRELOAD "$M/usr/bin/mpirun" --allow-run-as-root --oversubscribe -np 2 hostname 2>&1) &&
   [ "$(grep -cx "$(hostname)" <<<"$out")" -eq 2 ]; then
  echo "ok   relocated mpirun -np 2 hostname: two lines"; mpirun_ok=1
else bad "relocated mpirun -np 2 hostname: '$out'"; fi

for w in stock relinked; do
  f=$B/corpus/mpi_ranks.$w
  [ -x "$f" ] || { bad "$f missing"; continue; }
  readelf -d "$f" | grep -q 'NEEDED.*\[libmpi\.so' || bad "$f is not linked with libmpi"
  miss=$(. "$M/env.sh" && ldd "$f" | grep "not found" | grep -v libcuda)
  [ -z "$miss" ] || bad "$f: with $M/env.sh, libraries not found: $miss"
  if [ "$w" = relinked ]; then
    nm "$f" | grep -q '__cudaRegisterLinkedBinary_.*devmalloc_cu' || bad "$f carries no devmalloc device code"
    ! nm "$f" | grep -Eq ' [TtWw] (malloc|free)$' || bad "$f defines a host malloc/free"
  else
    ! nm "$f" | grep -q devmalloc_cu || bad "$f is linked with devmalloc"
  fi
done
[ $fail -eq 0 ] && echo "ok   mpi_ranks built stock and relinked against $M"

out=$(BUILD=$tmp/none bash "$case" 2>&1)
[ "$out" = "SKIP mpi: no Open MPI in $tmp/none/mpi-root (tools/setup-deps.sh --for check unpacks it where Debian's packages can be reached)" ] &&
  echo "ok   case without Open MPI: SKIP" || bad "case without Open MPI: '$out'"
if ! (. "$root/tools/need-gpu.sh" && need_gpu x) 2>/dev/null; then
  out=$(BUILD=$B bash "$case" 2>&1 | grep -E '^(PASS|FAIL|SKIP) ')
  [[ "$out" == "SKIP mpi: the MPI case needs a GPU: none found"* ]] &&
    echo "ok   case without a GPU: SKIP" || bad "case without a GPU: '$out'"
fi

# The verdicts: fake programs (rank 0 prints the digest; each rank says where
# it ran and what it allocated, and under LD_PRELOAD prints a stats line) run
# by the real mpirun, a stand-in nvidia-smi listing $FAKE_NGPU GPUs.
[ $mpirun_ok -eq 1 ] || { echo "check_mpi: $fail"; exit 1; }
mkdir -p "$tmp/b/corpus" "$tmp/bin"
ln -s "$(cd "$M" && pwd)" "$tmp/b/mpi-root"
cp -L "$(ls "$M"/usr/lib/*/libz.so.1 | head -1)" "$tmp/b/libdevmalloc_preload.so"  # any library loads
cat >"$tmp/bin/nvidia-smi" <<'SH'
#!/bin/sh
i=0; while [ $i -lt "${FAKE_NGPU:-1}" ]; do echo "GPU $i: Fake (UUID: GPU-$i)"; i=$((i + 1)); done
SH
chmod +x "$tmp/bin/nvidia-smi"
fake() {  # fake WAY DIGEST ALLOCS_OF_RANK1
  cat >"$tmp/b/corpus/mpi_ranks.$1" <<SH
#!/bin/bash
r=\$OMPI_COMM_WORLD_RANK n=\$OMPI_COMM_WORLD_SIZE nd=\${FAKE_NGPU:-1}
[ -z "\${CUDA_VISIBLE_DEVICES:-}" ] || nd=1
echo "mpi_ranks: rank \$r of \$n on device \$((r % nd)) of \$nd: 1000 nodes allocated" >&2
[ "\$r" != 0 ] || echo "digest mpi_ranks $2 ranks \$n"
a=1000; [ "\$r" = 0 ] || a=$3
[ -z "\${LD_PRELOAD:-}" ] || echo "devmalloc: stats: context 1 (device 0): heap 128 MiB, allocs \$a, frees \$a, failures 0, peak 1 bytes, large 0" >&2
SH
  chmod +x "$tmp/b/corpus/mpi_ranks.$1"
}
verdicts() { PATH="$tmp/bin:$PATH" BUILD=$tmp/b GPU_TMP=$tmp/run bash "$case" 2>&1 | grep -E '^(PASS|FAIL|SKIP) '; }
expect() {  # expect VERDICT NAME [TEXT]
  local got; got=$(grep -E "^[A-Z]+ $2(:|$)" <<<"$out" | head -1)
  if [[ "$got" != "$1 $2"* ]] || { [ -n "${3:-}" ] && [[ "$got" != *"$3"* ]]; }; then
    bad "want '$1 $2${3:+ ...$3...}', got '${got:-nothing}'"
  fi
}
fake stock 00000000000000aa 1000; fake relinked 00000000000000aa 1000
out=$(FAKE_NGPU=1 verdicts)
expect SKIP mpi/two_gpus "one GPU (needs two)"
expect PASS mpi/one_gpu/stock "00000000000000aa ranks 2"
expect PASS mpi/one_gpu/relinked "rank 0: 1000 allocations and 1000 frees, rank 1: 1000"
expect PASS mpi/one_gpu/shim "served by devmalloc"
[ "$(wc -l <<<"$out")" -eq 4 ] || bad "one GPU: want 4 verdicts, got '$out'"
fake stock 00000000000000aa 3; fake relinked 00000000000000bb 1000
out=$(FAKE_NGPU=2 verdicts)
expect PASS mpi/two_gpus/stock
expect FAIL mpi/two_gpus/relinked "differs from stock's"
expect FAIL mpi/two_gpus/shim "rank 1 allocated 1000 nodes, devmalloc counted 3"
expect PASS mpi/one_gpu/stock
[ "$(wc -l <<<"$out")" -eq 6 ] || bad "two GPUs: want 6 verdicts, got '$out'"
[ $fail -eq 0 ] && echo "ok   case verdicts with fake programs under the real mpirun (one GPU, two GPUs)"
exit $fail
