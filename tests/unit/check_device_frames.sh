#!/usr/bin/env bash
# check_device_frames.sh FRAMES DEVICE_MK JIT_LINK_H — the device entry points
# stay within their documented stack frames (docs/design.md, "Calling
# convention"), and the register cap of the device library and of the
# load-time re-link are the same number.
set -u
frames=$1 mk=$2 hdr=$3
MALLOC_FRAME_MAX=128 # bytes; malloc's own frame (all but the common path out of line)
FREE_FRAME_MAX=96
fail=0
[ -s "$frames" ] || { echo "FAIL: $frames is empty (no ptxas -v output)"; exit 1; }
check() { # name max
  local n=0
  while read -r bytes; do
    n=$((n + 1))
    if [ "$bytes" -gt "$2" ]; then echo "FAIL: $1 stack frame $bytes bytes > $2"; fail=1; fi
  done < <(grep -E "device entry $1[[:space:]]" "$frames" | sed -E 's/.*[[:space:]]([0-9]+) bytes stack frame.*/\1/')
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
exit $fail
