/*
 * tree.c — requests to the buddy tree for every caller (slab.c's chunks,
 * heap.c's large blocks): a fast "no memory" answer when the pool has too few
 * free bytes, the chunks bins keep taken back first (reclaim.c) when the tree
 * cannot serve, more memory for a heap that grows (grow.c), and a few
 * retries for requests that failed only because others were splitting.
 *
 * Calls: grow.c, reclaim.c, buddy.c. Locking: none of its own.
 */
#include "dm_internal.h"

/* Fewer free bytes in the pool than `bytes`: no retry can help. The
 * footprint is raised after blocks are taken and lowered before they are
 * freed, so it never exceeds what is held and this never says "full" early.
 * Checked before touching the tree: the requests of a full heap that each
 * went through the tree's semaphores (and retried there) made a kernel of
 * failing requests 100x slower per call than one of succeeding ones. */
static DM_INLINE int heap_full(dm_heap_t *h, uint64_t bytes) {
  uint64_t held = dm_load64(&h->hstats->footprint);
  return held > h->buddy.pool_bytes || h->buddy.pool_bytes - held < bytes;
}

/* dm_tree_alloc of a heap that grows: more mapped memory, then try
 * again (grow.c); the reclaim pass (a scan of the chunks below `released`)
 * only when growing cannot help: at the maximum, the device full, or the
 * wait over. */
static DM_COLD uint64_t grow_tree_alloc(dm_heap_t *h, uint32_t order, uint32_t k) {
  uint64_t node = dm_buddy_alloc_run(&h->buddy, order, k);
  uint32_t j = 0;
  while ((1u << j) < k) j++;
  for (uint32_t n = 0; !node && n < 1024u && dm_grow_more(h, order + j); n++)
    node = dm_buddy_alloc_run(&h->buddy, order, k);
  if (!node && dm_reclaim_chunks(h)) node = dm_buddy_alloc_run(&h->buddy, order, k);
  if (node) dm_grow_ahead(h);
  DM_ASSERT(!node || dm_buddy_node_offset(&h->buddy, node) + ((uint64_t)k << (order + DM_LEAF_SHIFT)) <=
                         dm_load64(&h->grow->released));
  return node;
}

/* k adjacent blocks of `order` from the tree (k = 1: one block; see
 * dm_buddy_alloc_run) for any caller: chunks for slab.c, large blocks for
 * heap.c; first node or 0. When the tree cannot serve the blocks, return the
 * empty chunks that bins keep (what the tree lacks may sit there), and retry
 * a few times while the pool has the bytes: a GROW that reaches the root with nothing to split is
 * not always out of memory. Requests arriving together send more growers up
 * the tree than the splits in flight need, and the surplus fails at the root
 * while blocks are on their way down (a warp's run then fell back to 32
 * one-block requests). Expectations are unwound before each pause. */
DM_COLD uint64_t dm_tree_alloc(dm_heap_t *h, uint32_t order, uint32_t k) {
  if (h->grow) return grow_tree_alloc(h, order, k);
  uint64_t bytes = (uint64_t)k << (order + DM_LEAF_SHIFT);
  if (heap_full(h, bytes) && !dm_reclaim_chunks(h)) return 0; /* counts kept empty chunks */
  for (uint32_t tries = 0;; tries++) {
    uint64_t node = dm_buddy_alloc_run(&h->buddy, order, k);
    if (node) return node;
    if (dm_reclaim_chunks(h)) continue;
    if (tries >= DM_LARGE_RETRIES || heap_full(h, bytes) || dm_buddy_exhausted(&h->buddy, order))
      return 0;
    dm_pause_ns(512u << tries);
  }
}
