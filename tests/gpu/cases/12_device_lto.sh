#!/usr/bin/env bash
# The LTO-IR product: a program linked with nvcc -dlto gets devmalloc.
set -u
B=${BUILD:-build}/gpu
if "$B/dm_lto"; then echo "PASS dlto_link_uses_devmalloc"; else echo "FAIL dlto_link_uses_devmalloc"; fi
