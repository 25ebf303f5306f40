#!/usr/bin/env bash
# setup-mpi.sh DIR — Open MPI from Debian's packages, unpacked (not installed)
# into DIR, to be carried to a GPU machine that has no package mirror and run
# from there (the MPI corpus program, GPU case 23_mpi). tools/setup-deps.sh
# --for check calls it with DIR = build/mpi-root when that is missing.
#
#   - `apt-get download` of openmpi-bin, libopenmpi-dev and, of their run-time
#     dependencies (apt-cache depends --recurse), those a bare machine may lack:
#     the Open MPI library package, openmpi-common, PMIx, hwloc, libevent,
#     munge, libudev, libnuma, zlib (glibc, libgcc and libstdc++ are assumed);
#   - `dpkg -x` of each into DIR, then only what mpirun and an MPI program
#     need is kept: no docs, man pages, Fortran, Java, OpenSHMEM, C++ bindings
#     or compiler wrappers; the network transports for other fabrics (UCX,
#     libfabric, verbs, PSM) are not brought, and every plug-in whose
#     libraries are not in DIR (nor glibc's, libgcc's, libstdc++'s) is removed;
#   - DIR/env.sh (source it) points Open MPI and PMIx at DIR: OPAL_PREFIX,
#     PMIX_INSTALL_PREFIX, PATH, LD_LIBRARY_PATH; MPI_INC and MPI_LIB name the
#     folders of mpi.h and libmpi.so. It is written last: DIR without it is
#     not a finished set-up.
# Exit 0 when DIR is ready (or was), 1 with one line on stderr otherwise.
set -euo pipefail
dest=${1:?usage: tools/setup-mpi.sh DIR}
[ -f "$dest/env.sh" ] && exit 0
die() { echo "setup-mpi: $*" >&2; exit 1; }
command -v apt-get >/dev/null 2>&1 || die "apt-get not found"
command -v dpkg >/dev/null 2>&1 || die "dpkg not found"
command -v readelf >/dev/null 2>&1 || die "readelf not found (binutils)"
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)

mkdir -p "$(dirname "$dest")"
tmp=$(cd "$(mktemp -d "$(dirname "$dest")/.setup-mpi.XXXXXX")" && pwd); trap 'rm -rf "$tmp"' EXIT
# apt-get download as root writes through the _apt user when it can
chmod 777 "$tmp"
# The packages: openmpi-bin's run-time closure, less what any machine has and
# the other fabrics' packages; names with their release suffixes (t64) kept.
keep_re='^(libopenmpi[0-9]|openmpi-(bin|common)$|libpmix[0-9]|libhwloc[0-9]|libevent-(core|pthreads)-|libmunge[0-9]|libudev[0-9]|libnuma[0-9]|zlib1g$)'
pkgs=$(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
         --no-replaces --no-enhances openmpi-bin 2>/dev/null | grep -v '^ ' | grep -E "$keep_re" | sort -u) || true
case " $(echo $pkgs) " in *" openmpi-bin "*) ;; *)
  die "apt-cache knows no openmpi-bin (run apt-get update, or no Debian mirror here)" ;; esac
(cd "$tmp" && apt-get download -qq libopenmpi-dev $pkgs >"$tmp/download.log" 2>&1) ||
  die "apt-get download failed: $(grep -E '^(E|Err):' "$tmp/download.log" | head -1)"
