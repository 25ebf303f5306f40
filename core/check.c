/*
 * check.c — consistency checks of a quiescent heap (host only; used by the
 * tests and by the host runtime on a copy of a device heap's metadata).
 *
 * Checks the buddy tree's two invariants (no two AVAIL siblings; an AVAIL
 * node has only BUSY descendants), that split nodes are plain SPLIT, that the
 * availability bitmaps and their summaries match the node states, and
 * that each order's semaphore counts exactly its AVAIL nodes with nothing
 * expected or reserved; in a heap that grows, that granules above `released`
 * are held by the grower (BUSY; a grower-held granule counts as free for
 * "whole"); that the block cache's rings hold exactly the CACHED nodes
 * but a fixed heap's fresh chunks, which the fresh counter counts (both
 * count as free for "whole"); and that every bin's list of
 * chunks is well formed, each chunk on one list at most, and counts the
 * chunks whose tag names the bin; that a chunk whose bitmap lies
 * beside it (in its descriptor: classes of 320 B and up) has as many slot
 * bits set as its count says, and every bit past its slots set; and that no
 * tree request is counted in flight. Returns the number
 * of violations; writes the first one to `why`.
 *
 * Locking: none; the heap must be quiescent.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dm_internal.h"
#include "chunk.h"

typedef struct {
  int errors;
  char *why;
  size_t whylen;
} report_t;

static void fail(report_t *r, const char *msg, uint64_t node) {
  if (r->errors++ == 0 && r->why)
    snprintf(r->why, r->whylen, "%s (node %llu)", msg, (unsigned long long)node);
}

static uint32_t order_of_node(const dm_buddy_t *b, uint64_t i) {
  return b->top - (63u - (uint32_t)__builtin_clzll(i));
}
static uint64_t rank_of_node(uint64_t i) { return i - (1ull << (63u - (uint32_t)__builtin_clzll(i))); }

static int avail_bit(const dm_buddy_t *b, uint64_t i) {
  uint64_t bit, w = dm_avail_index(b, order_of_node(b, i), rank_of_node(i), &bit);
  return (b->avail[w] & bit) != 0;
}

/* A bitmap word with a bit set has its summary bit set (a summary bit over
 * an empty word is allowed: searchers skip it). */
static int summary_bit(const dm_buddy_t *b, uint64_t i) {
  uint64_t bit, w = dm_summary_index(b, order_of_node(b, i), rank_of_node(i), &bit);
  return (b->avail[w] & bit) != 0;
}

/* All descendants of i must be BUSY and not split. */
static void check_covered(const dm_buddy_t *b, uint64_t i, report_t *r) {
  if (63u - (uint32_t)__builtin_clzll(i) >= b->top) return;
  for (uint64_t c = 2 * i; c <= 2 * i + 1; c++) {
    if (b->state[c] != DM_NODE_BUSY) fail(r, "covered node not busy", c);
    check_covered(b, c, r);
  }
}

/* What the walk counts: AVAIL nodes per order, CACHED nodes per order that
 * the block cache should hold, and fresh chunks (fresh.c: CACHED chunk
 * nodes from the fresh counter on). */
typedef struct {
  uint32_t count[DM_MAX_ORDERS], cached[DM_CACHE_ORDERS];
  uint64_t fresh, fresh_from, fresh_end;
} walk_t;

static void check_node(const dm_buddy_t *b, uint64_t i, walk_t *k, report_t *r) {
  uint32_t s = b->state[i], order = order_of_node(b, i);
  if (b->lock[i]) fail(r, "node locked at rest", i);
  if (avail_bit(b, i) != (s == DM_NODE_AVAIL)) fail(r, "bitmap disagrees with state", i);
  if (s == DM_NODE_AVAIL) k->count[order]++;
  if (s == DM_NODE_CACHED) {
    uint64_t chunk = rank_of_node(i) << (order + DM_LEAF_SHIFT) >> DM_CHUNK_SHIFT;
    if (order == DM_CHUNK_ORDER && chunk >= k->fresh_from && chunk < k->fresh_end)
      k->fresh++;
    else if (order >= DM_CACHE_ORDERS)
      fail(r, "cached node of an order the cache does not keep", i);
    else
      k->cached[order]++;
    if (order > 0) check_covered(b, i, r);
    return;
  }
  if (s == DM_NODE_AVAIL && !summary_bit(b, i)) fail(r, "summary bit clear over an available node", i);
  if (!(s & DM_NODE_SPLIT)) {
    if (s == DM_NODE_AVAIL && order > 0) check_covered(b, i, r);
    return;
  }
  if (order == 0) {
    fail(r, "leaf marked split", i);
    return;
  }
  uint32_t l = b->state[2 * i], rr = b->state[2 * i + 1];
  if (l == DM_NODE_AVAIL && rr == DM_NODE_AVAIL) fail(r, "two available siblings", i);
  if (s != DM_NODE_SPLIT) fail(r, "split node with other state bits", i);
  check_node(b, 2 * i, k, r);
  check_node(b, 2 * i + 1, k, r);
}

