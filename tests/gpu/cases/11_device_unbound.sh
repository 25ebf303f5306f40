#!/usr/bin/env bash
# A relinked program with no heap bound: malloc returns NULL, the condition is
# counted and reported once, the kernel completes.
set -u
B=${BUILD:-build}/gpu
out=$("$B/dm_unbound" 2>&1); rc=$?
echo "$out"
n=$(grep -c "devmalloc: no heap bound" <<<"$out")
if [ $rc -eq 0 ] && [ "$n" -eq 1 ]; then echo "PASS unbound_heap_reported_once"
else echo "FAIL unbound_heap_reported_once: rc=$rc, message printed $n times"; fi
