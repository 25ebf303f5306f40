/*
 * blockcache.c — freed large blocks kept whole, in rings per order, for the
 * next request of that order: a front of the buddy tree that coalesces
 * lazily.
 *
 * Every large free used to go through the tree (node locks, the order's
 * semaphore, merges up the tree), and a kernel freeing 16 KiB blocks ran at
 * a twentieth of the peer's rate. A free that the cache keeps costs three
 * atomics on a ring's counters and a CAS on one slot; the next request of
 * the order (a warp's run of 32 blocks is one block of order + 5) takes it
 * back with as many.
 *
 * An order's slots are spread over up to DM_CACHE_SHARDS rings, and a warp
 * puts and takes at the ring of its SM first: with one ring per order, every
 * warp of a kernel freeing at once queued on the same three counters (their
 * atomics were most of a 16 KiB free's time). A put whose ring is full tries
 * the next rings; a take starts at its own and tries the rings that the
 * order's mask says may hold blocks (a hint: a ring's bit is set by a put
 * that did not see it set, and cleared by the take that empties the ring,
 * which sets it again if a put came meanwhile; a ring left with blocks and
 * no bit is found again by its next put or by a flush).
 *
 * A cached block stays allocated in the tree's eyes, marked DM_NODE_CACHED:
 * not AVAIL, so its buddy does not merge with it, and a second free of it or
 * of a block inside it finds the mark and is a double free. The footprint
 * does not count it (it is free memory). When the tree cannot serve a
 * request, tree.c flushes the cache (every cached block goes back to the
 * tree, merging as it goes) and tries again; a trim flushes first too.
 *
 * A ring (bcap slots, a power of two) is a ticket queue with two counters.
 * put: reserve a slot (`used`), take a ticket (`tail`), wait until that slot
 * is empty, store the node with a release (the mark and the caller's stores
 * to the tree before a take can find the node), publish it (`items`). take:
 * reserve an item (`items`), take a ticket (`head`), wait until that slot
 * holds a node, empty it, give the slot back (`used`). The reservations
 * guarantee that a waited-for slot is emptied or filled by an operation
 * already under way, so a wait ends when that operation does; nothing
 * retries a CAS against thousands of others. Items are interchangeable: a
 * take may get the node an earlier round left in its slot.
 *
 * Locking: none (atomic counters and per-slot exchange); holds no lock while
 * waiting, and is called with none held. Calls buddy.c.
 */
#include "dm_internal.h"

static DM_INLINE dm_bcache_t *ring_at(dm_heap_t *h, uint32_t order, uint32_t s) {
  return &h->bcache[h->bring[order] + s];
}
static DM_INLINE uint32_t *ring_slot(dm_heap_t *h, uint32_t order, uint32_t s, uint32_t ticket) {
  uint32_t cap = h->bcap[order];
  return &h->bslots[h->bbase[order] + s * cap + (ticket & (cap - 1u))];
}
/* The caller's own ring of an order: by SM on the GPU, by thread here. */
static DM_INLINE uint32_t home_ring(const dm_heap_t *h, uint32_t order) {
  return dm_arena_hint(1) & (h->bshards[order] - 1u);
}

/* Keep the freed block at node y (owned, BUSY, not split) whole. The
 * caller's stores to the tree before it (a run's join) need no fence: the
 * slot's release orders them. Returns 0 when its order is not kept or
 * every ring is full: the caller frees it to the tree. */
DM_FN int dm_bcache_put(dm_heap_t *h, uint64_t y) {
  uint32_t order = dm_buddy_order(&h->buddy, y);
  if (order >= DM_CACHE_ORDERS || y >= (1ull << 32) || !h->bcap[order]) return 0;
  uint32_t cap = h->bcap[order], n = h->bshards[order], home = home_ring(h, order);
  uint64_t *mask = &h->bmask[order].nonempty, seen = dm_load64(mask);
  for (uint32_t i = 0; i < n; i++) {
    uint32_t s = (home + i) & (n - 1u);
    dm_bcache_t *r = ring_at(h, order, s);
    if (i && dm_load32(&r->used) >= cap) continue; /* another's ring, full: no add */
    if (dm_add32(&r->used, 1u) >= cap) {
      dm_add32(&r->used, (uint32_t)-1);
      continue;
    }
    dm_store32(&h->buddy.state[y], DM_NODE_CACHED);
    uint32_t *slot = ring_slot(h, order, s, dm_add32(&r->tail, 1u));
    /* a take of an earlier round is emptying it */
    while (dm_cas32_release(slot, 0u, (uint32_t)y) != 0u) dm_pause();
    DM_CHAOS_POINT();
    dm_add32(&r->items, 1u);
    if (!(seen & (1ull << s))) dm_or64(mask, 1ull << s);
    return 1;
  }
  return 0;
}