/* The block cache at rest: each order's ring holds exactly its CACHED
 * nodes, once each, between its head and tail tickets. */
static void check_cache(const dm_heap_t *h, const uint32_t *cached, report_t *r) {
  for (uint32_t o = 0; o < DM_CACHE_ORDERS; o++) {
    const dm_bcache_t *c = &h->bcache[o];
    uint32_t cap = h->bcap[o], held = 0;
    if (c->items != cached[o] || c->used != (dm_bcache_reserves(h, o) ? c->items : 0u) ||
        c->tail - c->head != c->items)
      fail(r, "block cache counters disagree with the cached nodes", o);
    for (uint32_t k = 0; k < cap; k++) {
      uint32_t y = h->bslots[h->bbase[o] + k];
      if (!y) continue;
      held++;
      if (y >= (2ull << h->buddy.top) || order_of_node(&h->buddy, y) != o ||
          h->buddy.state[y] != DM_NODE_CACHED)
        fail(r, "block cache slot holds a node that is not cached there", y);
      if ((k - c->head) % cap >= c->items) /* slot k holds tickets k mod cap: live are [head, tail) */
        fail(r, "block cache slot outside its ring's live range", y);
    }
    if (held != cached[o]) fail(r, "block cache slots disagree with the cached nodes", o);
  }
}

/* Every way's list of chunks is well formed: each chunk on it carries the
 * bin's tag and the way's index, is marked listed, links back to its
 * predecessor, and is on no other list; and no chunk is marked listed
 * without being on its way's. */
static void check_lists(const dm_heap_t *h, report_t *r) {
  uint32_t listed = 0, walked = 0;
  uint8_t *seen = calloc(h->nchunks ? h->nchunks : 1, 1);
  if (!seen) return;
  for (uint32_t i = 0; i < h->nchunks; i++) listed += h->chunks[i].listed != 0;
  for (uint32_t a = 0; a < h->narenas; a++)
    for (uint32_t c = 0; c < DM_NUM_CLASSES; c++) {
      dm_bin_t *bin = &h->bins[a * DM_NUM_CLASSES + c];
      uint32_t tag = make_tag(a, c);
      for (uint32_t w = 0; w <= h->way_mask; w++) {
        uint32_t prev = 0;
        for (uint32_t cur = bin_way(h, bin, w)->head; cur && walked <= h->nchunks;
             cur = h->chunks[cur - 1].next) {
          const dm_chunk_t *ch = &h->chunks[cur - 1];
          walked++;
          if (cur > h->nchunks || seen[cur - 1]) {
            fail(r, "chunk on two bin lists, or a list with a cycle", cur - 1);
            break;
          }
          seen[cur - 1] = 1;
          if ((uint32_t)(ch->live >> 32) != tag) fail(r, "listed chunk of another bin", cur - 1);
          if (live_way(ch->live) != w) fail(r, "listed chunk of another way", cur - 1);
          if (!ch->listed) fail(r, "chunk on a list not marked listed", cur - 1);
          if (ch->prev != prev) fail(r, "chunk list's back link broken", cur - 1);
          prev = cur;
        }
      }
    }
  if (walked != listed) fail(r, "chunks marked listed that no bin lists", listed - walked);
  free(seen);
}

/* Each bin's `held` (slab.c: its runs start again at none) is the number of chunks
 * whose tag names the bin. */
static void check_held(const dm_heap_t *h, report_t *r) {
  uint32_t nbins = h->narenas * DM_NUM_CLASSES, *n = calloc(nbins, sizeof *n);
  if (!n) {
    fail(r, "out of host memory for the check", nbins);
    return;
  }
  for (uint32_t i = 0; i < h->nchunks; i++) {
    uint32_t tag = (uint32_t)(h->chunks[i].live >> 32);
    if (tag) n[tag_arena(tag) * DM_NUM_CLASSES + tag_class(tag)]++;
  }
  for (uint32_t b = 0; b < nbins; b++)
    if (h->bins[b].held != n[b]) fail(r, "bin's chunk count disagrees with the chunks' tags", b);
  free(n);
}

/* A chunk whose bitmap lies beside it (chunk.h: chunk_bitmap; only
 * those: a copy of a device heap's metadata holds no pool) counts in `used`
 * exactly the slot bits set in it (at rest nothing is pinned), and has the
 * bits past its last slot set (a claim must never find them free). */
