/* test_misuse.c — bad input: free(NULL), double free, foreign pointers,
 * malloc(0), oversized and badly aligned requests. Misuse is detected,
 * counted, and leaves the heap consistent and usable. */
#include "test_common.h"

#define MiB (1ull << 20)

static fixture_heap_t f;

static int setup(void **st) {
  fixture_heap_init(&f, 8 * MiB, 2);
  return 0;
}
static int teardown(void **st) {
  fixture_heap_fini(&f);
  return 0;
}

static void test_free_null_is_noop(void **st) {
  assert_int_equal(dm_free(f.h, NULL), DM_FREE_OK);
  assert_int_equal(f.h->hstats->foreign_frees + f.h->hstats->double_frees, 0);
  assert_true(dm_heap_is_whole(f.h));
}

static void test_zero_and_oversized(void **st) {
  assert_null(dm_malloc(f.h, 0, 16));
  assert_null(dm_malloc(f.h, f.h->buddy.pool_bytes + 1, 16));
  assert_null(dm_malloc(f.h, UINT64_MAX, 16));
  assert_null(dm_malloc(f.h, 64, 48)); /* alignment not a power of two */
  assert_true(dm_heap_is_whole(f.h));
  fixture_assert_consistent(&f);
}

static void test_double_free_small(void **st) {
  void *a = dm_malloc(f.h, 100, 16), *b = dm_malloc(f.h, 100, 16);
  assert_int_equal(dm_free(f.h, a), DM_FREE_OK);
  assert_int_equal(dm_free(f.h, a), DM_FREE_DOUBLE);
  assert_int_equal(f.h->hstats->double_frees, 1);
  void *c = dm_malloc(f.h, 100, 16); /* still usable, nothing lost */
  assert_non_null(c);
  assert_int_equal(dm_free(f.h, b), DM_FREE_OK);
  assert_int_equal(dm_free(f.h, c), DM_FREE_OK);
  fixture_assert_consistent(&f);
  assert_true(dm_heap_is_whole(f.h));
  /* The only block of its chunk: the chunk goes back to the tree at the first
   * free, and the second free is still recognized as a double free. */
  void *only = dm_malloc(f.h, 3000, 16);
  assert_int_equal(dm_free(f.h, only), DM_FREE_OK);
  assert_true(dm_heap_is_whole(f.h));
  assert_int_equal(dm_free(f.h, only), DM_FREE_DOUBLE);
  assert_int_equal(f.h->hstats->double_frees, 2);
  fixture_assert_consistent(&f);
  f.h->hstats->double_frees = 0;
}

static void test_double_free_large(void **st) {
  void *a = dm_malloc(f.h, 100000, 16);
  void *keep = dm_malloc(f.h, 100000, 16);
  assert_int_equal(dm_free(f.h, a), DM_FREE_OK);
  assert_int_equal(dm_free(f.h, a), DM_FREE_DOUBLE);
  assert_int_equal(f.h->hstats->double_frees, 1);
  fixture_assert_consistent(&f);
  assert_int_equal(dm_free(f.h, keep), DM_FREE_OK);
  assert_true(dm_heap_is_whole(f.h));
  f.h->hstats->double_frees = 0;
}

static void test_foreign_pointers(void **st) {
  char stack_var;
  void *small = dm_malloc(f.h, 64, 16), *large = dm_malloc(f.h, 65536, 16);
  char *chunk = (char *)((uintptr_t)small & ~(uintptr_t)(DM_CHUNK_BYTES - 1));
  void *bad[] = {
      &stack_var,                                      /* outside the pool */
      (char *)small + 16,                              /* inside a slab slot, not its start */
      chunk,                                           /* a chunk's base: never handed out */
      chunk + 8,                                       /* the chunk's bitmap */
      (char *)large + 16384,                           /* inside a large block */
      (char *)large + 4096,                            /* unaligned inside a large block */
      f.h->buddy.base + f.h->buddy.pool_bytes - 16384, /* free, never allocated */
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    assert_int_not_equal(dm_free(f.h, bad[i]), DM_FREE_OK);
  assert_int_equal(f.h->hstats->foreign_frees + f.h->hstats->double_frees, sizeof bad / sizeof bad[0]);
  fixture_assert_consistent(&f);
  assert_int_equal(dm_free(f.h, small), DM_FREE_OK);
  assert_int_equal(dm_free(f.h, large), DM_FREE_OK);
  fixture_assert_consistent(&f);
  assert_true(dm_heap_is_whole(f.h));
}

static void test_aligned_requests(void **st) {
  for (uint64_t align = 16; align <= (1u << 20); align <<= 1) {
    for (uint64_t size = 1; size <= (1u << 17); size = size * 3 + 1) {
      void *p = dm_malloc(f.h, size, align);
      assert_non_null(p);
      assert_int_equal((uintptr_t)p % align, 0);
      assert_int_equal(dm_free(f.h, p), DM_FREE_OK);
    }
  }
  fixture_assert_consistent(&f);
  assert_true(dm_heap_is_whole(f.h));
}

/* Check mode: blocks written within their size pass; a byte written past the
 * end of a slab block or a large block is found at free, counted, and the
 * first such block named; the heap stays consistent. */
static void test_check_mode(void **st) {
  f.h->check = 1;
  uint64_t fails0 = f.h->hstats->check_failures;
  for (uint64_t size = 1; size <= 40000; size = size * 5 + 3) { /* clean: slab and large */
    char *p = dm_malloc(f.h, size, 16);
    assert_non_null(p);
    memset(p, 0x5a, size);
    assert_int_equal(dm_free(f.h, p), DM_FREE_OK);
  }
  assert_int_equal(f.h->hstats->check_failures, fails0);
  char *a = dm_malloc(f.h, 24, 16), *b = dm_malloc(f.h, 20000, 16);
  assert_non_null(a);
  assert_non_null(b);
  a[24] ^= 1; /* one byte past a 24-byte block */
  assert_int_equal(dm_free(f.h, a), DM_FREE_OK);
  assert_int_equal(f.h->hstats->check_failures, fails0 + 1);
  if (fails0 == 0) {
    assert_int_equal(f.h->hstats->check_first_bad, (uint64_t)(uintptr_t)a);
    assert_int_equal(f.h->hstats->check_first_size, 24);
  }
  memset(b + 20000, 0, 3); /* past a large block's request */
  assert_int_equal(dm_free(f.h, b), DM_FREE_OK);
  assert_int_equal(f.h->hstats->check_failures, fails0 + 2);
  f.h->check = 0;
  fixture_assert_consistent(&f);
  assert_true(dm_heap_is_whole(f.h));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_check_mode),         cmocka_unit_test(test_free_null_is_noop),
      cmocka_unit_test(test_zero_and_oversized), cmocka_unit_test(test_double_free_small),
      cmocka_unit_test(test_double_free_large),  cmocka_unit_test(test_foreign_pointers),
      cmocka_unit_test(test_aligned_requests),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
