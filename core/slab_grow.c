/*
 * slab_grow.c — new slots for a bin (slab.c has the design): a grow takes a
 * run of chunks from the tree (dm_tree_take_chunks) or, beyond half the pool,
 * adopts empty chunks that other bins keep, formats them and lists them in
 * the bin's ways; a request the full tree cannot serve steals free slots of
 * other arenas; a few lanes of a small class share the first bin of their
 * arena group.
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
 * hint. An empty
 * chunk of a bin is taken (by a reclaim pass or a bin adopting it,
 * chunk_unbin) under its way's lock: formatted before the lock, an extra
 * chunk of a run was empty and not yet listed, was taken, and was then
 * listed anyway, in two bins' lists at once; their lists broke, the bins'
 * units pointed at no chunk, and the warps waiting for them spun for good
 * (H200, mixed sizes after larger ones, most runs of the GPU suite). */
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
 * at one (chunk_unbin sets its grows to 0): counting every grow, every bin
 * that had grown in an earlier workload took 8 chunks at its first need in
 * the next, and after the power-of-four fills the mixed fill's 16 B, 64 B,
 * 256 B and 1 KiB bins held 16 .. 72 chunks in 2 .. 9 arenas with a few
 * slots used in each (H200). Counting the chunks held instead of the grows
 * made a fresh 4 GiB heap's mixed alloc 0.51x and 4 KiB alloc 0.77x: bins
 * that many warps grow at once took one chunk each, since none of their
 * runs was formatted yet. */
static DM_INLINE uint32_t grow_run_rule(uint32_t grows) {
  return 1u << (grows < DM_GROW_RUN_LOG2 ? grows : DM_GROW_RUN_LOG2);
}

/* More than half the pool held: bins grow one chunk at a time, adopting
 * empty chunks first (resv_grow). */
static DM_INLINE int past_half(const dm_heap_t *h) {
  return dm_load64(&h->hstats->footprint) > h->buddy.pool_bytes / 2;
}

/* Take chunks for the home bin, keeping n slots of the first: a fixed
 * heap's fresh chunks while there are any (fresh.c: one fetch-add for the
 * run), chunk-sized blocks the block cache keeps, then the tree. A bin that keeps growing
 * takes runs of 2, 4, then 8 chunks (from the tree, adjacent ones in one
 * operation; one chunk when no run is free): the tree's rate of operations
 * was what bounded allocation of the larger classes. Runs stop once half the
 * pool is held: with thousands of bins (arenas x classes) growing at once
 * they would take more than the requests need. (Runs that shrank with the
 * free share instead, 4 down to a quarter and 2 down to an eighth, made a
 * fresh 4 GiB heap's 2 KiB, 3000 B and 4 KiB alloc rows 3-4x slower and
 * mixed utilization 2 points lower, H200.)
 * Beyond half, when chunks emptied since the last reclaim pass (the heap's
 * mark), a bin first adopts empty chunks that other bins keep
 * (resv_adopt): after one workload freed its blocks, the chunks its bins
 * kept held half the pool, and the next workload's bins took their chunks
 * one per tree operation and then through reclaim passes that returned
 * thousands of chunks to the tree one by one (1 KiB allocation after the
 * smaller sizes in one process ran 7x slower than on a fresh heap, H200).
 * It adopts its run, but at most one chunk per way: one at a time, a
 * 64 MiB heap's 256 B bins (7 arenas of 8 ways) held just the chunks a pass
 * needs, every pass filled them to the last slots, and warps searched the
 * other ways for them; with a chunk per way that row ran 1.37x faster, the
 * 4 GiB heap's (one way per bin) unchanged (H200). Larger runs of adopted
 * chunks (up to the bin's run of 4) made the 4 GiB 2 and 4 KiB rows 0.87x
 * and 0.71x in the bench's order (H100).
 * k: the run the caller announced to the semaphore (grow_run), 0: decided
 * here; `expected`: the units its wait announced, retired by the signal. */
