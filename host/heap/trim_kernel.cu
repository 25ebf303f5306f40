/*
 * trim_kernel.cu — the host runtime's own device code: the trim of a heap
 * that grows (dm_grow_trim, core/grow.c) as a kernel, so that it runs where
 * the tree lives, safely beside kernels that allocate and free. Compiled to a
 * fatbin that libdevmalloc embeds (mk/host_heap.mk) and loads per context at the
 * first trim (host/heap/growth.c); not part of the device library.
 *
 * One thread: dm_grow_trim takes the growth lock and works a granule at a
 * time; the result (the new top of the released range) goes to *out, in
 * the host-mapped block the runtime's service thread polls (it then unmaps
 * above that top and lifts the ceiling the trim set).
 */
#include "core_unity.h"

extern "C" __global__ void devmalloc_trim_kernel(dm_heap_t *h, unsigned long long floor,
                                                 unsigned long long unit, unsigned long long *out) {
  if (threadIdx.x == 0 && blockIdx.x == 0) {
    unsigned long long r = dm_grow_trim(h, floor, unit);
    __threadfence_system(); /* the ceiling reaches the host before the result */
    *(volatile unsigned long long *)out = r;
  }
}
