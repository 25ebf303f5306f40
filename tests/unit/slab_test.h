/* slab_test.h — what the slab's tests share: the chunk a slot lies in. */
#ifndef SLAB_TEST_H
#define SLAB_TEST_H
#include "dm_internal.h"

/* The chunk index of a slab pointer. */
static inline uint32_t chunk_of(const dm_heap_t *h, const void *p) {
  return (uint32_t)((uint64_t)((const char *)p - h->buddy.base) >> DM_CHUNK_SHIFT);
}
#endif