DM_PART_COLD int resv_grow(dm_heap_t *h, dm_resv_t *rv, uint32_t n, uint32_t k, uint32_t expected,
                           dm_grant_t *g) {
  dm_bin_t *b = bin_at(h, rv->arena, rv->cls);
  uint32_t cap = h->classes[rv->cls].nslots;
  uint32_t idx[1u << DM_GROW_RUN_LOG2], got = 0, grows = dm_add32(&b->grows, 1);
  uint32_t way = grows & h->way_mask; /* the bin's grows take the ways in turn */
  if (!k) k = grow_run_rule(grows);
  if (past_half(h)) { /* empty chunks that bins keep, up to one per way; the tree one at a time */
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

/* The run a bin's next grow takes (grow_run_rule, one beyond half the pool),
 * no more than the semaphore can expect at once. A grower that keeps more
 * than half of its first chunk decides the run before its wait, which then
 * counts the whole run as expected units: requests arriving meanwhile wait
 * for the run instead of growing themselves. When only the first chunk was
 * expected (nothing, for a 4 KiB request: the whole chunk), every
 * 4 KiB warp grew on its own, took a run of 8 chunks, ran the tree dry, and
 * a fresh heap's first 4 KiB pass spent 12-22 ms in the tree's semaphores;
 * 1.1 ms with this (H200; the passes after it 0.25 -> 0.65 ms: the bins no
 * longer keep the surplus of those runs). Deciding every grower's run before
 * its wait made mixed-size utilization 79% -> 56% (a run decided before a
 * long wait is stale), so the others decide at the grow. */
DM_PART_INLINE uint32_t grow_run(const dm_heap_t *h, dm_bin_t *b, uint32_t cap, uint32_t n) {
  uint32_t k = grow_run_rule(dm_load32(&b->grows));
  if (past_half(h)) return 1;
  while (k > 1 && k * cap - n > DM_SEM_EXPECT_MAX) k >>= 1;
  return k;
}

/* The tree is full: take free slots that other arenas hold. Returns the
 * units taken (0: none anywhere). When no arena has any, look again,
 * home arena included, DM_STEAL_SWEEPS times (frees under way give units
 * back), and for as long as some bin of the class expects units (a grow
 * under way: its chunks are taken and being formatted), for at most
 * DM_STEAL_WAIT_NS; a full heap, where no grow is under way, says NULL
 * after those few sweeps. Requests that all grew at once took every chunk
 * of a 256 MiB heap for 64 MiB of 1 KiB blocks, and the ones that found the
 * chunks gone got NULL while the others' chunks were still on their way
 * (H100 and H200, under compute-sanitizer). */
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
 * per arena, a few slots of it used: a fill of mixed sizes 16 .. 4096 B on
 * a fresh 256 MiB heap (28 arenas x 28 classes) gave a fifth of the pool to
 * the classes up to 512 B (a chunk holds 250 and more of their slots) and
 * used 73% of the heap; with this 89% (H100). Sharing for every class and
 * any request made the first pass of mixed sizes 4x slower, divergent 16 B
 * requests 0.4x and 4 and 8 KiB requests 0.1 .. 0.4x; groups of 32 arenas
 * made it 1.5 .. 1.9x slower (the first bins' one way in a 4 GiB heap),
 * groups of 8 1.2x, where it was 1.05x (H100). Moves the reservation to
 * that bin (the steal sweep starts there too) and returns it. */
DM_PART_INLINE dm_bin_t *bin_share(dm_heap_t *h, dm_resv_t *rv, uint32_t m, dm_bin_t *b) {
  uint32_t lead = rv->arena & ~(DM_SHARE_ARENAS - 1u);
  if (lead == rv->arena || m > DM_SHARE_LANES || h->classes[rv->cls].size > DM_SHARE_SIZE) return b;
  dm_bin_t *l = bin_at(h, lead, rv->cls);
  if (dm_load32(&l->held) >= DM_SHARE_CHUNKS) return b;
  rv->arena = rv->home = lead;
  return l;
}
