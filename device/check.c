/*
 * check.c — consistency checks of a quiescent heap (host only; used by the
 * tests and by the host runtime on a copy of a device heap's metadata).
 *
 * Checks the buddy tree's two invariants (no two AVAIL siblings; an AVAIL
 * node has only BUSY descendants), that split nodes carry the state their
 * children imply, that the availability bitmaps match the node states, and
 * that each order's semaphore counts exactly its AVAIL nodes with nothing
 * expected or reserved. Returns the number of violations; writes the first
 * one to `why`.
 *
 * Locking: none; the heap must be quiescent.
 */
#include <stdio.h>
#include "dm_internal.h"

typedef struct {
  int errors;
  char *why;
  size_t whylen;
} report_t;

static void fail(report_t *r, const char *msg, uint64_t node) {
  if (r->errors++ == 0 && r->why) snprintf(r->why, r->whylen, "%s (node %llu)", msg,
                                           (unsigned long long)node);
}

static int avail_bit(const dm_buddy_t *b, uint64_t i) {
  uint32_t d = 63u - (uint32_t)__builtin_clzll(i), order = b->top - d;
  uint64_t rank = i - (1ull << d);
  return (int)((b->avail[b->word_off[order] + rank / 64] >> (rank % 64)) & 1u);
}

/* All descendants of i must be BUSY and not split. */
static void check_covered(const dm_buddy_t *b, uint64_t i, report_t *r) {
  if (63u - (uint32_t)__builtin_clzll(i) >= b->top) return;
  for (uint64_t c = 2 * i; c <= 2 * i + 1; c++) {
    if (b->state[c] != DM_NODE_BUSY) fail(r, "covered node not busy", c);
    check_covered(b, c, r);
  }
}

static void check_node(const dm_buddy_t *b, uint64_t i, uint32_t *count, report_t *r) {
  uint32_t s = b->state[i], order = b->top - (63u - (uint32_t)__builtin_clzll(i));
  if (b->lock[i]) fail(r, "node locked at rest", i);
  if (avail_bit(b, i) != (s == DM_NODE_AVAIL)) fail(r, "bitmap disagrees with state", i);
  if (s == DM_NODE_AVAIL) count[order]++;
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
  uint32_t want = DM_NODE_SPLIT | (((l | rr) & DM_NODE_STATE) ? DM_NODE_PARTIAL : DM_NODE_BUSY);
  if (s != want) fail(r, "split node state disagrees with its children", i);
  check_node(b, 2 * i, count, r);
  check_node(b, 2 * i + 1, count, r);
}

int dm_heap_check(const dm_heap_t *h, char *why, size_t whylen) {
  report_t r = {0, why, whylen};
  uint32_t count[DM_MAX_ORDERS] = {0};
  check_node(&h->buddy, 1, count, &r);
  for (uint32_t o = 0; o <= h->buddy.top; o++) {
    uint64_t w = h->buddy.sem[o].w;
    if ((uint32_t)w != count[o] || (w >> 32) != 0) fail(&r, "order semaphore disagrees with tree", o);
  }
  for (uint32_t a = 0; a < h->narenas; a++)
    for (uint32_t c = 0; c < DM_NUM_CLASSES; c++) {
      const dm_bin_t *bin = &h->bins[a * DM_NUM_CLASSES + c];
      if (bin->lock) fail(&r, "bin locked at rest", a * DM_NUM_CLASSES + c);
      if (bin->sem.w >> 32) fail(&r, "bin semaphore has expected/reserved units at rest", c);
    }
  return r.errors;
}

/* The pool is whole: the root (or, for a pool that is not a power of two,
 * every maximal block) is available and no chunk is held. */
int dm_heap_is_whole(const dm_heap_t *h) {
  for (uint32_t i = 0; i < h->nchunks; i++)
    if (h->chunks[i].live) return 0;
  for (uint32_t o = 0; o <= h->buddy.top; o++) {
    uint64_t bytes = 1ull << (o + DM_LEAF_SHIFT);
    uint32_t want = (h->buddy.pool_bytes & bytes) ? 1u : 0u;
    if (o == h->buddy.top && h->buddy.pool_bytes == bytes) want = 1;
    if ((uint32_t)h->buddy.sem[o].w != want) return 0;
  }
  return 1;
}
