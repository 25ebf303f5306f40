/* test_first_contact.c — a fresh heap's first requests. Every thread of a
 * "first kernel" asks at once, on a heap nothing has used yet, for blocks of
 * one size whose total is at most half the pool: none may get NULL (each
 * arrives while the fresh chunks are being released to the tree, and that
 * is a reason to wait, not to fail). Then a heap whose free bytes are in
 * pieces too small for a request answers NULL without waiting for moves
 * that are not there, and says "on its way" while one is. Built with the
 * chaos switch too (yields at the racy points; mk/core.mk). */
#include <pthread.h>
#include "test_common.h"

#ifndef FIRST_REPS
#define FIRST_REPS 4
#endif
#ifndef FIRST_THREADS
#define FIRST_THREADS 16
#endif

typedef struct {
  dm_heap_t *h;
  uint64_t size;
  uint32_t each;
  pthread_barrier_t *start;
  uint32_t nulls;
  void *got[64];
} first_arg_t;

static void *first_kernel(void *a_) {
  first_arg_t *a = a_;
  pthread_barrier_wait(a->start);
  for (uint32_t i = 0; i < a->each; i++) {
    a->got[i] = dm_malloc(a->h, a->size, 16);
    if (!a->got[i])
      a->nulls++;
    else
      memset(a->got[i], 0x5a, 1), ((char *)a->got[i])[a->size - 1] = 0x5a;
  }
  return 0;
}

/* FIRST_THREADS threads, each `each` blocks of `size`, on a fresh fixed heap
 * of `heap` bytes; returns the NULLs. The heap is whole again afterwards. */
static uint32_t first_pass(uint64_t heap, uint64_t size, uint32_t each) {
  fixture_heap_t f;
  fixture_heap_init(&f, heap, 8);
  pthread_barrier_t start;
  pthread_barrier_init(&start, 0, FIRST_THREADS);
  first_arg_t args[FIRST_THREADS];
  pthread_t t[FIRST_THREADS];
  for (int i = 0; i < FIRST_THREADS; i++) {
    args[i] = (first_arg_t){.h = f.h, .size = size, .each = each, .start = &start};
    pthread_create(&t[i], 0, first_kernel, &args[i]);
  }
  uint32_t nulls = 0;
  for (int i = 0; i < FIRST_THREADS; i++) {
    pthread_join(t[i], 0);
    nulls += args[i].nulls;
  }
  for (int i = 0; i < FIRST_THREADS; i++)
    for (uint32_t k = 0; k < each; k++)
      if (args[i].got[k]) assert_int_equal(dm_free(f.h, args[i].got[k]), DM_FREE_OK);
  fixture_assert_consistent(&f);
  pthread_barrier_destroy(&start);
  fixture_heap_fini(&f);
  return nulls;
}

/* Live bytes at most half the heap: 0 NULL, for every size class of the
 * tree (one leaf .. megabytes) and a slab size beside them. */
static void test_fresh_heap_serves_every_first_request(void **st) {
  static const struct {
    uint64_t heap, size;
    uint32_t each;
  } cells[] = {
      {64ull << 20, 4096, 64},    {64ull << 20, 16384, 64},      {64ull << 20, 65536, 16},
      {64ull << 20, 24576, 32},   {64ull << 20, 1ull << 20, 2},  {256ull << 20, 8ull << 20, 1},
      {256ull << 20, 262144, 16}, {256ull << 20, 3ull << 20, 1},
  };
  for (int rep = 0; rep < FIRST_REPS; rep++)
    for (size_t c = 0; c < sizeof cells / sizeof cells[0]; c++) {
      uint32_t nulls = first_pass(cells[c].heap, cells[c].size, cells[c].each);
      if (nulls)
        fail_msg("heap %llu MiB, %u x %u x %llu B: %u NULL", (unsigned long long)(cells[c].heap >> 20),
                 FIRST_THREADS, cells[c].each, (unsigned long long)cells[c].size, nulls);
    }
}

/* Free bytes only in 16 KiB pieces: a 1 MiB request fails at once, and the
 * tree says "empty, settled"; with a move counted, it is not settled. */
static void test_fragmented_heap_fails_without_waiting(void **st) {
  fixture_heap_t f;
  fixture_heap_init_tree(&f, 8ull << 20, 1);
  void *blk[1024];
  uint32_t n = 0;
  while (n < 1024 && (blk[n] = dm_malloc(f.h, 16384, 16)) != 0) n++;
  assert_true(n > 64);
  for (uint32_t i = 0; i < n; i += 2) dm_free(f.h, blk[i]); /* every other leaf */
  uint32_t order = dm_heap_large_order(f.h, 1ull << 20, 16);
  assert_true(dm_buddy_settled_empty(&f.h->buddy, order));
  dm_buddy_move_begin(&f.h->buddy);
  assert_false(dm_buddy_settled_empty(&f.h->buddy, order));
  dm_buddy_move_end(&f.h->buddy);
  uint32_t backoffs = dm_host_backoffs; /* not the time: a loaded machine's yields take long */
  assert_null(dm_malloc(f.h, 1ull << 20, 16));
  assert_int_equal(dm_host_backoffs, backoffs); /* answered, not waited for */
  assert_int_equal(dm_load64(f.h->buddy.moving), 0);
  for (uint32_t i = 1; i < n; i += 2) dm_free(f.h, blk[i]);
  fixture_assert_consistent(&f);
  fixture_heap_fini(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_fresh_heap_serves_every_first_request),
                                     cmocka_unit_test(test_fragmented_heap_fails_without_waiting)};
  return cmocka_run_group_tests(tests, 0, 0);
}