/* Ring s of `order` was found empty or was emptied: its bit in the mask
 * goes, unless a put came meanwhile. */
static DM_INLINE void ring_emptied(dm_heap_t *h, uint32_t order, uint32_t s, dm_bcache_t *r) {
  uint64_t *mask = &h->bmask[order].nonempty;
  dm_and64(mask, ~(1ull << s));
  if ((int32_t)dm_load32(&r->items) > 0) dm_or64(mask, 1ull << s);
}

/* A cached block of ring s of `order` (its node, BUSY and owned by the
 * caller), or 0 when the ring has none. */
static DM_INLINE uint64_t ring_take(dm_heap_t *h, uint32_t order, uint32_t s) {
  dm_bcache_t *r = ring_at(h, order, s);
  int32_t before = (int32_t)dm_add32(&r->items, (uint32_t)-1);
  if (before <= 0) {
    dm_add32(&r->items, 1u);
    ring_emptied(h, order, s, r);
    return 0;
  }
  if (before == 1) ring_emptied(h, order, s, r);
  uint32_t *slot = ring_slot(h, order, s, dm_add32(&r->head, 1u));
  uint32_t y;
  while ((y = dm_exch32(slot, 0u)) == 0u) dm_pause(); /* its put is storing */
  DM_CHAOS_POINT();
  dm_add32(&r->used, (uint32_t)-1);
  dm_store32(&h->buddy.state[y], DM_NODE_BUSY);
  dm_fence();
  return y;
}

/* A cached block of `order` (its node, BUSY and owned by the caller), or 0
 * when none is cached: the caller's ring first, then those the order's mask
 * names. */
DM_FN uint64_t dm_bcache_take(dm_heap_t *h, uint32_t order) {
  if (order >= DM_CACHE_ORDERS || !h->bcap[order]) return 0;
  uint64_t m = dm_load64(&h->bmask[order].nonempty);
  uint32_t n = h->bshards[order], home = home_ring(h, order);
  for (uint32_t i = 0; m && i < n; i++) {
    uint32_t s = (home + i) & (n - 1u);
    if (!(m & (1ull << s))) continue;
    uint64_t y = ring_take(h, order, s);
    if (y) return y;
    m &= ~(1ull << s);
  }
  return 0;
}

/* Give every cached block back to the tree. Returns the number given. */
DM_COLD uint32_t dm_bcache_flush(dm_heap_t *h) {
  uint32_t n = 0, any = 0;
  for (uint32_t o = 0; o < DM_CACHE_ORDERS && !any; o++) any = dm_bcache_count(h, o);
  if (!any) return 0;
  dm_buddy_move_begin(&h->buddy); /* a taken block is in no count until freed */
  for (uint32_t o = 0; o < DM_CACHE_ORDERS; o++) {
    for (uint32_t s = 0; s < h->bshards[o] && h->bcap[o]; s++) /* every ring: a mask may miss one */
      for (uint64_t y; (y = ring_take(h, o, s)) != 0; n++) dm_buddy_free(&h->buddy, y);
  }
  dm_buddy_move_end(&h->buddy);
  return n;
}

/* Blocks of `order` cached now (a reading; exact when the heap is at rest). */
DM_FN uint32_t dm_bcache_count(const dm_heap_t *h, uint32_t order) {
  if (order >= DM_CACHE_ORDERS || !h->bcap[order]) return 0;
  uint32_t total = 0;
  for (uint32_t s = 0; s < h->bshards[order]; s++) {
    int32_t n = (int32_t)dm_load32(&h->bcache[h->bring[order] + s].items);
    total += n > 0 ? (uint32_t)n : 0u;
  }
  return total;
}