static void check_bitmaps(const dm_heap_t *h, report_t *r) {
  for (uint32_t i = 0; i < h->nchunks; i++) {
    uint64_t v = h->chunks[i].live;
    uint32_t tag = (uint32_t)(v >> 32), cls = tag ? tag_class(tag) : 0, set = 0;
    if (!tag || !dm_class_beside(cls)) continue;
    const dm_class_t *c = &h->classes[cls];
    const uint64_t *bm = chunk_bitmap(h, i, cls);
    for (uint32_t w = 0; w < dm_class_words(c); w++) {
      uint64_t x = bm[w], pad = dm_class_pad(c, w);
      if ((x & pad) != pad) fail(r, "bitmap bits past a chunk's last slot are clear", i);
      set += (uint32_t)__builtin_popcountll(x & ~pad);
    }
    if (set != live_used(v)) fail(r, "chunk's count disagrees with its bitmap", i);
  }
}

int dm_heap_check(const dm_heap_t *h, char *why, size_t whylen) {
  report_t r = {0, why, whylen};
  walk_t k;
  memset(&k, 0, sizeof k);
  k.fresh_end = h->fresh_end;
  k.fresh_from = h->fresh_end ? h->fresh->next : 0;
  check_node(&h->buddy, 1, &k, &r);
  check_cache(h, k.cached, &r);
  if (k.fresh != dm_fresh_count(h)) fail(&r, "fresh chunks disagree with the fresh counter", k.fresh);
  if (h->grow) { /* granules not given to the tree are held by the grower: plain BUSY */
    uint64_t rel = h->grow->released;
    if (rel > h->buddy.pool_bytes || rel % DM_GROW_BYTES)
      fail(&r, "released is not a granule boundary in the pool", rel);
    for (uint64_t a = rel; a < h->buddy.pool_bytes; a += DM_GROW_BYTES) {
      uint64_t n = (1ull << (h->buddy.top - DM_GROW_ORDER)) + (a >> DM_GROW_SHIFT); /* its node */
      if (h->buddy.state[n] != DM_NODE_BUSY) fail(&r, "granule above released not held by the grower", n);
    }
    if (h->grow->lock) fail(&r, "growth lock held at rest", 0);
  }
  for (uint32_t o = 0; o <= h->buddy.top; o++) {
    uint64_t w = h->buddy.sem[o].w;
    if (dm_semw_c(w) != (int32_t)k.count[o] || dm_semw_e(w) || dm_semw_r(w))
      fail(&r, "order semaphore disagrees with tree", o);
  }
  for (uint32_t a = 0; a < h->narenas; a++)
    for (uint32_t c = 0; c < DM_NUM_CLASSES; c++) {
      dm_bin_t *bin = &h->bins[a * DM_NUM_CLASSES + c];
      for (uint32_t w = 0; w <= h->way_mask; w++)
        if (bin_way(h, bin, w)->lock) fail(&r, "bin locked at rest", a * DM_NUM_CLASSES + c);
      if (dm_semw_e(bin->sem.w) || dm_semw_r(bin->sem.w) || dm_semw_c(bin->sem.w) < 0)
        fail(&r, "bin semaphore has expected/reserved units at rest", c);
    }
  if (h->hstats->inflight) fail(&r, "tree requests in flight at rest", h->hstats->inflight);
  check_held(h, &r);
  check_bitmaps(h, &r);
  check_lists(h, &r);
  return r.errors;
}

/* Every block is free: no slot and no large block is allocated, so the
 * free blocks of the tree, the blocks the block cache keeps and the empty
 * chunks that bins keep (a reclaim pass returns those when the tree runs
 * short) add up to the whole pool. When not, `why` (if given) says what is
 * held. */
int dm_heap_whole(const dm_heap_t *h, char *why, size_t whylen) {
  uint32_t used_chunks = 0, empty = 0;
  for (uint32_t i = 0; i < h->nchunks; i++) {
    uint64_t v = h->chunks[i].live;
    if (v && live_used(v))
      used_chunks++;
    else if (v)
      empty++;
  }
  if (used_chunks) {
    if (why) snprintf(why, whylen, "%u slab chunks hold allocated slots", used_chunks);
    return 0;
  }
  uint64_t free_bytes = (uint64_t)empty << DM_CHUNK_SHIFT;
  if (h->grow) free_bytes += h->buddy.pool_bytes - h->grow->released; /* held by the grower */
  for (uint32_t o = 0; o <= h->buddy.top; o++)
    free_bytes += (uint64_t)dm_semw_c(h->buddy.sem[o].w) << (o + DM_LEAF_SHIFT);
  for (uint32_t o = 0; o < DM_CACHE_ORDERS; o++) /* cached blocks are free */
    free_bytes += (uint64_t)h->bcache[o].items << (o + DM_LEAF_SHIFT);
  free_bytes += dm_fresh_count(h) << DM_CHUNK_SHIFT; /* and fresh chunks */
  if (free_bytes != h->buddy.pool_bytes) {
    if (why)
      snprintf(why, whylen, "%llu KiB of the pool held outside slab chunks",
               (unsigned long long)((h->buddy.pool_bytes - free_bytes) >> 10));
    return 0;
  }
  return 1;
}

int dm_heap_is_whole(const dm_heap_t *h) { return dm_heap_whole(h, NULL, 0); }
