/*
 * slab_grow.c — new slots for a bin (slab.c has the design): a grow takes a
 * run of chunks from the tree (dm_tree_take_chunks) or, beyond three
 * quarters of the pool, adopts empty chunks that other bins keep, formats
 * them and lists them in the bin's ways; a request the full tree cannot
 * serve steals free slots of other arenas; a few lanes of a small class
 * share the first bin of their arena group.
 *
 * Locking: one way's lock at a time while new chunks are formatted and
 * listed, never held across a call into the tree; adopting a chunk takes its
 * old way's lock (chunk_unbin) and releases it before the new way's.
 */
#include "dm_internal.h"
#include "chunk.h"

/* List chunks idx[0 .. k-1] in bin b of (arena, cls) and signal their
 * units, retiring the `expected` ones the caller's grow announced: the first
 * was formatted with n > 0 slots kept by the caller; the
 * others are formatted here, under their way's lock. Chunks j, j + ways,
 * ... go to way `way` + j, one lock per way, and chunk j becomes that way's
 * hint. An empty chunk of a bin is taken (by a reclaim pass or a bin
 * adopting it, chunk_unbin) under its way's lock: formatted before the
 * lock, an extra chunk of a run could be taken before it was listed and
 * then listed anyway, in two bins' lists at once, and the warps waiting for
 * those bins' units spun for good (docs/decisions.md, "Growing: runs,
 * adoption, held chunks"). */
static DM_INLINE void bin_add_chunks(dm_heap_t *h, dm_bin_t *b, uint32_t arena, uint32_t cls, uint32_t way,
                                     const uint32_t *idx, uint32_t k, uint32_t n, uint32_t cap,
                                     uint32_t expected) {
  uint32_t ways = h->way_mask + 1, used = k < ways ? k : ways;
  for (uint32_t j = 0; j < used; j++) { /* way + j: chunks j, j + ways, ..., one lock */
    uint32_t wi = (way + j) & h->way_mask;
    dm_way_t *w = bin_way(h, b, wi);
    way_lock(w);
    for (uint32_t i = j + (k - 1 - j) / ways * ways;; i -= ways) {
      if (i) chunk_format(h, idx[i], arena, cls, wi, 0);
      if (i || n < cap) list_insert(h, w, idx[i]);
      if (i < ways) break;
    }
    dm_store32(&w->hint, idx[j] + 1);
    way_unlock(w);
  }
  dm_sem_signal(&b->sem, k * cap - n, expected);
}

/* Adopt up to k empty chunks that other bins keep (any arena, any class) for
 * the home bin, keeping n slots of the first: look at the next DM_ADOPT_SCAN
 * chunks from a shared cursor (each grow its own range) for ones whose count
 * is 0, and take each the way a reclaim pass releases one (chunk_unbin: its
 * bin's units, then under its way's lock, the only way lock held, the CAS of
 * `live` from exactly tag << 32 to 0); then format them for the home bin and
 * list them. The footprint does not change: the chunks stay held, with no
 * tree operation. Returns 1 with *g set, 0 when the range held no empty
 * chunk. */
static DM_COLD int resv_adopt(dm_heap_t *h, dm_resv_t *rv, uint32_t n, uint32_t k, uint32_t way,
                              uint32_t expected, dm_grant_t *g) {
  uint64_t nchunks = dm_reclaim_span(h);
  if (!nchunks) return 0;
  uint32_t idx[1u << DM_GROW_RUN_LOG2], got = 0;
  uint64_t start = dm_add64(&h->hstats->adopt_next, DM_ADOPT_SCAN) % nchunks;
  for (uint64_t j = 0; j < DM_ADOPT_SCAN && j < nchunks && got < k; j++) {
    uint32_t c = (uint32_t)((start + j) % nchunks);
    uint64_t v = dm_load64(&h->chunks[c].live);
    uint32_t tag = (uint32_t)(v >> 32);
    if (!tag || live_used(v)) continue;    /* in the tree, or in use; unbin drains a re-list flag */
    if (!chunk_unbin(h, c, tag)) continue; /* in use again, or soon (its units are taken) */
    idx[got++] = c;
  }
  if (!got) return 0;
  *g = chunk_format(h, idx[0], rv->arena, rv->cls, way, n);
  bin_add_chunks(h, bin_at(h, rv->arena, rv->cls), rv->arena, rv->cls, way, idx, got, n,
                 h->classes[rv->cls].nslots, expected);
  return 1;
}

