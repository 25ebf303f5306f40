/*
 * sizeclass.c — size classes of the slab and orders of the buddy tree.
 *
 * Classes are powers of two from 16 B to 8 KiB with a 3/4 step between them
 * from 48 B on (48, 96, 192, ... 6144): every class is a multiple of 16, so
 * every slot is 16-byte aligned, and the worst rounding loss is 25% instead
 * of 50%. A request with alignment above 16 uses the power-of-two class of
 * max(size, align); slots of class p sit at 1024 + i*p in a 128 KiB chunk,
 * so they are aligned to min(p, 1024). Larger alignments go to the buddy tree.
 * Slots at a 16 KiB-aligned address are never used: free() tells slab from
 * buddy blocks (all 16 KiB aligned) by that alignment. With the 1024-byte
 * offset this skips at most 1/16 of a class's slots (3 KiB), usually none.
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
  int pow2_only = align > DM_MIN_ALIGN;
  if (pow2_only) {
    if (align > DM_SLAB_DATA_OFF) return -1;
    if (size < align) size = align;
  }
  if (size > DM_SLAB_MAX) return -1;
  if (size <= 16) return 0;
  if (size <= 32) return 1;
  uint32_t k = 64u - (uint32_t)dm_clz64(size - 1); /* 2^k >= size, k >= 6 */
  int idx = 3 + 2 * ((int)k - 6);
  if (!pow2_only && size <= (3ull << (k - 2))) idx--;
  return idx;
}
