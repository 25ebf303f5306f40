/*
 * reclaim.c — the empty chunks that bins keep go back to the buddy tree when
 * it runs short: one pass over every chunk, shared by all callers that need
 * it (tree.c for requests the tree cannot serve, grow.c before a trim).
 * A chunk that empties stays with its bin (slab.c) and marks the heap
 * (hstats->cached); a pass starts only when that mark is set.
 *
 * Locking: the way lock of each released chunk (chunk.h), released before
 * node locks are taken inside dm_buddy_free (buddy.c); never two way locks
 * at once (a bin that adopts an empty chunk of another bin, slab.c, holds
 * only the chunk's way lock for the same CAS as a release, so the two
 * serialize on it and exactly one of them wins). The pass's own state is
 * lock-free (hstats->reclaim, a generation and a state).
 */
#include "dm_internal.h"
#include "chunk.h"

/* Return an empty chunk to the buddy tree if its units are free. Returns 1
 * when the chunk went back. */
static DM_COLD int chunk_release(dm_heap_t *h, uint32_t idx, uint32_t tag) {
  if (!chunk_unbin(h, idx, tag)) return 0;
  dm_heap_unhold(h, DM_CHUNK_BYTES);
  dm_buddy_free(&h->buddy, dm_buddy_node_at(&h->buddy, DM_CHUNK_ORDER, (uint64_t)idx << DM_CHUNK_SHIFT));
  return 1;
}

/* The chunks that can be slab chunks: all of them but a fresh heap's that
 * no bin took yet (fresh.c hands them out from the start), or in a heap
 * that grows those below `released` (above it the grower holds the memory).
 * A reclaim pass covers these; so does a bin looking for an empty chunk to
 * adopt (slab.c). */
DM_FN uint64_t dm_reclaim_span(const dm_heap_t *h) {
  uint64_t n = h->nchunks;
  if (h->fresh_end) {
    uint64_t f = dm_load64(&h->fresh->next);
    if (f < n) n = f;
  }
  if (h->grow) {
    uint64_t r = dm_load64(&h->grow->released) >> DM_CHUNK_SHIFT;
    if (r < n) n = r;
  }
  return n;
}

/* Return every empty chunk that bins keep to the tree (the tree runs short).
 * The pass is shared: every caller that arrives while it runs takes ranges of
 * chunks from a cursor and releases the empty ones there, then waits for the
 * pass to end (a caller that gave up while others were freeing the very
 * chunks that would split its block got NULL with memory on its way).
 * hstats->reclaim is gen << 2 | state (0 idle, 1 starting, 2 running); a
 * waiter waits for the word it saw to change, never for a later pass. The
 * caller that starts a pass fixes how many chunks it covers (reclaim_chunks:
 * all of them, or in a heap that grows those below `released`, the only ones
 * that can be in use), so that every caller counts the same ranges.
 * Returns nonzero when the caller should try the tree again. */
#define DM_RECLAIM_RANGE 64u /* chunks per cursor step */
DM_COLD uint32_t dm_reclaim_chunks(dm_heap_t *h) {
  dm_heap_stats_t *s = h->hstats;
  uint64_t w = dm_load64(&s->reclaim);
  for (;;) {
    if ((w & 3u) == 2u) break;
    if ((w & 3u) == 1u) {
      dm_pause_ns(256);
      w = dm_load64(&s->reclaim);
      continue;
    }
    if (!dm_load64(&s->cached)) return 0; /* nothing kept since the last pass began */
    uint64_t old = dm_cas64(&s->reclaim, w, (w & ~3ull) + 1u);
    if (old != w) {
      w = old;
      continue;
    }
    dm_store64(&s->cached, 0); /* chunks emptied from now on mark it again */
    dm_store64(&s->reclaim_chunks, dm_reclaim_span(h));
    /* done before the cursor: a caller that joined the last pass and is
     * late can take a range from the new cursor the moment it is reset; its
     * count must land in the new count, not before that is reset (a count
     * lost so made every caller wait for good, seen under TSan) */
    dm_store64(&s->reclaim_done, 0);
    dm_fence();
    dm_store64(&s->reclaim_next, 0);
    dm_fence();
    w = (w & ~3ull) + 2u;
    dm_store64(&s->reclaim, w);
    break;
  }
  dm_fence(); /* the pass's bounds, written before the state said running */
  uint64_t n = dm_load64(&s->reclaim_chunks), ranges = (n + DM_RECLAIM_RANGE - 1) / DM_RECLAIM_RANGE;
  if (!ranges && dm_cas64(&s->reclaim, w, w + 2u) == w) return 1; /* nothing to scan */
  for (uint64_t r; (r = dm_add64(&s->reclaim_next, 1)) < ranges;) {
    uint64_t end = (r + 1) * DM_RECLAIM_RANGE;
    for (uint32_t i = (uint32_t)(r * DM_RECLAIM_RANGE); i < end && i < n; i++) {
      uint64_t v = dm_load64(&h->chunks[i].live);
      if (v && live_used(v) == 0) chunk_release(h, i, (uint32_t)(v >> 32));
    }
    if (dm_add64(&s->reclaim_done, 1) + 1 == ranges) { /* the pass's last range: next gen, idle */
      uint64_t cur = dm_load64(&s->reclaim);           /* this pass's word (w is older for a late caller) */
      dm_store64(&s->reclaim, (cur & ~3ull) + 4u);
    }
  }
  while (dm_load64(&s->reclaim) == w) dm_pause_ns(512);
  return 1;
}
