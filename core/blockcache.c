/*
 * blockcache.c — freed large blocks kept whole, one ring per order, for the
 * next request of that order: a front of the buddy tree that coalesces
 * lazily.
 *
 * Every large free used to go through the tree (node locks, the order's
 * semaphore, merges up the tree), and a kernel freeing 16 KiB blocks ran at
 * a twentieth of the peer's rate. A free that the cache keeps costs three
 * atomics on its order's ring and a CAS on one slot; the next request of the
 * order (a warp's run of 32 blocks is one block of order + 5) takes it back
 * with as many.
 *
 * A cached block stays allocated in the tree's eyes, marked DM_NODE_CACHED:
 * not AVAIL, so its buddy does not merge with it, and a second free of it or
 * of a block inside it finds the mark and is a double free. The footprint
 * does not count it (it is free memory). When the tree cannot serve a
 * request, tree.c flushes the cache (every cached block goes back to the
 * tree, merging as it goes) and tries again; a trim flushes first too.
 *
 * The ring of an order (bcap slots, a power of two; 0: not kept) is a ticket
 * queue with two counters. put: reserve a slot (`used`), take a ticket
 * (`tail`), wait until that slot is empty, store the node with a release
 * (the CACHED mark and the caller's stores to the tree before a take can
 * find it: one release where a full fence after a run's join and another
 * after the mark were), publish it (`items`). take: reserve an item
 * (`items`), take a ticket (`head`), wait until that slot holds a node,
 * empty it, give the slot back (`used`). The reservations guarantee that a
 * waited-for slot is emptied or filled by an operation already under way,
 * so a wait ends when that operation does; nothing retries a CAS against
 * thousands of others (a warp freeing at once on every SM). Items are
 * interchangeable: a take may get the node an earlier round left in its
 * slot. A ring with a slot for every block of its order that the pool can
 * hold (`bwhole`: orders of more than DM_CACHE_SLOTS blocks, up to
 * DM_CACHE_WHOLE; layout.c) needs no reservation, and its puts skip it:
 * the blocks in the ring and in puts under way are distinct blocks of the
 * order, so the take of the round before a put's has been given its
 * ticket when the put waits for that slot (one atomic less a put on
 * counters that every warp freeing a run puts on).
 *
 * Locking: none (atomic counters and per-slot exchange); holds no lock while
 * waiting, and is called with none held. Calls buddy.c.
 */
#include "dm_internal.h"

static DM_INLINE uint32_t *ring_slot(dm_heap_t *h, uint32_t order, uint32_t ticket) {
  return &h->bslots[h->bbase[order] + (ticket & (h->bcap[order] - 1u))];
}

/* Keep the freed block at node y (owned, BUSY, not split) whole. The
 * caller's stores to the tree before it (a run's join) need no fence: the
 * slot's release orders them, with the mark, before a take can find the
 * node. Returns 0 when its order is not kept or its ring is full: the
 * caller frees it to the tree. */
DM_FN int dm_bcache_put(dm_heap_t *h, uint64_t y) {
  uint32_t order = dm_buddy_order(&h->buddy, y);
  if (order >= DM_CACHE_ORDERS || y >= (1ull << 32) || !h->bcap[order]) return 0;
  dm_bcache_t *r = &h->bcache[order];
  if (dm_bcache_reserves(h, order) && dm_add32(&r->used, 1u) >= h->bcap[order]) {
    dm_add32(&r->used, (uint32_t)-1);
    return 0;
  }
  dm_store32(&h->buddy.state[y], DM_NODE_CACHED);
  uint32_t *slot = ring_slot(h, order, dm_add32(&r->tail, 1u));
  /* a take of an earlier round is emptying it */
  while (dm_cas32_release(slot, 0u, (uint32_t)y) != 0u) dm_pause();
  DM_CHAOS_POINT();
  dm_add32(&r->items, 1u);
  return 1;
}

/* A cached block of `order` (its node, BUSY and owned by the caller), or 0
 * when none is cached. */
DM_FN uint64_t dm_bcache_take(dm_heap_t *h, uint32_t order) {
  if (order >= DM_CACHE_ORDERS) return 0;
  dm_bcache_t *r = &h->bcache[order];
  if ((int32_t)dm_load32(&r->items) <= 0) return 0;
  if ((int32_t)dm_add32(&r->items, (uint32_t)-1) <= 0) {
    dm_add32(&r->items, 1u);
    return 0;
  }
  uint32_t *slot = ring_slot(h, order, dm_add32(&r->head, 1u));
  uint32_t y;
  while ((y = dm_exch32(slot, 0u)) == 0u) dm_pause(); /* its put is storing */
  DM_CHAOS_POINT();
  if (dm_bcache_reserves(h, order)) dm_add32(&r->used, (uint32_t)-1);
  dm_store32(&h->buddy.state[y], DM_NODE_BUSY);
  dm_fence();
  return y;
}

/* Give every cached block back to the tree. Returns the number given. */
DM_COLD uint32_t dm_bcache_flush(dm_heap_t *h) {
  uint32_t n = 0, any = 0;
  for (uint32_t o = 0; o < DM_CACHE_ORDERS && !any; o++) any = dm_bcache_count(h, o);
  if (!any) return 0;
  dm_buddy_move_begin(&h->buddy); /* a taken block is in no count until freed */
  for (uint32_t o = 0; o < DM_CACHE_ORDERS; o++) {
    uint64_t y;
    while ((y = dm_bcache_take(h, o)) != 0) {
      dm_buddy_free(&h->buddy, y);
      n++;
    }
  }
  dm_buddy_move_end(&h->buddy);
  return n;
}

/* Blocks of `order` cached now (a reading; exact when the heap is at rest). */
DM_FN uint32_t dm_bcache_count(const dm_heap_t *h, uint32_t order) {
  if (order >= DM_CACHE_ORDERS) return 0;
  int32_t n = (int32_t)dm_load32(&h->bcache[order].items);
  return n > 0 ? (uint32_t)n : 0u;
}
