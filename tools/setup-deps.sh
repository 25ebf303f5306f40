#!/usr/bin/env bash
# Install the Debian packages devmalloc builds and tests with, when missing.
#   tools/setup-deps.sh               install what is missing
#   tools/setup-deps.sh --if-missing  same, silent when nothing is missing
set -euo pipefail
# build: libelf, cmocka, zstd, lz4, pkg-config. Extras, for the host tests and
# the plots only: clang and its runtimes (libclang-rt-dev: libFuzzer) for the
# fuzz targets `make check` runs briefly, the jemalloc and tcmalloc preloads the shim is checked beside
# (check_interposers), cmake for the installed-package recipe, matplotlib for
# the benchmark plots. When the extras cannot be installed (a machine without
# a package mirror, e.g. a GPU machine running a prebuilt tree) this says so
# and goes on: the tests that need them fail and name the package.
required=(libelf-dev libcmocka-dev libzstd-dev liblz4-dev pkg-config)
hdrs=(/usr/include/libelf.h /usr/include/cmocka.h /usr/include/zstd.h /usr/include/lz4.h /usr/bin/pkg-config)
extras=(clang libclang-rt-dev libjemalloc2 libtcmalloc-minimal4 cmake python3-matplotlib)
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
missing=() missing_required=0
for i in "${!required[@]}"; do
  [ -e "${hdrs[$i]}" ] || { missing+=("${required[$i]}"); missing_required=1; }
done
for p in "${extras[@]}"; do installed "$p" || missing+=("$p"); done
if [ ${#missing[@]} -eq 0 ]; then
  [ "${1:-}" = "--if-missing" ] || echo "setup-deps: all present"
  exit 0
fi
echo "setup-deps: installing ${missing[*]}"
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
if ! { $SUDO apt-get update -qq && \
       $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }; then
  if [ $missing_required -eq 1 ]; then
    echo "setup-deps: could not install ${missing[*]}" >&2; exit 1
  fi
  echo "setup-deps: warning: could not install ${missing[*]} (needed by make check and the plots only)" >&2
fi
if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "setup-deps: nvcc (CUDA Toolkit 13) not found: install it and put it on PATH" >&2
  exit 1
fi
