#!/usr/bin/env bash
# check_setup_deps.sh — tools/setup-deps.sh on a machine without a package
# mirror (stand-ins for apt-get, dpkg-query and sudo on PATH; a directory
# standing in for / where the required packages' files are looked for):
#   - optional packages missing never fail it: one line each, naming what
#     needs them; `--for gpu` does not try to install them, `--for check` does;
#   - a required package missing stops it (exit 1) with the apt-get line;
#   - a built tree needs none of the build's packages (`--built`);
#   - `--for build` does not look at the optional ones; nothing missing and
#     --if-missing: silent;
#   - Open MPI's folder (--mpi-root) missing is optional too: one line with
#     the reason, exit 0; `--for check` tries to set it up, `--for gpu` does
#     not, `--for build` does not look.
# Run from the repository root (make check does).
set -u
fails=0
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fails=$((fails + 1)); }

mkdir -p "$T/bin" "$T/full/usr/include" "$T/full/usr/bin" "$T/nocmocka/usr/include" "$T/nocmocka/usr/bin" "$T/empty"
for f in libelf.h zstd.h lz4.h cmocka.h; do : >"$T/full/usr/include/$f"; done
for f in libelf.h zstd.h lz4.h; do : >"$T/nocmocka/usr/include/$f"; done
: >"$T/full/usr/bin/pkg-config"; : >"$T/nocmocka/usr/bin/pkg-config"
cat >"$T/bin/apt-get" <<SH
#!/bin/sh
echo "apt-get \$*" >>"$T/apt.log"
echo "E: Failed to fetch: no mirror" >&2
exit 100
SH
cat >"$T/bin/dpkg-query" <<'SH'
#!/bin/sh
for p; do :; done
case " $DM_FAKE_INSTALLED " in *" $p "*) printf 'install ok installed' ;; *) exit 1 ;; esac
SH
cat >"$T/bin/apt-cache" <<SH
#!/bin/sh
echo "apt-cache \$*" >>"$T/apt.log"
SH
printf '#!/bin/sh\nexec "$@"\n' >"$T/bin/sudo"
mkdir -p "$T/mpiok"; : >"$T/mpiok/env.sh"
chmod +x "$T/bin/"*
all_opt="clang libclang-rt-dev libjemalloc2 libtcmalloc-minimal4 cmake python3-matplotlib clang-format"

deps() { # ROOT INSTALLED ARGS...
  local r=$1 i=$2; shift 2
  rm -f "$T/apt.log"
  out=$(PATH="$T/bin:$PATH" SETUP_DEPS_ROOT="$r" DM_FAKE_INSTALLED="$i" bash tools/setup-deps.sh \
          --mpi-root "${MPI_DIR:-$T/mpiok}" "$@" 2>&1); rc=$?
}
optional_lines() { grep -c '^setup-deps: optional .* not installed: needed by .*; those tests skip$' <<<"$out"; }

deps "$T/full" "" --if-missing --for gpu
if [ $rc -eq 0 ] && [ "$(optional_lines)" -eq 7 ] && [ ! -e "$T/apt.log" ] &&
   [ "$(wc -l <<<"$out")" -eq 7 ] && grep -q 'optional cmake not installed: needed by .*CMake' <<<"$out"; then
  ok "--for gpu, optional packages missing: exit 0, one line each, no install tried"
else bad "--for gpu, optional missing: exit $rc, '$out'"; fi

deps "$T/full" "" --if-missing --for check
if [ $rc -eq 0 ] && [ "$(optional_lines)" -eq 7 ] && grep -q 'update' "$T/apt.log" 2>/dev/null; then
  ok "--for check, no mirror: optional ones tried, exit 0, one line each"
else bad "--for check, no mirror: exit $rc, '$out'"; fi

deps "$T/nocmocka" "$all_opt" --if-missing --for check
if [ $rc -eq 1 ] && grep -q 'required package(s) missing: libcmocka-dev; install them: sudo apt-get install libcmocka-dev' <<<"$out"; then
  ok "--for check, cmocka missing: exit 1 naming what to install"
else bad "--for check, cmocka missing: exit $rc, '$out'"; fi

deps "$T/empty" "$all_opt" --if-missing --for gpu
if [ $rc -eq 1 ] && grep -q 'missing: libelf-dev libzstd-dev liblz4-dev;' <<<"$out"; then
  ok "--for gpu, build packages missing, tree not built: exit 1"
else bad "--for gpu, build packages missing: exit $rc, '$out'"; fi

deps "$T/empty" "$all_opt" --if-missing --for gpu --built
[ $rc -eq 0 ] && [ -z "$out" ] && ok "--for gpu --built: the build's packages are not needed" ||
  bad "--for gpu --built: exit $rc, '$out'"

deps "$T/full" "" --if-missing --for build
[ $rc -eq 0 ] && [ -z "$out" ] && ok "--for build: optional packages not looked at" || bad "--for build: exit $rc, '$out'"

deps "$T/full" "$all_opt" --if-missing
[ $rc -eq 0 ] && [ -z "$out" ] && ok "nothing missing, --if-missing: silent" || bad "nothing missing: exit $rc, '$out'"
mpi_line='^setup-deps: optional Open MPI not set up in .*/nompi: needed by .*23_mpi; those tests skip (.*)$'
MPI_DIR=$T/nompi deps "$T/full" "$all_opt" --if-missing --for gpu
if [ $rc -eq 0 ] && [ "$(wc -l <<<"$out")" -eq 1 ] && grep -q "$mpi_line" <<<"$out" && [ ! -e "$T/apt.log" ]; then
  ok "--for gpu, no Open MPI folder: exit 0, one line, no download tried"
else bad "--for gpu, no Open MPI folder: exit $rc, '$out'"; fi
MPI_DIR=$T/nompi deps "$T/full" "$all_opt" --if-missing --for check
if [ $rc -eq 0 ] && [ "$(wc -l <<<"$out")" -eq 1 ] && grep -q "$mpi_line" <<<"$out" &&
   grep -q "knows no openmpi-bin" <<<"$out" && grep -q "apt-cache depends" "$T/apt.log" 2>/dev/null &&
   [ ! -e "$T/nompi/env.sh" ]; then
  ok "--for check, no mirror: Open MPI tried, exit 0, one line with the reason"
else bad "--for check, no Open MPI: exit $rc, '$out'"; fi
MPI_DIR=$T/nompi deps "$T/full" "$all_opt" --if-missing --for build
[ $rc -eq 0 ] && [ -z "$out" ] && ok "--for build: Open MPI not looked at" || bad "--for build, no Open MPI: exit $rc, '$out'"

deps "$T/full" "$all_opt" --bogus
[ $rc -eq 2 ] && ok "unknown argument: exit 2" || bad "unknown argument: exit $rc"

[ $fails -eq 0 ] && echo "check_setup_deps: all passed" || { echo "check_setup_deps: $fails failed"; exit 1; }
