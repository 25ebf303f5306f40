#!/usr/bin/env bash
# A block freed right after its owner's last stores and handed at once to a
# thread of another SM holds only its new owner's data (64 MiB heap, 16 B to
# 64 KiB and objects with a destructor): relinked, the plain build under the
# shim, and the plain build on stock (the reference behaviour).
set -u
. tests/gpu/case_lib.sh
need_built 15_device_reuse "$B/gpu/dm_reuse" "$B/gpu/dm_reuse_plain" "$SHIM_SO"
"$B/gpu/dm_reuse"
echo "---- plain build under the shim"
env LD_PRELOAD="$SHIM_SO" DEVMALLOC_HEAP_SIZE=64M "$B/gpu/dm_reuse_plain" 2>&1 |
  sed 's/^\(PASS\|FAIL\) reuse_/\1 shim_reuse_/'
echo "---- plain build on stock"
"$B/gpu/dm_reuse_plain" 2 2>&1 | sed 's/^\(PASS\|FAIL\) reuse_/\1 stock_reuse_/'
