#!/usr/bin/env bash
# check_relink_products — the relink recipes work without a GPU:
#  1. plain nvcc: tests/relink/app.cu (unchanged) + libdevmalloc_device.a at
#     the device link, for sm_90 and sm_120 (for sm_75 the link must fail,
#     naming the reason); the binary defines no host malloc/free (without the
#     __CUDA_ARCH__ guard nvcc emits host stubs that exit, replacing libc's) and its loaded device image defines devmalloc's malloc
#     (libelf on the embedded cubin, through devmalloc-inspect);
#  2. the same with `make install` into a temporary prefix + pkg-config, and
#     a program calling devmalloc_cuda_init: it needs no libdevmalloc.so at
#     run time (the host runtime is linked statically);
#  3. the same with CMake find_package(devmalloc 0.3 COMPONENTS ...) without
#     CUDA_HOME; a bogus component and a too-new version are refused;
#  4. the -dlto link with the LTO-IR library, with build/nvcc-dlto and with
#     the installed bin/devmalloc-nvcc-dlto: inspect says the image uses
#     devmalloc although the link inlined malloc;
#  5. the installed CLI: --version, `devmalloc inspect`, and `make uninstall`
#     (after two installs) leaves none of our files and none of the
#     directories install made, but keeps a directory that was there.
# Run from the repository root (make check does).
set -u
B=${BUILD:-build}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
NVCC=${NVCC:-nvcc}
fails=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fails=$((fails + 1)); }

check_binary() { # $1 name, $2 binary
  if nm "$2" | grep -Eq ' [TtWw] (malloc|free)$'; then bad "$1: defines a host malloc/free"; else ok "$1: no host malloc/free"; fi
  local out
  out=$("$B/devmalloc-inspect" "$2" 2>&1)
  if grep -q "1 with devmalloc" <<<"$out" && grep -q "devmalloc already linked in" <<<"$out"; then
    ok "$1: device image defines devmalloc's malloc"
  else
    bad "$1: device image does not hold devmalloc"; echo "$out" | tail -5
  fi
}

# 1. plain nvcc
"$NVCC" -arch=sm_90 -rdc=true tests/relink/app.cu "$B/libdevmalloc_device.a" -o "$T/app_nvcc" \
  && check_binary nvcc "$T/app_nvcc" || bad "nvcc: build failed"
# architectures: newer ones than the library's SASS get devmalloc (nvlink
# compiles its PTX, quietly: no ptxas figures printed unless asked); an
# older one (sm_75) fails to link, naming the reason
if "$NVCC" -arch=sm_120 -rdc=true tests/relink/app.cu "$B/libdevmalloc_device.a" -o "$T/app_120" >"$T/120.log" 2>&1; then
  check_binary "nvcc sm_120" "$T/app_120"
  n=$(grep -c 'ptxas info' "$T/120.log")
  [ "$n" -eq 0 ] && ok "nvcc sm_120: the device link prints no ptxas figures" ||
    bad "nvcc sm_120: the device link prints $n lines of ptxas info"
else bad "nvcc sm_120: build failed"; cat "$T/120.log"; fi
if "$NVCC" -arch=sm_75 -rdc=true tests/relink/app.cu "$B/libdevmalloc_device.a" -o "$T/app_75" >"$T/75.log" 2>&1; then
  bad "nvcc sm_75: linked (its kernels would silently keep the stock allocator)"
elif grep -q "devmalloc_needs_sm_80_or_newer" "$T/75.log"; then ok "nvcc sm_75: link refused, naming the reason"
else bad "nvcc sm_75: link failed without the reason"; cat "$T/75.log"; fi
# control: without devmalloc the same program calls the stock allocator
"$NVCC" -arch=sm_90 tests/relink/app.cu -o "$T/app_stock"
if "$B/devmalloc-inspect" "$T/app_stock" | grep -q "stock malloc: yes"; then ok "control: stock build uses the stock allocator"
else bad "control: inspect did not see the stock allocator"; fi

# 2. install + pkg-config
P="$T/prefix"
# a directory of the prefix that holds something else already (kept by uninstall)
mkdir -p "$P/share/doc" && echo other >"$P/share/doc/other"
make -s install PREFIX="$P" >/dev/null && make -s install PREFIX="$P" >/dev/null || bad "make install failed"
pcflags=$(PKG_CONFIG_PATH="$P/lib/pkgconfig" pkg-config --cflags --libs devmalloc)
if "$NVCC" -arch=sm_90 -rdc=true tests/relink/app.cu $pcflags -o "$T/app_pc"; then check_binary pkg-config "$T/app_pc"
else bad "pkg-config: build failed ($pcflags)"; fi
if "$NVCC" -arch=sm_90 -rdc=true tests/relink/app_init.cu $pcflags -o "$T/app_init"; then
  if readelf -d "$T/app_init" | grep NEEDED | grep -q libdevmalloc; then bad "pkg-config: app needs libdevmalloc.so at run time"
  else ok "pkg-config: devmalloc_cuda_init program needs no libdevmalloc.so"; fi
else bad "pkg-config: devmalloc_cuda_init program: build failed"; fi

