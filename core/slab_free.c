/*
 * slab_free.c — the free of a small block: where a slab pointer lives, its
 * bit cleared, the slots accounted to the chunk and its bin (slab.c says how
 * slots are granted; devmalloc.cu's free calls these once per warp and
 * bitmap word or chunk).
 *
 * Locking: lock-free. The bit is cleared with one fetch-and (a release: the
 * freeing thread's stores to the slot come before another thread can claim
 * it); a bit already clear is a double free. The bin's semaphore is
 * signalled before the chunk's `used` drops (dm_slab_free_commit).
 */
#include "dm_internal.h"
#include "chunk.h"

/* Where a slab pointer lives: its chunk, its slot there and the chunk's
 * tag (stable while the caller holds the slot: the free's commit uses it,
 * so the chunk's `live` word is read once on the way). Three steps of
 * loads, each issued together, then one branch (tested one by one, each
 * field was a round trip of its own on the GPU): the descriptor's fields,
 * the chunk's tag, the class's fields. Returns DM_FREE_OK, DM_FREE_NOT_SLAB
 * when the chunk is no slab chunk (a large block's, or a slot's whose chunk
 * went back to the tree), or the misuse class. */
DM_HOT int dm_slab_locate(const dm_heap_t *h, uint64_t off, uint32_t *chunk, uint32_t *slot, uint32_t *tag) {
  const dm_chunk_t *chunks = h->chunks;
  uint32_t idx = (uint32_t)(off >> DM_CHUNK_SHIFT), inside = idx < h->nchunks;
  /* past the last whole chunk reads the word of chunk 0's tag (in the
   * heap's metadata even where there is no whole chunk), not used: no
   * branch between the descriptor's loads and the tag's */
  uint32_t t = (uint32_t)(dm_load64_device(&chunks[inside ? idx : 0u].live) >> 32);
  /* tag 0 reads a class too, the last: its fields are not used */
  const dm_class_t *c = &h->classes[t ? tag_class(t) : DM_NUM_CLASSES - 1u];
  uint32_t coff = c->off, size = c->size, nslots = c->nslots;
  uint32_t at = (uint32_t)(off & (DM_CHUNK_BYTES - 1)), in = at - coff, i = dm_class_div(c, in);
  if ((inside == 0) | (t == 0) | (at < coff) | (i * size != in) | (i >= nslots)) {
    /* past the last whole chunk: no slab chunk, but 16 KiB blocks of the tree */
    if (!inside) return off % DM_DISPATCH_ALIGN ? DM_FREE_FOREIGN : DM_FREE_NOT_SLAB;
    return t ? DM_FREE_FOREIGN : DM_FREE_NOT_SLAB;
  }
  *chunk = idx;
  *slot = i;
  *tag = t;
  return DM_FREE_OK;
}

/* What a pointer at pool offset off is when dm_slab_locate found no slab
 * chunk there: DM_FREE_LARGE when it is 16 KiB aligned (buddy blocks are;
 * slots there are served too, layout.c), else the misuse class (a slot
 * freed twice after its chunk went back to the tree, or foreign). */
DM_FN int dm_slab_outside(const dm_heap_t *h, uint64_t off) {
  return off % DM_DISPATCH_ALIGN ? dm_buddy_classify(&h->buddy, off) : DM_FREE_LARGE;
}

/* Clear `bits` in a chunk's bitmap word; returns those that were set (the
 * others are double frees). A release: the caller's stores to the slots come
 * before another thread can claim them (devmalloc.cu, "free"). */
DM_FN uint64_t dm_slab_free_bits(dm_heap_t *h, uint32_t chunk, uint32_t tag, uint32_t word, uint64_t bits) {
  return dm_and64_release(&chunk_bitmap(h, chunk, tag_class(tag))[word], ~bits) & bits;
}

/* Account `count` slots of chunk idx freed (their bits already cleared);
 * `tag` is the chunk's, from dm_slab_locate (stable: the caller held slots).
 * The units are signalled before `used` drops: when a reclaim pass sees used
 * at 0, every free of the chunk has signalled already, so the release finds
 * the chunk's units. A waiter that takes a unit before `used` drops finds no
 * room for a moment and retries.
 * An empty chunk stays with its bin and is marked for the next reclaim pass:
 * returning it at once put every emptied chunk through the tree's per-order
 * semaphores and node locks (a free kernel of 1 KiB blocks returned 8 K
 * chunks and ran 60x slower than one of 16 B blocks), and a bin that
 * allocates again soon would take a chunk straight back. */
DM_HOT void dm_slab_free_commit(dm_heap_t *h, uint32_t chunk, uint32_t tag, uint32_t count) {
  dm_sem_signal(&bin_at(h, tag_arena(tag), tag_class(tag))->sem, count, 0);
  chunk_drop(h, chunk, count);
}
