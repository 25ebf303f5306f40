#!/usr/bin/env bash
# tools/gpu-session.sh — one call on a GPU machine: build with every core,
# say which tools the machine has, run GPU suite cases and the benchmark, copy
# logs to $OUT, print a short summary last.
#   GPU_CASES="10_device_suite 16_device_first"  cases to run (default: all)
#   BENCH="--quick"                              also run the benchmark with these args
#   NO_SUITE=1                                   skip the suite
set -u
cd "$(dirname "$0")/.."
export PATH=/usr/local/cuda/bin:$PATH OUT=${OUT:-$(mktemp -d)}
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | head -2
for t in ncu compute-sanitizer cuobjdump nvdisasm cmake mpirun; do
  printf '%s: %s\n' "$t" "$(command -v $t >/dev/null && echo yes || echo no)"
done
printf 'mpi-root (Open MPI carried in build/): %s\n' "$([ -f build/mpi-root/env.sh ] && echo yes || echo no)"
# A build carried from a build machine (the GPU machines may lack libelf's and
# cmocka's headers) is used as it is; only the -dlto overlay, which points at
# the toolkit of the machine that made it, is made again here.
if [ -e build/libdevmalloc_preload.so ]; then
  rm -rf build/nvcc-dlto build/cuda-dlto build/gpu/dm_lto
  make DEPS_CHECK=true build/nvcc-dlto build/gpu/dm_lto >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; echo "BUILD FAILED"; exit 1; }
else
  make -j"$(nproc)" DEPS_CHECK=true gpu-build >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; echo "BUILD FAILED"; exit 1; }
fi
echo "build: $(( $(date +%s) - t0 )) s"
if [ -z "${NO_SUITE:-}" ]; then
  bash tests/gpu/run.sh >"$OUT/suite.out" 2>&1
  grep -E "^(FAIL|SKIP) " "$OUT/gpu-suite.log" | head -40
  grep -E "^cell .*first=[1-9]|^probe|^stock" "$OUT/gpu-suite.log" | head -40
  echo "suite: $(tail -1 "$OUT/suite.out") ($(( $(date +%s) - t0 )) s)"
fi
if [ -n "${BENCH:-}" ]; then
  # shellcheck disable=SC2086
  bash bench/run.sh --out "$OUT/bench" $BENCH >"$OUT/bench.out" 2>&1
  tail -60 "$OUT/bench.out"
  (cd "$OUT" && tar czf bench.tgz bench 2>/dev/null && rm -rf bench)
fi
echo "total: $(( $(date +%s) - t0 )) s"
