#!/usr/bin/env bash
# check_relink_products — the relink recipes work without a GPU:
#  1. plain nvcc: tests/relink/app.cu (unchanged) + libdevmalloc_device.a at
#     the device link; the binary defines no host malloc/free (the pitfall of
#     DESIGN.md) and its loaded device image defines devmalloc's malloc (libelf
#     on the embedded cubin, through devmalloc-inspect);
#  2. the same with `make install` + pkg-config;
#  3. the same with `make install` + CMake find_package(devmalloc);
#  4. the -dlto link with the LTO-IR library.
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
# control: without devmalloc the same program calls the stock allocator
"$NVCC" -arch=sm_90 tests/relink/app.cu -o "$T/app_stock"
if "$B/devmalloc-inspect" "$T/app_stock" | grep -q "stock malloc: yes"; then ok "control: stock build uses the stock allocator"
else bad "control: inspect did not see the stock allocator"; fi

# 2. install + pkg-config
make -s install DESTDIR="$T/root" PREFIX=/opt/devmalloc >/dev/null || bad "make install failed"
P="$T/root/opt/devmalloc"
pcflags=$(PKG_CONFIG_SYSROOT_DIR="$T/root" PKG_CONFIG_PATH="$P/lib/pkgconfig" pkg-config --cflags --libs devmalloc)
if "$NVCC" -arch=sm_90 -rdc=true tests/relink/app.cu $pcflags -o "$T/app_pc"; then check_binary pkg-config "$T/app_pc"
else bad "pkg-config: build failed ($pcflags)"; fi

# 3. CMake
if command -v cmake >/dev/null; then
  if cmake -S tests/relink -B "$T/cm" -DCMAKE_PREFIX_PATH="$P" -DCMAKE_CUDA_COMPILER="$(command -v "$NVCC")" >"$T/cm.log" 2>&1 \
     && cmake --build "$T/cm" >>"$T/cm.log" 2>&1; then
    check_binary cmake "$T/cm/app"
  else
    bad "cmake: configure/build failed"; tail -20 "$T/cm.log"
  fi
else
  echo "skip cmake: not installed"
fi

# 4. -dlto
# LTO inlines devmalloc's malloc into the kernels, so the loaded image has no
# malloc symbol at all; what matters is that it no longer calls the stock one.
if "$B/nvcc-dlto" -arch=sm_90 -dlto -rdc=true tests/relink/app.cu "$B/libdevmalloc_device_lto.a" -o "$T/app_lto"; then
  if nm "$T/app_lto" | grep -Eq ' [TtWw] (malloc|free)$'; then bad "dlto: defines a host malloc/free"; else ok "dlto: no host malloc/free"; fi
  loaded=$("$B/devmalloc-inspect" "$T/app_lto" | sed -n '/section .nv_fatbin/,/section __nv_relfatbin/p' | grep -E '^ +ELF ')
  if [ -n "$loaded" ] && ! grep -q "stock malloc: yes" <<<"$loaded"; then ok "dlto: loaded image does not call the stock allocator"
  else bad "dlto: loaded image calls the stock allocator"; echo "$loaded"; fi
else
  bad "dlto: build failed"
fi
[ $fails -eq 0 ] && echo "relink products: all recipes good" || echo "relink products: $fails failed"
exit $fails
