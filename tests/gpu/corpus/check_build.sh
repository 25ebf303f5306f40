#!/usr/bin/env bash
# check_build.sh DIR "PROGS" — host check (no GPU) that the corpus is built:
# every program has its stock and relinked build, and no relinked binary
# defines a host malloc/free (the device definitions must stay device-only).
set -u
dir=$1; progs=$2; fail=0
for p in $progs; do
  for w in stock relinked; do
    f=$dir/$p.$w
    if [ ! -x "$f" ]; then echo "FAIL corpus build: $f missing"; fail=1; continue; fi
    if [ "$w" = relinked ] && nm "$f" 2>/dev/null | grep -Eq ' [TtWw] (malloc|free)$'; then
      echo "FAIL corpus build: $f defines a host malloc/free"; fail=1
    fi
  done
done
for so in stock relinked; do
  [ -f "$dir/$so/libcorpus_plugin.so" ] || { echo "FAIL corpus build: $dir/$so/libcorpus_plugin.so missing"; fail=1; }
done
[ -f "$dir/modules_kern.ptx" ] || { echo "FAIL corpus build: $dir/modules_kern.ptx missing"; fail=1; }
# the relinked builds carry devmalloc's device code (its registration symbol);
# modules links devmalloc at run time instead
for f in $(for p in $progs; do [ "$p" = modules ] || echo "$dir/$p.relinked"; done) "$dir/relinked/libcorpus_plugin.so"; do
  [ -f "$f" ] || continue
  nm "$f" 2>/dev/null | grep -q '__cudaRegisterLinkedBinary_.*devmalloc_cu' ||
    { echo "FAIL corpus build: $f carries no devmalloc device code"; fail=1; }
done
for p in $progs; do
  f=$dir/$p.stock
  [ -f "$f" ] && nm "$f" 2>/dev/null | grep -q 'devmalloc_cu' &&
    { echo "FAIL corpus build: $f is linked with devmalloc"; fail=1; }
done
[ $fail -eq 0 ] && echo "corpus build: $(echo "$progs" | wc -w) programs, stock and relinked: ok"
exit $fail