/* The run of a bin's grow after `grows` grows: 1, 2, 4, then 8 chunks
 * (2^min(grows, DM_GROW_RUN_LOG2); resv_grow says why). A bin that comes to
 * hold no chunk (they went back to the tree or to other bins) starts again
 * at one (chunk_unbin sets its grows to 0), so that an earlier workload's
 * grows do not make the next one's bins take 8 chunks for a few slots. The
 * run follows the grows, not the chunks held: bins that many warps grow at
 * once hold none yet (docs/decisions.md, "Growing: runs, adoption, held
 * chunks"). */
static DM_INLINE uint32_t grow_run_rule(uint32_t grows) {
  return 1u << (grows < DM_GROW_RUN_LOG2 ? grows : DM_GROW_RUN_LOG2);
}

/* More than three quarters of the pool held: bins grow one chunk at a
 * time, adopting empty chunks first (resv_grow). Not from half: a pass
 * that fills half of a small heap (1M requests of 16 B, each with its own
 * 32-byte sector, in 64 MiB) grew its second half a chunk at a time
 * (docs/decisions.md, "Growing: runs, adoption, held chunks"). */
static DM_INLINE int past_runs(const dm_heap_t *h) {
  uint64_t pool = h->buddy.pool_bytes;
  return dm_load64(&h->hstats->footprint) > pool - pool / 4;
}

/* Take chunks for the home bin, keeping n slots of the first: a fixed
 * heap's fresh chunks while there are any (fresh.c: one fetch-add for the
 * run), chunk-sized blocks the block cache keeps, then the tree. A bin that keeps growing
 * takes runs of 2, 4, then 8 chunks (from the tree, adjacent ones in one
 * operation; one chunk when no run is free): the tree's rate of operations
 * was what bounded allocation of the larger classes. Runs stop once three
 * quarters of the pool are held (past_runs): with thousands of bins (arenas
 * x classes) growing at once they would take more than the requests need.
 * Beyond that, when chunks emptied since the last reclaim pass (the heap's
 * mark), a bin first adopts empty chunks that other bins keep
 * (resv_adopt): else, after one workload freed its blocks, the next one's
 * bins take their chunks one per tree operation while the empty ones hold
 * the pool. It adopts its run, but at most one chunk per way, so that a
 * pass's warps do not meet on one chunk's last slots (docs/decisions.md,
 * "Growing: runs, adoption, held chunks").
 * k: the run the caller announced to the semaphore (grow_run), 0: decided
 * here; `expected`: the units its wait announced, retired by the signal. */
DM_PART_COLD int resv_grow(dm_heap_t *h, dm_resv_t *rv, uint32_t n, uint32_t k, uint32_t expected,
                           dm_grant_t *g) {
  dm_bin_t *b = bin_at(h, rv->arena, rv->cls);
  uint32_t cap = h->classes[rv->cls].nslots;
  uint32_t idx[1u << DM_GROW_RUN_LOG2], got = 0, grows = dm_add32(&b->grows, 1);
  uint32_t way = grows & h->way_mask; /* the bin's grows take the ways in turn */
  if (!k) k = grow_run_rule(grows);
  if (past_runs(h)) { /* empty chunks that bins keep, up to one per way; the tree one at a time */
    uint32_t run = k < h->way_mask + 1 ? k : h->way_mask + 1;
    k = 1;
    if (dm_load64(&h->hstats->cached) && resv_adopt(h, rv, n, run, way, expected, g)) return 1;
  }
  if (!(got = dm_tree_take_chunks(h, k, idx))) {
    dm_sem_signal(&b->sem, 0, expected);
    return 0;
  }
  *g = chunk_format(h, idx[0], rv->arena, rv->cls, way, n);
  bin_add_chunks(h, b, rv->arena, rv->cls, way, idx, got, n, cap, expected);
  return 1;
}

