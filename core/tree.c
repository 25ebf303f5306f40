/*
 * tree.c — requests to the buddy tree for every caller (slab.c's chunks,
 * heap.c's large blocks): a fast "no memory" answer when the pool has too few
 * free bytes, admission by the bytes in flight, a block of the request's
 * order from the block cache before the tree (blockcache.c), the cached
 * blocks and the chunks bins keep given back (blockcache.c, reclaim.c) when
 * the tree cannot serve, more memory for a heap that grows (grow.c), and a
 * few retries for requests that failed only because others were splitting.
 *
 * Calls: grow.c, reclaim.c, fresh.c, blockcache.c, buddy.c, counters.c.
 * Locking: no lock of its own; the footprint and the bytes in flight are atomic counters.
 */
#include "dm_internal.h"

/* Fewer free bytes in the pool than `bytes`: no retry can help. The
 * footprint is raised as blocks are taken (tree_took, dm_tree_take_chunks)
 * and lowered before they are freed, so it never exceeds what is held and
 * this never says "full" early.
 * Checked before touching the tree: the requests of a full heap that each
 * went through the tree's semaphores (and retried there) made a kernel of
 * failing requests 100x slower per call than one of succeeding ones. */
static DM_INLINE int heap_full(dm_heap_t *h, uint64_t bytes) {
  uint64_t held = dm_load64(&h->hstats->footprint);
  return held > h->buddy.pool_bytes || h->buddy.pool_bytes - held < bytes;
}

/* Admission: a request counts its bytes in flight before it touches the
 * tree. While the bytes held and those in flight leave no room for it, it
 * takes its count back and waits (loads only) for the requests ahead of it
 * to settle, boundedly, then answers from the bytes held. In a kernel whose
 * requests mostly fail, without this each climbed the tree, failed at the
 * root and retried (docs/decisions.md, "Tree admission"). Returns 1 with
 * the bytes counted (tree_settle takes them back), 0 when the pool is full. */
static DM_INLINE int tree_admit(dm_heap_t *h, uint64_t bytes) {
  uint64_t *inflight = &h->hstats->inflight;
  for (uint32_t waits = 0, ns = 256;; waits++) {
    uint64_t ahead = dm_add64(inflight, bytes);
    uint64_t held = dm_load64(&h->hstats->footprint);
    if (held + ahead + bytes <= h->buddy.pool_bytes || waits >= DM_ADMIT_WAITS) return 1;
    dm_add64(inflight, (uint64_t)0 - bytes);
    if (heap_full(h, bytes) && !dm_reclaim_chunks(h)) return 0;
    dm_pause_ns(ns);
    if (ns < 4096) ns *= 2;
  }
}

/* The request's blocks are held from now: the footprint counts them at once
 * (counted later by the callers, a block taken from the block cache was in
 * neither count for a while, and requests arriving meanwhile saw room that
 * was gone and went up the tree). */
static DM_INLINE uint64_t tree_took(dm_heap_t *h, uint64_t bytes, uint64_t node) {
  dm_heap_hold(h, bytes);
  return node;
}
static DM_INLINE uint64_t tree_settle(dm_heap_t *h, uint64_t bytes, uint64_t node) {
  if (node) tree_took(h, bytes, node);
  dm_add64(&h->hstats->inflight, (uint64_t)0 - bytes);
  return node;
}

/* No block of `order` can be had: fewer free bytes in the pool than one
 * such block, with the kept empty chunks already counted out (a caller's
 * dm_tree_alloc that just failed ran the reclaim pass). A warp whose run of
 * blocks failed asks this before it asks again lane by lane: in a full heap
 * those 32 one-block requests in turn were what a failing request cost. */
DM_FN int dm_tree_no_room(dm_heap_t *h, uint32_t order) {
  return heap_full(h, 1ull << (order + DM_LEAF_SHIFT));
}

