/*
 * heap.c — the heap's top level: a request's size, and large blocks from the
 * buddy tree (through tree.c) and their frees. Slab requests are served by
 * slab_grant.c; the callers (device/devmalloc.cu on the GPU, core/single.c
 * for one caller, as in the host tests) combine the two, and devmalloc.cu
 * aggregates requests of a warp.
 * Calls run one way, each file calling only files before it in core_unity.h:
 * heap.c -> slab_grant.c -> slab_grow.c -> slab.c -> tree.c -> grow.c ->
 * reclaim.c -> fresh.c -> blockcache.c -> buddy.c -> sem.c (tree.c: requests
 * to the tree for chunks and large blocks; reclaim.c: the empty chunks bins
 * keep, back to the tree; fresh.c: a fixed heap's chunks that nothing used
 * yet; blockcache.c: freed large blocks kept whole for the next request).
 * counters.c (the counters, the footprint, the caller's arena) and
 * check_mode.c call nothing in the core; any file may call them.
 *
 * A heap that grows (h->grow): a tree request that fails asks grow.c for
 * more mapped memory and tries again, one that succeeds lets grow.c ask the
 * host ahead of need (watermark): both in tree.c.
 *
 * Locking: none here beyond what buddy.c, slab.c and grow.c take.
 */
#include "dm_internal.h"

/* The bytes a request of `size` is served: at least the heap's min_block,
 * rounded up to a multiple of round + 1. By default that is a 32-byte L1
 * sector, and the classes that serve such sizes start their slots on sector
 * boundaries (layout.c), so no two blocks share a sector, as with the stock
 * allocator: a program that publishes a block through an atomic and reads it
 * on another SM with plain loads (a data race the L1 cache can expose) then
 * never reads a neighbour's stale sector (docs/design.md, "Programs that
 * read published blocks with plain loads"). */
DM_FN uint64_t dm_heap_request_size(const dm_heap_t *h, uint64_t size) {
  if (size < h->min_block) size = h->min_block;
  if (h->check) size += DM_CHECK_TAIL;
  return size <= DM_SLAB_MAX ? dm_heap_round(h, size) : size;
}

/* Bytes of tree node `node`'s block. */
DM_FN uint64_t dm_heap_node_bytes(const dm_heap_t *h, uint64_t node) {
  return 1ull << (dm_buddy_order(&h->buddy, node) + DM_LEAF_SHIFT);
}

/* Order of the tree block for a large request, DM_MAX_ORDERS when none fits. */
DM_FN uint32_t dm_heap_large_order(const dm_heap_t *h, uint64_t size, uint64_t align) {
  uint64_t need = size > align ? size : align;
  uint32_t order = need <= h->buddy.pool_bytes ? dm_order_of(need) : DM_MAX_ORDERS;
  return order <= h->buddy.top ? order : DM_MAX_ORDERS;
}

static DM_INLINE void note_large(dm_heap_t *h, uint32_t arena, uint32_t order, uint32_t k) {
  uint64_t bytes = (uint64_t)k << (order + DM_LEAF_SHIFT);
  dm_add64(&h->astats[arena].large_allocs, k);
  dm_add64(&h->astats[arena].large_bytes, bytes); /* the footprint: dm_tree_alloc */
}

/* k adjacent blocks of `order` in one tree operation (a warp's lanes with the
 * same request; the blocks are aligned to their size, up to the pool's
 * alignment, so the caller keeps this for align <= 16 KiB). Returns the first
 * block, NULL when no block of k blocks' size is free (the caller then
 * allocates one by one, which may still succeed). */
DM_COLD char *dm_heap_malloc_run(dm_heap_t *h, uint32_t order, uint32_t k, uint32_t arena) {
  uint64_t node = dm_tree_alloc(h, order, k);
  if (!node) return 0;
  note_large(h, arena, order, k);
  return dm_buddy_addr(&h->buddy, node);
}

/* A block of at least max(size, align) bytes from the buddy tree. */
DM_COLD void *dm_heap_malloc_large(dm_heap_t *h, uint64_t size, uint64_t align, uint32_t arena) {
  uint32_t order = dm_heap_large_order(h, size, align);
  uint64_t node = order != DM_MAX_ORDERS ? dm_tree_alloc(h, order, 1) : 0;
  if (!node) {
    dm_heap_note_failure(h, arena, 1);
    return 0;
  }
  char *p = dm_buddy_addr(&h->buddy, node);
  if (((uint64_t)(uintptr_t)p & (align - 1)) != 0) { /* beyond the pool's own alignment */
    dm_heap_unhold(h, dm_heap_node_bytes(h, node));
    dm_buddy_free(&h->buddy, node);
    dm_heap_note_failure(h, arena, 1);
    return 0;
  }
  note_large(h, arena, order, 1);
  return p;
}

/* The allocated large block at pool offset `off` (16 KiB aligned), or 0 with
 * *why saying which misuse it is. */
DM_FN uint64_t dm_heap_large_lookup(dm_heap_t *h, uint64_t off, int *why) {
  if (h->grow && off >= dm_load64(&h->grow->released)) { /* held by the grower: never handed out */
    *why = DM_FREE_FOREIGN;
    return 0;
  }
  uint64_t node = dm_buddy_lookup(&h->buddy, off, why);
  if (node && dm_buddy_order(&h->buddy, node) == DM_CHUNK_ORDER &&
      dm_chunk_class(h, (uint32_t)(off >> DM_CHUNK_SHIFT)) != DM_NUM_CLASSES) {
    *why = DM_FREE_FOREIGN; /* a slab chunk's base: never handed out */
    return 0;
  }
  return node;
}

/* Free k = 2^j allocated blocks: the run under node y (j = 0: one block),
 * which the caller made one plain block (its nodes BUSY, not split: the
 * warp's lanes' stores, ordered before this call). Those stores and the
 * block's reach the next owner through the block cache's release or the
 * fence before the tree's free. */
DM_FN void dm_heap_free_nodes(dm_heap_t *h, uint64_t y, uint32_t j, uint32_t arena) {
  uint64_t bytes = dm_heap_node_bytes(h, y);
  dm_heap_unhold(h, bytes); /* before the memory can be reused */
  if (!dm_bcache_put(h, y)) {
    dm_fence();
    dm_buddy_free(&h->buddy, y);
  }
  dm_add64(&h->astats[arena].large_frees, 1ull << j);
  dm_add64(&h->astats[arena].large_bytes, (uint64_t)0 - bytes);
}

/* Free the large block at pool offset `off`. Returns DM_FREE_OK or the kind
 * of misuse (counted). */
DM_FN int dm_heap_free_large(dm_heap_t *h, uint64_t off, uint32_t arena) {
  int why;
  uint64_t node = dm_heap_large_lookup(h, off, &why);
  if (!node) {
    dm_heap_note_misuse(h, why);
    return why;
  }
  dm_heap_free_nodes(h, node, 0, arena);
  return DM_FREE_OK;
}
