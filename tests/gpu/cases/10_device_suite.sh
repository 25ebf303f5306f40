#!/usr/bin/env bash
# The device module on the GPU: sizes 1 B .. 1 GiB x 1 .. 1M threads, aligned
# entry, mixed/divergent/cross-kernel/new-delete, exhaustion, misuse, stats;
# then mixed sizes until NULL on a fresh 256 MiB heap; then a 64 MiB heap's
# repeated passes (16 B, 256 B, 1 KiB, two sizes a warp).
set -u
B=${BUILD:-build}/gpu
"$B/dm_suite"
rc=$?
"$B/dm_suite" --mixed-fill || rc=1
"$B/dm_suite" --small-heap || rc=1
exit $rc
