#!/usr/bin/env bash
# Install the Debian packages devmalloc builds and tests with, when missing.
#   tools/setup-deps.sh               install what is missing
#   tools/setup-deps.sh --if-missing  same, silent when nothing is missing
set -euo pipefail
# clang: the libFuzzer targets that `make check` runs for a few seconds each.
# python3-matplotlib: `devmalloc report` and the benchmark plots.
pkgs=(libelf-dev libcmocka-dev libzstd-dev liblz4-dev pkg-config clang python3-matplotlib)
hdrs=(/usr/include/libelf.h /usr/include/cmocka.h /usr/include/zstd.h /usr/include/lz4.h /usr/bin/pkg-config /usr/bin/clang
      /usr/lib/python3/dist-packages/matplotlib/__init__.py)
missing=()
for i in "${!pkgs[@]}"; do [ -e "${hdrs[$i]}" ] || missing+=("${pkgs[$i]}"); done
if [ ${#missing[@]} -eq 0 ]; then
  [ "${1:-}" = "--if-missing" ] || echo "setup-deps: all present"
  exit 0
fi
echo "setup-deps: installing ${missing[*]}"
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "setup-deps: nvcc (CUDA Toolkit 13) not found: install it and put it on PATH" >&2
  exit 1
fi