/* k adjacent blocks of `order` from the tree (k = 1: one block; see
 * dm_buddy_alloc_run) for any caller: chunks for slab.c, large blocks for
 * heap.c; first node or 0, the blocks counted in the footprint. When the
 * tree cannot serve the blocks:
 *   1. give the tree a fresh heap's chunks that no bin took (fresh.c),
 *      the blocks the block cache keeps and the empty chunks that bins
 *      keep (what the tree lacks may sit there, in memory that is mapped
 *      already);
 *   2. in a heap that grows, ask grow.c for more mapped memory (it waits for
 *      the host, boundedly);
 *   3. otherwise fail only when the pool lacks the bytes, or when no
 *      block of the request's size is free and none is on its way (no
 *      split, merge or release in flight: dm_buddy_settled_empty). A
 *      request that reaches the root with nothing to split while others
 *      split, merge or release (an empty heap's first kernel: every
 *      request arrives while the fresh chunks are being released) waits
 *      and tries again, for at most DM_TREE_WAIT_NS: contention is a
 *      reason to wait, never to fail. Expectations are unwound before
 *      each pause.
 * A heap that grows at its maximum is a fixed heap: the same rule applies.
 */
DM_COLD uint64_t dm_tree_alloc(dm_heap_t *h, uint32_t order, uint32_t k) {
  uint64_t bytes = (uint64_t)k << (order + DM_LEAF_SHIFT);
  uint32_t j = 0;
  while ((1u << j) < k) j++;
  if (heap_full(h, bytes) && !dm_reclaim_chunks(h)) return 0; /* counts kept empty chunks */
  uint64_t kept = dm_bcache_take(h, order + j);
  if (kept) return tree_took(h, bytes, dm_buddy_run_from(&h->buddy, kept, order, k));
  if (!tree_admit(h, bytes)) return 0;
  uint64_t t0 = 0;
  for (uint32_t grows = 0, ns = 256;;) {
    uint64_t node = dm_buddy_alloc_run(&h->buddy, order, k);
    if (node) {
      if (h->grow) dm_grow_ahead(h);
      DM_ASSERT(!h->grow || dm_buddy_node_offset(&h->buddy, node) + bytes <= dm_load64(&h->grow->released));
      return tree_settle(h, bytes, node);
    }
    if (dm_fresh_release(h) || dm_bcache_flush(h) || dm_reclaim_chunks(h)) continue;
    if (h->grow && grows < DM_GROW_TRIES && dm_grow_more(h, order + j)) {
      grows++;
      continue;
    }
    if (heap_full(h, bytes) || dm_buddy_settled_empty(&h->buddy, order + j)) return tree_settle(h, bytes, 0);
    uint64_t now = dm_now_ns();
    if (!t0)
      t0 = now;
    else if (now - t0 > DM_TREE_WAIT_NS)
      return tree_settle(h, bytes, 0);
    dm_pause_ns(ns);
    if (ns < 8192) ns *= 2;
  }
}

/* Up to k chunks for a bin's grow (slab.c), their indices in idx, counted in
 * the footprint: a fresh heap's first (one fetch-add for the run), then freed
 * chunk-sized blocks the block cache keeps (a ring operation each), else a
 * run of k from the tree, else one through dm_tree_alloc. Returns how many
 * (0: none could be had). The one way the slab gets chunks. */
DM_FN uint32_t dm_tree_take_chunks(dm_heap_t *h, uint32_t k, uint32_t *idx) {
  uint32_t first, got;
  if ((got = dm_fresh_take(h, k, &first)) != 0)
    for (uint32_t i = 0; i < got; i++) idx[i] = first + i;
  for (uint64_t y; got < k && (y = dm_bcache_take(h, DM_CHUNK_ORDER)) != 0;)
    idx[got++] = (uint32_t)(dm_buddy_node_offset(&h->buddy, y) >> DM_CHUNK_SHIFT);
  uint32_t counted = 0; /* chunks that dm_tree_alloc counted in the footprint */
  if (!got) {
    uint64_t node = k > 1 ? dm_buddy_alloc_run(&h->buddy, DM_CHUNK_ORDER, k) : 0;
    got = k;
    if (!node) {
      got = counted = 1;
      node = dm_tree_alloc(h, DM_CHUNK_ORDER, 1);
    }
    if (!node) return 0;
    uint32_t first = (uint32_t)(dm_buddy_node_offset(&h->buddy, node) >> DM_CHUNK_SHIFT);
    for (uint32_t i = 0; i < got; i++) idx[i] = first + i;
  }
  uint64_t bytes = (uint64_t)(got - counted) << DM_CHUNK_SHIFT; /* held from now */
  if (bytes) dm_heap_hold(h, bytes);
  return got;
}
