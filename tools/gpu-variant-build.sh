#!/usr/bin/env bash
# tools/gpu-variant-build.sh NAME [NVCC FLAGS...] — build/variants/NAME/ab_devmalloc:
# the benchmark relinked with the device module compiled from this tree with
# extra nvcc flags (e.g. -DNAME to switch an experiment on), for one
# architecture, so that builds can be compared in one GPU call
# (tools/gpu-ab-variants.sh build/variants/A build/variants/B). Needs no GPU;
# run `make` first (the host library and cuda_init.o). Each binary links the
# host library as it is now: a change to the heap's layout (core/dm_types.h)
# needs a variant of its own host library (VARIANT_HOST_LIB).
#   VARIANT_ARCH=90  VARIANT_MAXRREG=32  VARIANT_SRC=device/devmalloc.cu  VARIANT_HOST_LIB=build/libdevmalloc.a
set -eu
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: $0 NAME [NVCC FLAGS...]" >&2; exit 2; }
name=$1
shift
nvcc=${NVCC:-${CUDA_HOME:-/usr/local/cuda}/bin/nvcc}
arch=${VARIANT_ARCH:-90}
host_lib=${VARIANT_HOST_LIB:-build/libdevmalloc.a}
for f in "$host_lib" build/device/cuda_init.o; do
  [ -f "$f" ] || { echo "$0: $f missing (run make first)" >&2; exit 2; }
done
d=build/variants/$name
mkdir -p "$d"
gen="-gencode arch=compute_$arch,code=sm_$arch"
# shellcheck disable=SC2086
"$nvcc" -O3 -std=c++17 -Iinclude -Icore -Xcompiler -fPIC -rdc=true -Xcompiler -fvisibility=hidden \
  -maxrregcount="${VARIANT_MAXRREG:-32}" $gen "$@" -dc "${VARIANT_SRC:-device/devmalloc.cu}" -o "$d/devmalloc.o"
"$nvcc" -lib "$d/devmalloc.o" build/device/cuda_init.o -o "$d/libdevmalloc_device.a"
# shellcheck disable=SC2086
"$nvcc" -O3 -std=c++17 -Iinclude -DDM_BENCH_DEVMALLOC $gen -rdc=true bench/ab_bench.cu \
  "$d/libdevmalloc_device.a" "$host_lib" -lcuda -o "$d/ab_devmalloc"
rm -f "$d/devmalloc.o" "$d/libdevmalloc_device.a"
echo "$d/ab_devmalloc"