mkdir "$tmp/root"
for d in "$tmp"/*.deb; do dpkg -x "$d" "$tmp/root"; done

r=$tmp/root L=$tmp/root/usr/lib/$ma
[ -x "$r/usr/bin/orterun" ] && [ -f "$L/openmpi/include/mpi.h" ] || die "the packages hold no orterun or mpi.h"
# one library folder (zlib's package puts its library in /lib)
if [ -d "$r/lib/$ma" ]; then cp -a "$r/lib/$ma/." "$L/"; rm -rf "$r/lib"; fi
# What mpirun and a C/C++ MPI program need, no more.
rm -rf "$r/usr/share/doc" "$r/usr/share/man" "$r/usr/share/lintian" "$r/usr/share/doc-base" \
  "$r/etc/openmpi/openmpi-totalview.tcl" "$L/fortran" "$L/pkgconfig" "$L/openmpi/lib/pkgconfig" \
  "$L/openmpi/include/openmpi" "$L/openmpi/include/"{mpif,shmem,pshmem}* "$L/openmpi/include/openshmem" \
  "$L/openmpi/include/"*.mod "$r/usr/share/java" "$r/usr/lib/jni"
find "$r/usr/bin" -mindepth 1 ! -name orterun ! -name orted ! -name ompi_info -exec rm -f {} +
ln -s orterun "$r/usr/bin/mpirun"; ln -s orterun "$r/usr/bin/mpiexec"
find "$r/usr/share/openmpi" -name '*wrapper-data.txt' -delete
find "$L" \( -name 'liboshmem*' -o -name 'libmpi_java*' -o -name 'libmpi_mpifh*' -o -name 'libmpi_usempi*' \
  -o -name 'libmpi_cxx*' -o -name 'libompitrace*' -o -name 'mca_spml_*' -o -name 'mca_sshmem_*' \
  -o -name 'mca_scoll_*' -o -name 'mca_memheap_*' -o -name 'mca_atomic_*' -o -name 'mca_io_romio*' \
  -o -name '*.a' -o -name '*.la' \) -exec rm -f {} +
find "$r" -xtype l -delete   # links left dangling by the above

# Every shared object's NEEDED must be found in DIR or be glibc's, libgcc's or
# libstdc++'s; plug-ins that need anything else (another fabric's library) go,
# until none is left.
base=" libc.so.6 libm.so.6 libpthread.so.0 libdl.so.2 librt.so.1 libutil.so.1 ld-linux-x86-64.so.2 libgcc_s.so.1 libstdc++.so.6 "
have=" $(find "$r" \( -type f -o -type l \) -name '*.so*' -printf '%f ') "
for _ in 1 2 3 4 5; do
  gone=0
  while read -r f; do
    for n in $(readelf -d "$f" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
      case "$base$have" in *" $n "*) ;; *) rm -f "$f"; gone=1; break ;; esac
    done
  done < <(find "$r" -type f \( -name '*.so*' -o -path '*/usr/bin/*' \))
  [ $gone -eq 1 ] || break
  find "$r" -xtype l -delete
  have=" $(find "$r" \( -type f -o -type l \) -name '*.so*' -printf '%f ') "
done
for f in usr/bin/orterun usr/bin/orted "usr/lib/$ma/openmpi/lib/libmpi.so"; do
  [ -e "$r/$f" ] || die "$f has libraries that the packages do not bring"
done
find "$r" -type d -empty -delete

cat >"$r/env.sh" <<EOS
# Source this: Open MPI and PMIx run from the folder it is in.
MPI_ROOT=\$(cd "\$(dirname "\${BASH_SOURCE[0]}")" && pwd)
export OPAL_PREFIX=\$MPI_ROOT/usr
export OPAL_SYSCONFDIR=\$MPI_ROOT/etc/openmpi
# PMIx's folders are configured as absolute paths: each one is named
export PMIX_INSTALL_PREFIX=\$MPI_ROOT/usr/lib/$ma/pmix2
export PMIX_LIBDIR=\$PMIX_INSTALL_PREFIX/lib PMIX_PKGLIBDIR=\$PMIX_INSTALL_PREFIX/lib/pmix
export PMIX_DATAROOTDIR=\$PMIX_INSTALL_PREFIX/share PMIX_DATADIR=\$PMIX_INSTALL_PREFIX/share
export PMIX_PKGDATADIR=\$PMIX_INSTALL_PREFIX/share/pmix
export PATH=\$MPI_ROOT/usr/bin:\$PATH
export LD_LIBRARY_PATH=\$MPI_ROOT/usr/lib/$ma/openmpi/lib:\$MPI_ROOT/usr/lib/$ma:\$MPI_ROOT/usr/lib/$ma/pmix2/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}
MPI_INC=\$MPI_ROOT/usr/lib/$ma/openmpi/include
MPI_LIB=\$MPI_ROOT/usr/lib/$ma/openmpi/lib
EOS
rm -rf "$dest"
mv "$r" "$dest"
echo "setup-mpi: Open MPI $(sed -n 's/^openmpi-bin_\([^_]*\)_.*/\1/p' < <(cd "$tmp" && ls)) in $dest ($(du -sh "$dest" | cut -f1))"
