/*
 * sizeclass.c — size classes of the slab and orders of the buddy tree.
 *
 * Classes (31): 16, 32, 48, 64, then four steps between powers of two, a
 * quarter of the lower one apart: 80, 96, 112, 128, 160, 192, 224, 256, ...
 * 3584, 4096, 6144, 7168, 8192 (dm_class_size). Every class is a multiple of
 * 16, so every slot is 16-byte aligned; a request of 65..4096 B is rounded up
 * by less than 25% (uniform sizes of 16..4096 B fill 92% of the slots they
 * take, against 86% with the earlier steps of 3/4). 5 KiB is left out
 * (4097..6144 B take 6144): when slots at 16 KiB-aligned addresses were not
 * served it would have used 89.8% of its chunk, below the 90% every class
 * keeps; now its 25 slots would use 97.7%, and it could be the 32nd class,
 * the most a chunk's tag keeps (not done: the public per-class counters
 * would change size). Powers of two keep classes of their own.
 *
 * The lookup is closed form, for the GPU's sake: the leading bit of size-1
 * gives the power of two, the next two bits the step. A request with
 * alignment above 16 uses the power-of-two class of max(size, align); slots
 * of class p sit at off + i*p in a 128 KiB chunk, where the class's offset
 * is a multiple of min(p, 1024) (layout.c), so they are aligned to
 * min(p, 1024). Larger alignments go to the buddy tree. Slots at a 16
 * KiB-aligned address are never used: free() tells slab from buddy blocks
 * (all 16 KiB aligned) by that alignment; each class's offset is chosen to
 * skip as few as it can (1024 B: 7 of 127, most classes none).
 *
 * Locking: none (pure functions).
 */
#include "dm_internal.h"

DM_FN uint32_t dm_order_of(uint64_t bytes) {
  uint64_t leaves = (bytes + (1ull << DM_LEAF_SHIFT) - 1) >> DM_LEAF_SHIFT;
  if (leaves <= 1) return 0;
  return 64u - (uint32_t)dm_clz64(leaves - 1);
}

/* Class index for a request, or -1 when the buddy tree serves it. */
DM_FN int dm_class_of(uint64_t size, uint64_t align) {
  if (align > DM_MIN_ALIGN) { /* the power-of-two class >= max(size, align) */
    if (align > DM_SLAB_ALIGN_MAX) return -1;
    if (size < align) size = align;
    if (size > DM_SLAB_MAX) return -1;
    size = 1ull << (64u - (uint32_t)dm_clz64(size - 1)); /* size > 16: no shift by 64 */
  }
  if (size > DM_SLAB_MAX) return -1;
  if (size <= 64) return size <= 16 ? 0 : (int)((size - 1) >> 4); /* 16, 32, 48, 64 */
  uint64_t m = size - 1;
  uint32_t k = 63u - (uint32_t)dm_clz64(m);       /* 2^k < size <= 2^(k+1), k >= 6 */
  uint32_t step = (uint32_t)(m >> (k - 2u)) & 3u; /* class 2^k + (step+1) * 2^(k-2) */
  uint32_t idx = 4u + 4u * (k - 6u) + step;
  return (int)(idx > DM_CLASS_GAP ? idx - 1u : idx); /* 4097..5120 share 6144 */
}
