#!/usr/bin/env bash
# The corpus of realistic programs (tests/gpu/corpus/), each run three ways:
# stock; relinked with the device library under the shim; the unmodified stock
# build under the shim. Outputs (result digests, device printf lines, sorted)
# must be identical to stock, and the shim's stats must show that devmalloc
# served the allocations. One line per program and way.
set -u
. "$(dirname "$0")/../corpus/corpus_lib.sh"
command -v nvidia-smi >/dev/null && echo "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
for p in $PROGS; do
  for w in stock relinked shim; do run_way "$p" "$w"; done
  for w in stock relinked shim; do check_way "$p" "$w"; done
  # modules: its NVRTC cubin cannot be re-linked; the shim says so
  if [ "$p" = modules ] && [ -f "$CT/modules.shim.err" ]; then
    n=$(grep -c "cannot be re-linked" "$CT/modules.shim.err")
    if [ "$n" -ge 1 ]; then echo "PASS corpus/modules/cubin_notice: $n line(s) say the cubin cannot be re-linked"
    else echo "FAIL corpus/modules/cubin_notice: no line says the NVRTC cubin cannot be re-linked"; fi
  fi
done
