#!/usr/bin/env bash
# check_device_lib_hidden.sh ARCHIVE... — the device library's objects give
# every host symbol nvcc or devmalloc.cu defines (fatbin wrappers, module
# registration, the descriptor writer) hidden visibility, so that a shared
# library linked with the device library does not export them: an executable
# linked with devmalloc too would otherwise bind its own module registration
# to the library's copy. Reads the symbol tables with readelf.
set -u
status=0
for a in "$@"; do
  [ -f "$a" ] || { echo "FAIL $a: missing"; status=1; continue; }
  out=$(readelf -sW "$a" 2>&1) || { echo "FAIL $a: readelf: $out"; status=1; continue; }
  n=$(awk '$5 == "GLOBAL" && $7 != "UND" && $8 ~ /^(__fatbinwrap_|__nv_|devmalloc__)/' <<<"$out" | wc -l)
  leaked=$(awk '$5 == "GLOBAL" && $6 == "DEFAULT" && $7 != "UND" && $8 ~ /^(__fatbinwrap_|__nv_|devmalloc__)/ {print $8}' <<<"$out" | sort -u)
  if [ "$n" -eq 0 ]; then
    echo "FAIL $a: no fatbin wrapper or devmalloc__ symbol found (the check would pass on anything)"; status=1
  elif [ -n "$leaked" ]; then
    echo "FAIL $a: exported from any shared library it is linked into: $(echo $leaked)"; status=1
  else
    echo "ok   $a: $n module symbols, all hidden"
  fi
done
exit $status
