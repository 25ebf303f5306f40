/*
 * fresh.c — the chunks of a fixed heap that nothing has used yet, handed out
 * in order by one counter.
 *
 * A fresh fixed heap's pool is formatted as chunks (layout.c: every node
 * SPLIT down to the chunk order, each chunk CACHED, "kept"), and a bin's
 * grow takes its run of k chunks with one fetch-add on `next`: chunks
 * [next, next + k), adjacent. In a fresh heap every bin of every arena
 * takes its first chunks in the first kernel: split from the tree, those
 * grows queued on its semaphores (docs/decisions.md, "Fresh chunks").
 *
 * The rest goes to the tree when a request needs it (tree.c, beside the
 * block cache's flush): one fetch-add takes [next, end) for the release,
 * whose maximal aligned blocks become plain blocks (their nodes BUSY) and
 * are freed, merging with each other. A chunk taken earlier is the caller's
 * (BUSY, its parent SPLIT, as if split from the tree); it goes to the tree
 * by the ordinary free when its bin lets it go.
 *
 * A heap that grows has none (end 0): its memory comes from the host.
 *
 * A request that finds the tree empty while the release runs waits for it
 * (the release counts as a move: buddy.c, dm_buddy_settled_empty): on an
 * empty heap the first kernel's large requests all arrive during it.
 *
 * Locking: none; `next` is only ever added to, so each chunk is taken by
 * exactly one caller (a grow or the release). Calls buddy.c.
 */
#include "dm_internal.h"

/* The chunk node of chunk index c. */
static DM_INLINE uint64_t fresh_node(const dm_heap_t *h, uint64_t c) {
  return dm_buddy_node_at(&h->buddy, DM_CHUNK_ORDER, c << DM_CHUNK_SHIFT);
}

DM_FN uint32_t dm_fresh_take(dm_heap_t *h, uint32_t k, uint32_t *first) {
  uint64_t end = h->fresh_end;
  if (!end || dm_load64(&h->fresh->next) >= end) return 0;
  uint64_t a = dm_add64(&h->fresh->next, k);
  if (a >= end) return 0;
  uint32_t got = end - a < k ? (uint32_t)(end - a) : k;
  for (uint32_t i = 0; i < got; i++) dm_store32(&h->buddy.state[fresh_node(h, a + i)], DM_NODE_BUSY);
  dm_fence(); /* owned (not kept) before the chunks' memory is used */
  *first = (uint32_t)a;
  return got;
}

DM_COLD int dm_fresh_release(dm_heap_t *h) {
  uint64_t end = h->fresh_end;
  if (!end || dm_load64(&h->fresh->next) >= end) return 0;
  dm_buddy_move_begin(&h->buddy); /* before the chunks leave `next`: see tree.c */
  uint64_t a = dm_add64(&h->fresh->next, end);
  if (a >= end) {
    dm_buddy_move_end(&h->buddy);
    return 0;
  }
  while (a < end) { /* the largest aligned block at a inside [a, end) */
    uint32_t j = 0;
    while (DM_CHUNK_ORDER + j < h->buddy.top && (a & ((2ull << j) - 1)) == 0 && a + (2ull << j) <= end) j++;
    dm_buddy_free_run(&h->buddy, dm_buddy_node_at(&h->buddy, DM_CHUNK_ORDER + j, a << DM_CHUNK_SHIFT), j + 1);
    a += 1ull << j;
  }
  dm_buddy_move_end(&h->buddy);
  return 1;
}