/* The run a bin's next grow takes (grow_run_rule; one chunk past_runs),
 * no more than the semaphore can expect at once. A grower that keeps more
 * than half of its first chunk decides the run before its wait, which then
 * counts the whole run as expected units: requests arriving meanwhile wait
 * for the run instead of growing themselves (with only the first chunk
 * expected, every 4 KiB warp grew on its own and ran the tree dry). The
 * others decide at the grow: a run decided before a long wait is stale
 * (docs/decisions.md, "Growing: runs, adoption, held chunks"). */
DM_PART_INLINE uint32_t grow_run(const dm_heap_t *h, dm_bin_t *b, uint32_t cap, uint32_t n) {
  uint32_t k = grow_run_rule(dm_load32(&b->grows));
  if (past_runs(h)) return 1;
  while (k > 1 && k * cap - n > DM_SEM_EXPECT_MAX) k >>= 1;
  return k;
}

/* The tree is full: take free slots that other arenas hold. Returns the
 * units taken (0: none anywhere). When no arena has any, look again,
 * home arena included, DM_STEAL_SWEEPS times (frees under way give units
 * back), and for as long as some bin of the class expects units (a grow
 * under way: its chunks are taken and being formatted), for at most
 * DM_STEAL_WAIT_NS; a full heap, where no grow is under way, says NULL
 * after those few sweeps: requests that found the chunks gone got NULL
 * while other requests' chunks were still on their way (docs/decisions.md,
 * "Growing: runs, adoption, held chunks"). */
DM_PART_COLD uint32_t resv_steal(dm_heap_t *h, dm_resv_t *rv, uint32_t n) {
  uint32_t got = 0, ns = 256;
  uint64_t t0 = 0;
  for (uint32_t sweep = 1;; sweep++) {
    int coming = 0;
    while (!got && rv->tries < h->narenas) {
      uint32_t a = (rv->home + rv->tries) % h->narenas;
      dm_sem_t *s = &bin_at(h, a, rv->cls)->sem;
      rv->tries++;
      got = dm_sem_try_take(s, n, 1);
      if (got) {
        rv->arena = a;
        rv->units = got;
      } else if (dm_sem_expected(s)) {
        coming = 1;
      }
    }
    if (got || (!coming && sweep >= DM_STEAL_SWEEPS)) return got;
    if (!t0)
      t0 = dm_now_ns();
    else if (dm_now_ns() - t0 > DM_STEAL_WAIT_NS)
      return 0;
    rv->tries = 0; /* the home arena too */
    dm_pause_ns(ns);
    if (ns < 4096) ns *= 2;
  }
}

/* A request of a few lanes (DM_SHARE_LANES) for a small class (up to
 * DM_SHARE_SIZE) whose bin holds no chunk is served by the first bin of its
 * group (DM_SHARE_ARENAS adjacent arenas, same class) until that bin holds
 * DM_SHARE_CHUNKS chunks; a warp with more lanes of the class, or a class
 * whose first bin holds that many, takes chunks for its own bin. Every bin
 * taking a chunk at its first request left each small class with a chunk
 * per arena, a few slots of it used, and a fifth of a small heap's pool
 * stranded; sharing more (any class, any request, larger groups) slowed the
 * first passes (docs/decisions.md, "Shared first bins"). Moves the
 * reservation to that bin (the steal sweep starts there too) and returns it. */
DM_PART_INLINE dm_bin_t *bin_share(dm_heap_t *h, dm_resv_t *rv, uint32_t m, dm_bin_t *b) {
  uint32_t lead = rv->arena & ~(DM_SHARE_ARENAS - 1u);
  if (lead == rv->arena || m > DM_SHARE_LANES || h->classes[rv->cls].size > DM_SHARE_SIZE) return b;
  dm_bin_t *l = bin_at(h, lead, rv->cls);
  if (dm_load32(&l->held) >= DM_SHARE_CHUNKS) return b;
  rv->arena = rv->home = lead;
  return l;
}
