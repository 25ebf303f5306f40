#!/usr/bin/env bash
# setup-deps.sh — the Debian packages devmalloc builds and tests with.
# Required packages missing are installed, or the script stops naming what to
# install (exit 1). Optional packages never stop it: each one still missing
# is named in one line, with what it is for; the tests that need it SKIP and
# say why.
#
#   tools/setup-deps.sh [--if-missing] [--for build|check|gpu] [--built] [--mpi-root DIR]
#     --for check   (the default; make check) required: the build's packages
#                   and cmocka; optional ones are installed when missing, and
#                   Open MPI is unpacked into the MPI root (tools/setup-mpi.sh)
#     --for build   (make, make install) required: the build's packages;
#                   optional ones are not looked at
#     --for gpu     (make gpu-check, make bench) required: the build's
#                   packages; optional ones are named when missing, not
#                   installed (GPU machines often have no package mirror)
#     --built       the build's products are up to date, so its packages are
#                   not needed (a prebuilt tree on a machine without them)
#     --if-missing  print nothing when nothing is missing
#     --mpi-root DIR  where Open MPI's Debian packages are unpacked, not
#                   installed, to travel with the build to a GPU machine
#                   (default $BUILD/mpi-root, BUILD defaulting to build): the
#                   MPI corpus program and GPU case 23_mpi use it. Optional
#                   like the packages above; --for build does not look at it
# SETUP_DEPS_ROOT (for tests): a directory that stands in for / where the
# required packages' files are looked for.
set -euo pipefail
root=${SETUP_DEPS_ROOT:-}
mode=check built=0 quiet=0 mpi_root=${BUILD:-build}/mpi-root
while [ $# -gt 0 ]; do
  case $1 in
    --if-missing) quiet=1 ;;
    --built) built=1 ;;
    --for) mode=${2:-}; shift ;;
    --for=*) mode=${1#*=} ;;
    --mpi-root) mpi_root=${2:-}; shift ;;
    --mpi-root=*) mpi_root=${1#*=} ;;
    *) echo "setup-deps: unknown argument $1 (--if-missing, --for build|check|gpu, --built, --mpi-root DIR)" >&2; exit 2 ;;
  esac
  shift
done
case $mode in build|check|gpu) ;; *) echo "setup-deps: --for takes build, check or gpu" >&2; exit 2 ;; esac

# package|file that shows it is installed (required) or what it is for (optional)
build_pkgs=("libelf-dev|/usr/include/libelf.h" "libzstd-dev|/usr/include/zstd.h" "liblz4-dev|/usr/include/lz4.h")
check_pkgs=("libcmocka-dev|/usr/include/cmocka.h" "pkg-config|/usr/bin/pkg-config")
optional=("clang|the fuzz targets (make check runs each a few seconds)"
          "libclang-rt-dev|libFuzzer, for the fuzz targets"
          "libjemalloc2|the shim beside jemalloc (check_interposers, GPU case shim_coexist)"
          "libtcmalloc-minimal4|the shim beside tcmalloc (check_interposers, GPU case shim_coexist)"
          "cmake|the CMake recipe and the README's CMake snippet (check_relink_products, check_readme_cmake)"
          "python3-matplotlib|the benchmark's and devmalloc report's plots (tables are printed without it)"
          "clang-format|the sources' format check (check_format)")

want=()
[ $built -eq 1 ] || want+=("${build_pkgs[@]}")
[ "$mode" != check ] || want+=("${check_pkgs[@]}")
missing_req() { local e; for e in "${want[@]}"; do [ -e "$root${e#*|}" ] || echo "${e%%|*}"; done; }
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
missing_opt() {
  [ "$mode" != build ] || return 0
  local e; for e in "${optional[@]}"; do installed "${e%%|*}" || echo "${e%%|*}"; done
}

req=($(missing_req)) opt=($(missing_opt))
if [ ${#req[@]} -eq 0 ] && [ ${#opt[@]} -eq 0 ]; then
  [ $quiet -eq 1 ] || echo "setup-deps: all present"
else
  toinstall=("${req[@]}")
  [ "$mode" != check ] || toinstall+=("${opt[@]}")
  if [ ${#toinstall[@]} -gt 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup-deps: installing ${toinstall[*]}"
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    export DEBIAN_FRONTEND=noninteractive
    if $SUDO apt-get update -qq >/dev/null 2>&1; then
      [ ${#req[@]} -eq 0 ] || $SUDO apt-get install -y -qq --no-install-recommends "${req[@]}" >/dev/null 2>&1 || true
      # one at a time: one that the mirror lacks does not keep the others out
      if [ "$mode" = check ]; then
        for p in "${opt[@]}"; do
          $SUDO apt-get install -y -qq --no-install-recommends "$p" >/dev/null 2>&1 || true
        done
      fi
    fi
  fi
  req=($(missing_req)) opt=($(missing_opt))
  for e in "${optional[@]}"; do
    for p in "${opt[@]}"; do
      [ "$p" != "${e%%|*}" ] || echo "setup-deps: optional $p not installed: needed by ${e#*|}; those tests skip"
    done
  done
  if [ ${#req[@]} -gt 0 ]; then
    echo "setup-deps: required package(s) missing: ${req[*]}; install them: sudo apt-get install ${req[*]}" >&2
    exit 1
  fi
fi
# Open MPI, unpacked into the MPI root (its env.sh is written last); like the
# optional packages, set up for check and named when missing, never fatal.
mpi_for="the MPI corpus program mpi_ranks and GPU case 23_mpi"
if [ "$mode" != build ] && [ -n "$mpi_root" ] && [ ! -f "$mpi_root/env.sh" ]; then
  why="tools/setup-deps.sh --for check sets it up where Debian's packages can be reached"
  if [ "$mode" = check ]; then
    if why=$(bash "$(dirname "$0")/setup-mpi.sh" "$mpi_root" 2>&1 >/dev/null); then
      echo "setup-deps: Open MPI unpacked into $mpi_root (for $mpi_for)"
    else why=${why##*$'\n'}; fi
  fi
  [ -f "$mpi_root/env.sh" ] || echo "setup-deps: optional Open MPI not set up in $mpi_root: needed by $mpi_for; those tests skip (${why#setup-mpi: })"
fi
if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "setup-deps: nvcc (CUDA Toolkit 13) not found: install it and put it on PATH" >&2
  exit 1
fi
