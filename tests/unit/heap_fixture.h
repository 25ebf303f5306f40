/* heap_fixture.h — a heap in host memory for the core's tests. */
#ifndef HEAP_FIXTURE_H
#define HEAP_FIXTURE_H
#include <stddef.h>
#include "dm_internal.h"

typedef struct {
  void *mem;
  dm_heap_t *h; /* the formatted heap inside mem */
  dm_layout_t L;
} fixture_heap_t;

/* Create (format) a heap of `bytes` with `narenas` arenas; aborts on failure.
 * As the runtime formats one: its chunks fresh (core/fresh.c). */
void fixture_heap_init(fixture_heap_t *f, size_t bytes, unsigned narenas);
/* The same without fresh chunks: the whole pool in the tree (for tests of the
 * tree's own behaviour). */
void fixture_heap_init_tree(fixture_heap_t *f, size_t bytes, unsigned narenas);
void fixture_heap_fini(fixture_heap_t *f);
/* dm_heap_check() must report nothing; fails the test with its message. */
void fixture_assert_consistent(const fixture_heap_t *f);
/* The end of a test that freed every block: the heap consistent and whole
 * (dm_heap_whole: nothing held), then freed. */
void fixture_heap_fini_whole(fixture_heap_t *f);
#endif
