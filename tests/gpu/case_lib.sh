# tests/gpu/case_lib.sh — sourced by the cases that run built programs
# beside the shim (tests/gpu/run.sh runs them from the repository root):
#   $B        the build folder ($BUILD, default build)
#   $SHIM_SO  the shim, as an absolute path (LD_PRELOAD needs one)
#   need_built CASE FILE...   for the first FILE that is missing, a FAIL line
#                             naming it, and the case ends (exit 0)
B=${BUILD:-build}
case $B in /*) SHIM_SO=$B/libdevmalloc_preload.so ;; *) SHIM_SO=$PWD/$B/libdevmalloc_preload.so ;; esac
need_built() {
  local c=$1 f
  shift
  for f in "$@"; do
    [ -e "$f" ] || { echo "FAIL $c: $f missing (make gpu-build)"; exit 0; }
  done
}
