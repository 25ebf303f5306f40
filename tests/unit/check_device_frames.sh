#!/usr/bin/env bash
# check_device_frames.sh FRAMES DEVICE_MK JIT_LINK_H PTX "ARCHS" — the device
# entry points stay within their documented stack frames (docs/design.md,
# "Calling convention"), the register cap of the device library and of the
# load-time re-link are the same number, and devmalloc's PTX compiled at
# that cap (what the re-link does, with the toolkit's ptxas standing in for
# the driver's) gives malloc and free the frames of the library, for each
# architecture the library is built for (FRAMES lists them in that order).
set -u
frames=$1 mk=$2 hdr=$3 ptx=$4 archs=$5
MALLOC_FRAME_MAX=128 # bytes; malloc's own frame (all but the common path out of line)
FREE_FRAME_MAX=96
fail=0
[ -s "$frames" ] || { echo "FAIL: $frames is empty (no ptxas -v output)"; exit 1; }
# "frame spill-stores" from a ptxas -v figure
frame_fields() { sed -E 's/.* ([0-9]+) bytes stack frame, ([0-9]+) bytes spill stores.*/\1 \2/'; }
check() { # name max
  local n=0
  while read -r bytes; do
    n=$((n + 1))
    if [ "$bytes" -gt "$2" ]; then echo "FAIL: $1 stack frame $bytes bytes > $2"; fail=1; fi
  done < <(grep -E "device entry $1[[:space:]]" "$frames" | frame_fields | cut -d' ' -f1)
  [ "$n" -gt 0 ] || { echo "FAIL: no ptxas figures for $1"; fail=1; }
  echo "ok: $1 frame <= $2 bytes ($n architectures)"
}
check malloc "$MALLOC_FRAME_MAX"
check free "$FREE_FRAME_MAX"
mk_cap=$(sed -n 's/^DEVICE_MAXRREG *:= *\([0-9]*\).*/\1/p' "$mk")
h_cap=$(sed -n 's/^#define DM_DEVICE_MAXRREG *\([0-9]*\).*/\1/p' "$hdr")
if [ -z "$mk_cap" ] || [ "$mk_cap" != "$h_cap" ]; then
  echo "FAIL: register cap differs: $mk DEVICE_MAXRREG='$mk_cap', $hdr DM_DEVICE_MAXRREG='$h_cap'"; fail=1
else
  echo "ok: register cap $mk_cap in the build and the re-link"
fi
ptxas=$(command -v ptxas || echo "${CUDA_HOME:-/usr/local/cuda}/bin/ptxas")
frame_of() { grep -A1 -E "properties for $1\$" | grep 'bytes stack frame' | frame_fields; } # ptxas -v
i=0
for a in $archs; do
  i=$((i + 1))
  jit=$("$ptxas" -arch=sm_$a -maxrregcount="$mk_cap" -c -v "$ptx" -o /dev/null 2>&1) ||
    { echo "FAIL: ptxas of $ptx for sm_$a failed"; fail=1; continue; }
  for fn in malloc free; do
    lib=$(grep -E "device entry $fn[[:space:]]" "$frames" | frame_fields | sed -n "${i}p")
    got=$(echo "$jit" | frame_of "$fn")
    if [ -z "$lib" ] || [ "$got" != "$lib" ]; then
      echo "FAIL: $fn on sm_$a: re-linked PTX frame/spills '$got', library '$lib'"; fail=1
    else
      echo "ok: $fn on sm_$a: re-linked PTX frame and spills as the library's ($lib bytes)"
    fi
  done
done
exit $fail
