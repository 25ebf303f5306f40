/*
 * grow.c — a heap that grows (docs/design.md, "A heap that grows").
 *
 * The pool is a reserved virtual range; the host maps memory from its start
 * and publishes how much in `ghost->mapped` (host-mapped memory on the GPU).
 * The tree was formatted with every granule (DM_GROW_BYTES) BUSY, "held by
 * the grower", and every node above SPLIT, so granules given to the tree
 * merge into larger blocks through the ordinary free.
 *
 * dm_grow_more (a request the tree could not serve): under the growth lock,
 *   give every mapped granule above `released` to the tree; when none is
 *   mapped, store a target for the host (the pool bytes the request needs
 *   mapped) and wait, holding no lock, until `mapped` or `released` moves, the
 *   host refuses the target, or grow_wait_ns pass; at the maximum, wait for
 *   a release in progress (its granules are on their way). 1: try the tree again;
 *   0: no memory will come (NULL for the request).
 * dm_grow_ahead (after every tree allocation): when the tree holds less than
 *   max(watermark, a quarter of the released size) free, ask the host for
 *   more, without waiting: max(step, a quarter of the released size) more
 *   (geometric growth: one step at a time left a growing heap far slower
 *   than one mapped at once; docs/decisions.md, "Growing ahead of need").
 * dm_grow_trim: return the empty chunks bins keep to the tree (a reclaim
 *   pass), then, under the growth lock, take free memory at the top of the
 *   released range back from the tree, a unit at a time (all granules of a
 *   unit or none: dm_buddy_claim_at), lower `released` and `ghost->target`
 *   to the new top and set `ghost->ceiling` there, so no request gives
 *   those granules to the tree again; the host unmaps everything above the
 *   ceiling, lowers `mapped`, then clears the ceiling. On the GPU it runs as
 *   a kernel (host/heap/trim_kernel.cu) beside the program's kernels.
 *
 * Locking: the growth lock (a spin lock in dm_grow_t) is taken on slow paths
 * only, never while a node or bin lock is held; under it the holder takes
 * node locks (buddy.c's rules). Waiters hold no lock. Memory above
 * `released` is never touched: the tree hands out nothing there, and
 * dm_heap_large_lookup refuses frees of it.
 */
#include "dm_internal.h"

static DM_INLINE void grow_lock(dm_grow_t *g) {
  while (dm_cas32(&g->lock, 0u, 1u) != 0u) dm_pause();
  dm_fence();
}
static DM_INLINE int grow_trylock(dm_grow_t *g) {
  if (dm_cas32(&g->lock, 0u, 1u) != 0u) return 0;
  dm_fence();
  return 1;
}
static DM_INLINE void grow_unlock(dm_grow_t *g) {
  dm_fence();
  dm_store32(&g->lock, 0u);
}

#define SEEN_STOP (1ull << 63) /* dm_grow_t.seen: the host refused or stopped at this top */

DM_FN uint64_t dm_grow_released(const dm_heap_t *h) {
  return h->grow ? dm_load64(&h->grow->released) : h->buddy.pool_bytes;
}

/* Give granules [a, e) (held by the grower, mapped) to the tree as maximal
 * aligned blocks: each block's split nodes become a plain block and one free
 * merges it with its free neighbours. Caller holds the growth lock. */
static DM_COLD void release_range(dm_heap_t *h, uint64_t a, uint64_t e) {
  dm_buddy_t *b = &h->buddy;
  while (a < e) {
    uint32_t o = DM_GROW_ORDER;
    while (o < b->top) {
      uint64_t next = 1ull << (o + 1 + DM_LEAF_SHIFT);
      if ((a & (next - 1)) != 0 || a + next > e) break;
      o++;
    }
    dm_buddy_free_run(b, dm_buddy_node_at(b, o, a), o - DM_GROW_ORDER);
    a += 1ull << (o + DM_LEAF_SHIFT);
  }
}

/* How much more to ask for above r: a step, or a quarter of what the heap
 * has when that is more (16 GiB from 64 MiB in ~30 rounds, not 256). */
static DM_INLINE uint64_t grow_by(const dm_heap_t *h, uint64_t r) {
  uint64_t q = r / 4 / DM_GROW_BYTES * DM_GROW_BYTES;
  return q > h->grow_step ? q : h->grow_step;
}

/* Mapped memory the tree may take: below a trim's ceiling while the host
 * unmaps above it. */
static DM_INLINE uint64_t usable(const dm_grow_host_t *x) {
  uint64_t m = dm_load64(&x->mapped), c = dm_load64(&x->ceiling);
  return c && m > c - 1 ? c - 1 : m;
}

/* Raise the target stored for the host to `want` (never lowers it). */
static DM_INLINE void ask_host(dm_heap_t *h, uint64_t want) {
  dm_grow_t *g = h->grow;
  if (want > h->buddy.pool_bytes) want = h->buddy.pool_bytes;
  if (dm_load64(&g->asked) >= want) return;
  dm_max64(&g->asked, want);
  dm_store64(&h->ghost->target, dm_load64(&g->asked));
  dm_fence();
}

