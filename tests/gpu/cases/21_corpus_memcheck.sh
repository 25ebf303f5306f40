#!/usr/bin/env bash
# The corpus at reduced size (CORPUS_SMALL=1) under compute-sanitizer
# memcheck: the relinked build without the shim, creating its heap itself
# (CORPUS_DEVMALLOC_INIT=1 -> devmalloc_cuda_init). Its digest must match the
# stock build's at the same size. Programs whose device code is not all in the
# executable's own image (plugin: a library; modules: driver API; cdp: child
# grids) are left to the three-way case.
set -u
. "$(dirname "$0")/../corpus/corpus_lib.sh"
if ! command -v compute-sanitizer >/dev/null; then
  echo "SKIP corpus_memcheck: compute-sanitizer not found"; exit 0; fi
export CORPUS_SMALL=1
MEMCHECK_PROGS=${CORPUS_MEMCHECK_PROGS:-"raytrace skiplist recurse polyobj scratch hashtable growarray exhaust streams thrust_cub"}
for p in $MEMCHECK_PROGS; do
  run_way "$p" stock
  r=$p.memcheck
  t0=$(date +%s%N)
  env -u LD_PRELOAD CORPUS_DEVMALLOC_INIT=1 timeout "${CORPUS_MEMCHECK_TIMEOUT:-240}" \
    compute-sanitizer --tool memcheck --print-limit 20 "$C/$p.relinked" >"$CT/$r.out" 2>"$CT/$r.err"
  rc=$?
  echo "---- corpus/$p/memcheck: rc $rc, $(( ($(date +%s%N) - t0) / 1000000 )) ms"
  sed 's/^/  out| /' "$CT/$r.out" | head -40
  sed 's/^/  err| /' "$CT/$r.err" | head -20
  d=$(grep "^digest " "$CT/$r.out" | head -1 | cut -d' ' -f1-3)
  want=$(digest_of "$p.stock" | cut -d' ' -f1-3)
  summary=$(grep -o "ERROR SUMMARY: [0-9]* error[s]*" "$CT/$r.out" "$CT/$r.err" | head -1 | sed 's/^[^:]*://')
  if [ $rc -eq 124 ]; then echo "FAIL corpus/$p/memcheck: timed out"
  elif ! grep -q "ERROR SUMMARY: 0 errors" "$CT/$r.out" "$CT/$r.err"; then
    echo "FAIL corpus/$p/memcheck: rc $rc, ${summary:-no error summary}: $(grep -m1 -E 'Invalid|Error|error' "$CT/$r.out" | cut -c1-160)"
  elif [ $rc -ne 0 ]; then echo "FAIL corpus/$p/memcheck: exit status $rc: $(grep -v '^=' "$CT/$r.err" | tail -1 | cut -c1-160)"
  elif [ -z "$want" ]; then echo "FAIL corpus/$p/memcheck: the stock run (small) gave no digest"
  elif [ "$d" != "$want" ]; then echo "FAIL corpus/$p/memcheck: digest '$d', stock '$want'"
  else echo "PASS corpus/$p/memcheck: 0 errors, digest equal to stock"; fi
done
