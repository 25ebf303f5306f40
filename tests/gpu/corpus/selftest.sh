#!/usr/bin/env bash
# selftest.sh — host check (no GPU) of the corpus case's verdicts: fake
# programs stand in for the corpus builds and the shim's stats lines, and
# tests/gpu/cases/20_corpus.sh must pass, fail or skip each way as it should.
set -u
root=$(cd "$(dirname "$0")/../../.." && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/b/corpus"; touch "$tmp/b/libdevmalloc_preload.so"
# fake P MODE: the stock build prints a digest; under LD_PRELOAD it prints the
# shim's stats line. MODE picks what the relinked build does wrong, if anything.
fake() {
  local p=$1 mode=$2
  cat >"$tmp/b/corpus/$p.stock" <<EOS
#!/bin/bash
echo "digest $p 00000000000000aa"
if [ -n "\${LD_PRELOAD:-}" ]; then
  case $mode in
    rdc) echo "devmalloc: library 0x1 (cuLibraryLoadData): not bound: no devmalloc in the image; not re-linked: x: no PTX in the fatbin (SASS only cannot be re-linked)" >&2
         echo "devmalloc: stats: no heap was created" >&2 ;;
    *) echo "devmalloc: stats: context 1 (device 0): heap 256 MiB, allocs 99999999, frees 99999999, failures 0, peak 1 bytes, large 0" >&2 ;;
  esac
fi
EOS
  cat >"$tmp/b/corpus/$p.relinked" <<EOS
#!/bin/bash
case $mode in
  differ) echo "digest $p 00000000000000bb" ;;
  crash) echo "x.cu:1: cudaDeviceSynchronize(): an illegal memory access was encountered" >&2; exit 1 ;;
  nodigest) ;;
  *) echo "digest $p 00000000000000aa" ;;
esac
case $mode in
  unserved) echo "devmalloc: stats: context 1 (device 0): heap 256 MiB, allocs 3, frees 3, failures 0, peak 1 bytes, large 0" >&2 ;;
  *) echo "devmalloc: stats: context 1 (device 0): heap 256 MiB, allocs 99999999, frees 99999999, failures 0, peak 1 bytes, large 0" >&2 ;;
esac
EOS
  chmod +x "$tmp/b/corpus/$p.stock" "$tmp/b/corpus/$p.relinked"
}
fake raytrace ok; fake recurse differ; fake polyobj crash; fake scratch nodigest
fake hashtable unserved; fake skiplist rdc
out=$(BUILD=$tmp/b GPU_TMP=$tmp CORPUS_PROGS="raytrace recurse polyobj scratch hashtable skiplist" \
      bash "$root/tests/gpu/cases/20_corpus.sh" 2>&1 | grep -E "^(PASS|FAIL|SKIP) ")
fail=0
expect() {  # expect VERDICT NAME [TEXT]
  local src=$out got
  got=$(grep -E "^[A-Z]+ $2(:|$)" <<<"$src" | head -1)
  if [[ "$got" != "$1 $2"* ]] || { [ -n "${3:-}" ] && [[ "$got" != *"$3"* ]]; }; then
    echo "FAIL selftest: want '$1 $2${3:+ ...$3...}', got '${got:-nothing}'"; fail=1
  fi
}
expect PASS corpus/raytrace/stock
expect PASS corpus/raytrace/relinked "allocations"
expect PASS corpus/raytrace/shim
expect FAIL corpus/recurse/relinked "differs from stock"
expect PASS corpus/recurse/shim
expect FAIL corpus/polyobj/relinked "illegal memory access"
expect FAIL corpus/scratch/relinked "no digest"
expect FAIL corpus/hashtable/relinked "counted 3 allocations"
expect PASS corpus/skiplist/relinked
expect FAIL corpus/skiplist/shim "counted 0 allocations"
[ $fail -eq 0 ] && echo "corpus case selftest: verdicts as expected ($(wc -l <<<"$out") lines)"
exit $fail
