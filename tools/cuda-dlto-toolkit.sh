#!/usr/bin/env bash
# Print the nvcc to use for -dlto links.
#
# nvlink's LTO looks for libnvvm at <toolkit>/nvvm/lib64/libnvvm.so. Some
# toolkit installs (e.g. this project's build machines) have it only under
# <toolkit>/lib64. Then we build a private overlay toolkit in $1 made of
# symbolic links to the real one, plus nvvm/lib64/libnvvm.so, and print its
# nvcc; otherwise we print the real nvcc. The toolkit itself is never changed.
set -euo pipefail
out=${1:?usage: cuda-dlto-toolkit.sh OVERLAY_DIR [CUDA_HOME]}
cuda=${2:-$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")}
if [ -e "$cuda/nvvm/lib64/libnvvm.so" ]; then echo "$cuda/bin/nvcc"; exit 0; fi
lib=$(ls "$cuda"/lib64/libnvvm.so "$cuda"/targets/*/lib/libnvvm.so 2>/dev/null | head -1 || true)
if [ -z "$lib" ]; then
  echo "cuda-dlto-toolkit: libnvvm.so not found under $cuda: -dlto links will fail" >&2
  echo "$cuda/bin/nvcc"; exit 0
fi
if [ ! -x "$out/bin/nvcc" ]; then
  echo "cuda-dlto-toolkit: $cuda lacks nvvm/lib64/libnvvm.so; using overlay $out" >&2
  rm -rf "$out"; mkdir -p "$out/bin" "$out/nvvm/lib64"
  for f in "$cuda"/bin/*; do [ "$(basename "$f")" = nvcc.profile ] || ln -s "$f" "$out/bin/"; done
  cp "$cuda/bin/nvcc.profile" "$out/bin/"
  for d in include lib lib64 targets; do [ -e "$cuda/$d" ] && ln -s "$cuda/$d" "$out/$d"; done
  for d in "$cuda"/nvvm/*; do ln -s "$d" "$out/nvvm/"; done
  ln -s "$lib" "$out/nvvm/lib64/libnvvm.so"
fi
echo "$out/bin/nvcc"
