# need-gpu.sh — sourced by the GPU scripts (tests/gpu/run.sh, bench/run.sh):
#   need_gpu WHAT
# exits 2 with one line "WHAT needs a GPU: ..." when nvidia-smi -L lists no
# GPU (no driver, no device, or nvidia-smi missing). Run as a program
# (`bash tools/need-gpu.sh WHAT`, the Makefile's GPU goals) it does the same.
need_gpu() {
  local l="nvidia-smi not found"
  if command -v nvidia-smi >/dev/null 2>&1; then
    l=$(nvidia-smi -L 2>&1) && grep -q '^GPU ' <<<"$l" && return 0
    l=${l%%$'\n'*}; l=${l:-no GPU listed}
  fi
  echo "$1 needs a GPU: none found on this machine ($l)" >&2
  exit 2
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then need_gpu "${1:-this}"; fi
