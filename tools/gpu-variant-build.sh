#!/usr/bin/env bash
# tools/gpu-variant-build.sh NAME [NVCC FLAGS...] — a build of the benchmark's
# devmalloc side in a build folder of its own, build/variants/NAME (the
# Makefile's rules with BUILD there), its device module compiled with the
# extra flags given (e.g. -DNAME to switch an experiment on), for one
# architecture, so that builds can be compared in one GPU call
# (tools/gpu-ab-variants.sh build/variants/A build/variants/B). Needs no GPU.
# VARIANT_LTO=1: the benchmark linked with -dlto against the LTO-IR library
# instead (malloc and free inlined into its kernels; the binary carries its
# code, so it runs on a GPU machine without this toolkit), its kernels'
# registers capped at VARIANT_LTO_MAXRREG (default: no cap).
#   VARIANT_ARCH=90  VARIANT_MAXRREG=24 (the device module's register cap; default: mk/device.mk's)
#   VARIANT_LTO=1  VARIANT_LTO_MAXRREG=32
set -eu
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: $0 NAME [NVCC FLAGS...]" >&2; exit 2; }
d=build/variants/$1
shift
bin=$d/bench/ab_devmalloc
[ "${VARIANT_LTO:-0}" = 1 ] && bin=$d/bench/ab_devmalloc_lto
make --no-print-directory BUILD="$d" GPU_ARCHS="${VARIANT_ARCH:-90}" ${VARIANT_MAXRREG:+DEVICE_MAXRREG="$VARIANT_MAXRREG"} \
  DEVICE_EXTRA_FLAGS="$*" BENCH_LTO_ARCH="${VARIANT_ARCH:-90}" BENCH_LTO_MAXRREG="${VARIANT_LTO_MAXRREG:-}" "$bin"
ln -f "$bin" "$d/ab_devmalloc" # where gpu-ab-variants.sh looks
echo "$d/ab_devmalloc"
