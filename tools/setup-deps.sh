#!/usr/bin/env bash
# Install the Debian packages devmalloc builds and tests with, when missing.
#   tools/setup-deps.sh               install what is missing
#   tools/setup-deps.sh --if-missing  same, silent when nothing is missing
set -euo pipefail
# build: libelf, cmocka, zstd, lz4, pkg-config; tests: the jemalloc and
# tcmalloc preloads the shim is checked beside (check_interposers), cmake for
# the installed-package recipe; benchmark plots: matplotlib.
pkgs=(libelf-dev libcmocka-dev libzstd-dev liblz4-dev pkg-config
      libjemalloc2 libtcmalloc-minimal4 cmake python3-matplotlib)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  [ "${1:-}" = "--if-missing" ] || echo "setup-deps: all present"
  exit 0
fi
echo "setup-deps: installing ${missing[*]}"
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "setup-deps: nvcc (CUDA Toolkit 13) not found: install it and put it on PATH" >&2
  exit 1
fi