DM_COLD int dm_grow_more(dm_heap_t *h, uint32_t order) {
  dm_grow_t *g = h->grow;
  if (!g) return 0;
  dm_grow_host_t *x = h->ghost;
  uint64_t pool = h->buddy.pool_bytes;
  uint64_t blk = 1ull << (order + DM_LEAF_SHIFT), unit = blk > DM_GROW_BYTES ? blk : DM_GROW_BYTES;
  uint64_t r0 = dm_load64(&g->released);
  /* the request's block lies at the next aligned place above what was given */
  uint64_t want = (r0 + unit - 1) / unit * unit + unit;
  if (r0 >= pool || want > pool) { /* no more to come, but granules may be on their way into the tree */
    if (!dm_load32(&g->lock)) return 0;
    while (dm_load32(&g->lock)) dm_pause();
    return 1;
  }
  if (!grow_trylock(g)) { /* someone releases or trims: try the tree after it */
    while (dm_load32(&g->lock)) dm_pause();
    return 1;
  }
  uint64_t r = dm_load64(&g->released);
  if (r != r0) {
    grow_unlock(g);
    return 1;
  }
  uint64_t m = usable(x);
  if (m > pool) m = pool;
  if (m > r) {
    /* released first: a block handed out from these granules the moment
     * they are free must never be above it (a free of it would be refused
     * as foreign) */
    dm_store64(&g->released, m);
    dm_fence();
    release_range(h, r, m);
    dm_add64(&g->releases, 1);
    grow_unlock(g);
    return 1;
  }
  grow_unlock(g);
  /* nothing mapped above what the tree has: ask the host and wait */
  uint64_t step = grow_by(h, r);
  if (step < unit) step = unit;
  uint64_t tgt = want > r + step ? want : r + step;
  ask_host(h, tgt);
  if (!dm_load64(&x->alive)) return 0;
  dm_add64(&g->waits, 1);
  uint64_t t0 = dm_now_ns();
  uint32_t ns = 256;
  int poller = 0;
  for (uint32_t k = 1;; k++) {
    if (dm_load64(&g->released) != r) {
      if (poller) dm_store32(&g->poller, 0u);
      return 1;
    }
    /* One waiter (the poller) reads the host's block and mirrors it in
     * `seen`; the others read `seen` in device memory: thousands of
     * threads polling host memory would flood the bus. */
    if (!poller && dm_load32(&g->poller) == 0 && dm_cas32(&g->poller, 0u, 1u) == 0u) poller = 1;
    if (dm_load64(&g->asked) < tgt) ask_host(h, tgt); /* a trim meanwhile lowered it */
    uint64_t seen;
    if (poller) {
      uint64_t m = usable(x);
      /* the host could not map its last target (the device is full) or its
       * service stopped: end now rather than at the bound */
      seen = (dm_load64(&x->refused) && m <= r) || !dm_load64(&x->alive) ? (SEEN_STOP | r) : m;
      dm_store64(&g->seen, seen);
      if ((k & (k - 1)) == 0)
        dm_store64(&x->target, dm_load64(&g->asked)); /* a racing store may have lowered it */
    } else {
      seen = dm_load64(&g->seen);
    }
    /* a stop is about the top it was seen at; an older one is ignored */
    int stop = (seen & SEEN_STOP) && (seen & ~SEEN_STOP) == r;
    int more = !(seen & SEEN_STOP) && seen > r;
    if (stop || more || dm_now_ns() - t0 > h->grow_wait_ns) {
      if (poller) dm_store32(&g->poller, 0u);
      if (more) return 1;
      break;
    }
    dm_pause_ns(ns);
    if (ns < 32768) ns <<= 1;
  }
  dm_add64(&g->timeouts, 1);
  return 0;
}

DM_FN void dm_grow_ahead(dm_heap_t *h) {
  dm_grow_t *g = h->grow;
  if (!g) return;
  uint64_t r = dm_load64(&g->released), used = dm_load64(&h->hstats->footprint);
  uint64_t mark = r / 4 > h->grow_watermark ? r / 4 : h->grow_watermark;
  if (r >= h->buddy.pool_bytes || used + mark < r) return;
  uint64_t by = grow_by(h, r);
  uint64_t want = r + (by > h->grow_watermark ? by : h->grow_watermark);
  if (dm_load64(&g->asked) < want) ask_host(h, want);
}

DM_COLD uint64_t dm_grow_trim(dm_heap_t *h, uint64_t floor, uint64_t unit) {
  dm_grow_t *g = h->grow;
  if (!g) return h->buddy.pool_bytes;
  if (unit < DM_GROW_BYTES) unit = DM_GROW_BYTES;
  /* Empty chunks that bins keep go back to the tree first (in a heap that
   * grows the pass scans only the chunks below `released`: reclaim.c). */
  dm_reclaim_chunks(h);
  dm_bcache_flush(h); /* cached blocks, too */
  grow_lock(g);
  uint64_t r = dm_load64(&g->released);
  while (r > floor) {
    uint64_t a = (r - 1) / unit * unit, c = r; /* a unit, or the partial one at the pool's end */
    if (a < floor) break;
    while (c > a && dm_buddy_claim_at(&h->buddy, DM_GROW_ORDER, c - DM_GROW_BYTES)) c -= DM_GROW_BYTES;
    if (c > a) { /* a granule of the unit is in use: give back what was taken */
      release_range(h, c, r);
      break;
    }
    r = a;
  }
  dm_store64(&g->released, r);
  /* the host unmaps above r: no request may give that memory to the tree
   * until it has (it clears the ceiling then) */
  dm_store64(&h->ghost->ceiling, r + 1);
  dm_store64(&h->ghost->target, r);
  dm_store64(&g->asked, r);
  dm_store64(&g->seen, r);
  dm_fence();
  grow_unlock(g);
  return r;
}
