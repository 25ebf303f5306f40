/*
 * core_unity.h — the allocator core's sources as one translation unit, for
 * each CUDA file that runs the core on the GPU (devmalloc.cu, the device
 * library; trim_kernel.cu, the host runtime's trim kernel). The order is the
 * order of calls, bottom up (heap.c says which way they run).
 */
#ifndef DM_CORE_UNITY_H
#define DM_CORE_UNITY_H
#include "dm_internal.h"
#include "sem.c"
#include "counters.c"
#include "check_mode.c"
#include "buddy.c"
#include "blockcache.c"
#include "fresh.c"
#include "sizeclass.c"
#include "reclaim.c"
#include "grow.c"
#include "tree.c"
#include "slab.c"
#include "slab_grow.c"
#include "slab_grant.c"
#include "slab_free.c"
#include "heap.c"
#endif
