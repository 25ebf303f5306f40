/*
 * single.c — malloc/free for one caller at a time: the host build's entry
 * points. The GPU's (devmalloc.cu) aggregate a warp's requests and call the
 * same slab and buddy functions.
 *
 * Locking: none of its own.
 */
#include "dm_internal.h"
#include "chunk.h"

DM_FN void *dm_malloc(dm_heap_t *h, uint64_t size, uint64_t align) {
  if (size == 0 || align == 0 || (align & (align - 1)) != 0) return 0;
  if (align < DM_MIN_ALIGN) align = DM_MIN_ALIGN;
  uint64_t want = size;
  size = dm_heap_request_size(h, size);
  uint32_t arena = dm_heap_arena(h);
  int cls = dm_class_of(size, align);
  if (cls < 0) {
    char *p = dm_heap_malloc_large(h, size, align, arena);
    if (p && h->check) dm_check_arm(p, want, 1ull << (dm_heap_large_order(h, size, align) + DM_LEAF_SHIFT));
    return p;
  }
  dm_resv_t rv;
  dm_resv_init(&rv, arena, (uint32_t)cls);
  dm_grant_t g = dm_slab_grant_fast(h, &rv, 1);
  if (!g.bits) g = dm_slab_grant(h, &rv, 1);
  if (!g.bits) {
    dm_heap_note_failure(h, arena, 1);
    return 0;
  }
  dm_heap_note_slab(h, arena, (uint32_t)cls, 1);
  char *p = dm_grant_slot(g, dm_ctz64(g.bits));
  if (h->check) dm_check_arm(p, want, g.size);
  return p;
}

/* Returns DM_FREE_OK, or what was wrong with the pointer (counted). */
DM_FN int dm_free(dm_heap_t *h, void *p) {
  if (!p) return DM_FREE_OK;
  uint64_t off = (uint64_t)((char *)p - h->buddy.base);
  if ((char *)p < h->buddy.base || off >= h->buddy.pool_bytes) {
    dm_heap_note_misuse(h, DM_FREE_FOREIGN);
    return DM_FREE_FOREIGN;
  }
  uint32_t arena = dm_heap_arena(h);
  uint32_t chunk, slot, tag;
  int why = dm_slab_locate(h, off, &chunk, &slot, &tag);
  if (why == DM_FREE_NOT_SLAB) why = dm_slab_outside(h, off);
  if (why == DM_FREE_LARGE) {
    int w;
    uint64_t node = h->check ? dm_heap_large_lookup(h, off, &w) : 0;
    if (node) dm_heap_check_free(h, p, dm_heap_node_bytes(h, node));
    return dm_heap_free_large(h, off, arena);
  }
  if (why != DM_FREE_OK) {
    dm_heap_note_misuse(h, why);
    return why;
  }
  uint32_t cls = tag_class(tag);
  if (!dm_slab_free_bits(h, chunk, tag, slot >> 6, 1ull << (slot & 63u))) {
    dm_heap_note_misuse(h, DM_FREE_DOUBLE);
    return DM_FREE_DOUBLE;
  }
  if (h->check) dm_heap_check_free(h, p, h->classes[cls].size); /* still ours: not re-listed yet */
  dm_slab_free_commit(h, chunk, tag, 1);
  dm_heap_note_free(h, arena, cls, 1);
  return DM_FREE_OK;
}