# 3. CMake
if command -v cmake >/dev/null; then
  if env -u CUDA_HOME cmake -S tests/relink -B "$T/cm" -DCMAKE_PREFIX_PATH="$P" -DCMAKE_CUDA_COMPILER="$(command -v "$NVCC")" >"$T/cm.log" 2>&1 \
     && cmake --build "$T/cm" >>"$T/cm.log" 2>&1; then
    check_binary cmake "$T/cm/app"
  else
    bad "cmake: configure/build failed"; tail -20 "$T/cm.log"
  fi
  for want in "COMPONENTS bogus:has no component 'bogus'" "99.0:compatible with requested version"; do
    mkdir -p "$T/cmbad"
    printf 'cmake_minimum_required(VERSION 3.18)\nproject(p LANGUAGES CXX)\nfind_package(devmalloc %s REQUIRED)\n' \
      "${want%%:*}" >"$T/cmbad/CMakeLists.txt"
    if cmake -S "$T/cmbad" -B "$T/cmbad/b" -DCMAKE_PREFIX_PATH="$P" >"$T/cmbad.log" 2>&1; then
      bad "cmake: find_package(devmalloc ${want%%:*}) accepted"
    elif grep -q "${want#*:}" "$T/cmbad.log"; then ok "cmake: find_package(devmalloc ${want%%:*}) refused"
    else bad "cmake: find_package(devmalloc ${want%%:*}) failed without the reason"; tail -5 "$T/cmbad.log"; fi
    rm -rf "$T/cmbad"
  done
else
  echo "skip cmake recipe: cmake not installed (optional; tools/setup-deps.sh installs it)"
fi

# 4. -dlto
# LTO inlines devmalloc's malloc into the kernels, so the loaded image has no
# malloc symbol at all: inspect must still say it uses devmalloc (it defines
# devmalloc_heap_desc) and that it no longer calls the stock allocator.
if "$B/nvcc-dlto" -arch=sm_90 -dlto -rdc=true tests/relink/app.cu "$B/libdevmalloc_device_lto.a" -o "$T/app_lto"; then
  check_binary dlto "$T/app_lto"
  loaded=$("$B/devmalloc-inspect" "$T/app_lto" | sed -n '/section .nv_fatbin/,/section __nv_relfatbin/p' | grep -E '^ +ELF ')
  if [ -n "$loaded" ] && ! grep -q "stock malloc: yes" <<<"$loaded" && grep -q "devmalloc: yes" <<<"$loaded"; then
    ok "dlto: loaded image uses devmalloc, not the stock allocator"
  else bad "dlto: loaded image: $loaded"; fi
else
  bad "dlto: build failed"
fi
if XDG_CACHE_HOME="$T/cache" "$P/bin/devmalloc-nvcc-dlto" -arch=sm_90 -dlto -rdc=true tests/relink/app.cu \
     "$P/lib/libdevmalloc_device_lto.a" -o "$T/app_lto2" 2>"$T/lto2.log"; then
  ok "dlto: installed devmalloc-nvcc-dlto links"; check_binary "dlto (installed)" "$T/app_lto2"
else bad "dlto: installed devmalloc-nvcc-dlto failed"; tail -5 "$T/lto2.log"; fi

# 5. the installed CLI, then uninstall
ver=$(sed -n 's/^#define DEVMALLOC_VERSION_STRING "\(.*\)"/\1/p' include/devmalloc.h)
[ "$("$P/bin/devmalloc" --version)" = "devmalloc $ver" ] && ok "installed: devmalloc --version" ||
  bad "installed: devmalloc --version"
if "$P/bin/devmalloc" inspect "$T/app_pc" | grep -q "devmalloc already linked in"; then ok "installed: devmalloc inspect"
else bad "installed: devmalloc inspect"; fi
"$P/bin/devmalloc" --help | grep -q DEVMALLOC_HOST_POOL_SYNC && ok "installed: --help lists every option" ||
  bad "installed: --help misses options"
out=$("$P/bin/devmalloc" bench --help 2>&1); [ $? -eq 1 ] && grep -q "needs the source tree" <<<"$out" &&
  ok "installed: devmalloc bench says it needs the source tree" || bad "installed: devmalloc bench: '$out'"
make -s uninstall PREFIX="$P" >/dev/null || bad "make uninstall failed"
left=$(find "$P" -type f | grep -i devmalloc)
[ -z "$left" ] && ok "uninstall: nothing of ours left" || bad "uninstall left: $left"
left=$(cd "$P" && find . -mindepth 1 | sort | tr '\n' ' ')
[ "$left" = "./share ./share/doc ./share/doc/other " ] &&
  ok "uninstall: the directories install made are gone, the others kept" || bad "uninstall left directories: $left"
make -s install PREFIX="$T/fresh" >/dev/null && make -s uninstall PREFIX="$T/fresh" >/dev/null
[ ! -e "$T/fresh" ] && ok "uninstall: a prefix install made is gone" || bad "uninstall left $(cd "$T/fresh" && find . | tr '\n' ' ')"
[ $fails -eq 0 ] && echo "relink products: all recipes good" || echo "relink products: $fails failed"
exit $fails
