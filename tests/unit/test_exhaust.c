/* test_exhaust.c — fill a heap with one size until NULL comes back: it ends,
 * and utilization (bytes granted / heap bytes) is at least 90% of what the
 * block size allows for every power of two from 16 B to 1 MiB (a 16 B
 * request takes a 32-byte block by default: 45%; dense, 90%), and at least
 * 80% for mixed sizes over many arenas. Prints the figures. Then frees all and
 * checks the heap is whole again; the "no room" answer of a full heap, and
 * admission by the bytes in flight. */
#include "test_common.h"

#define HEAP (32ull << 20)

static int dense; /* fill dense heaps (DEVMALLOC_DENSE) */
static double fill_and_drain(uint64_t size, uint64_t *count_out) {
  fixture_heap_t f;
  fixture_heap_init(&f, HEAP, 4);
  if (dense) f.h->round = DM_MIN_ALIGN - 1;
  uint64_t cap = HEAP / size + 16, n = 0;
  void **p = malloc(cap * sizeof *p);
  for (;;) {
    assert_true(n < cap);
    void *q = dm_malloc(f.h, size, 16);
    if (!q) break;
    p[n++] = q;
  }
  /* Out of memory is stable: asking again still fails at once. */
  assert_null(dm_malloc(f.h, size, 16));
  for (uint64_t i = 0; i < n; i++) assert_int_equal(dm_free(f.h, p[i]), DM_FREE_OK);
  fixture_assert_consistent(&f);
  assert_true(dm_heap_is_whole(f.h));
  free(p);
  fixture_heap_fini(&f);
  *count_out = n;
  return (double)(n * size) / (double)HEAP;
}

static void test_utilization_powers_of_two(void **st) {
  printf("utilization at exhaustion, %llu MiB heap:\n", (unsigned long long)(HEAP >> 20));
  for (dense = 0; dense < 2; dense++)
    for (uint64_t size = 16; size <= (1u << 20); size <<= 1) {
      uint64_t n;
      double u = fill_and_drain(size, &n);
      double room = size < DM_SECTOR_BYTES && !dense ? (double)size / DM_SECTOR_BYTES : 1.0;
      printf("  %8llu B  %9llu blocks  %5.1f%%%s\n", (unsigned long long)size, (unsigned long long)n, 100 * u,
             dense ? " (dense)" : "");
      if (u < 0.90 * room)
        fail_msg("utilization %.1f%% < 90%% of %.0f%% at %llu B", 100 * u, 100 * room,
                 (unsigned long long)size);
    }
  dense = 0;
}

static void test_utilization_odd_sizes(void **st) {
  uint64_t sizes[] = {24, 100, 3000, 5000, 12345};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    uint64_t n;
    double u = fill_and_drain(sizes[i], &n);
    printf("  %8llu B  %9llu blocks  %5.1f%% (odd size)\n", (unsigned long long)sizes[i],
           (unsigned long long)n, 100 * u);
    assert_true(u > 0.5);
  }
}

/* Mixed sizes 16 .. 4096 B, one lane per request from 28 arenas in turn (a
 * warp's 32 requests per arena), fill a 256 MiB heap to at least 80%: the
 * small classes' requests share their group's first bin instead of taking a
 * chunk in every arena (69% when each bin took its own). */
static void test_utilization_mixed_sizes(void **st) {
  const uint64_t heap = 256ull << 20;
  const uint32_t narenas = 28;
  fixture_heap_t f;
  fixture_heap_init(&f, heap, narenas);
  uint64_t cap = heap / 16, n = 0, bytes = 0;
  void **p = malloc(cap * sizeof *p);
  uint32_t r = 17;
  for (uint32_t fails = 0; fails < 256;) { /* until NULL comes back a few times */
    r = r * 1664525u + 1013904223u;
    uint32_t size = 16 + (r >> 8) % 4081, cls = (uint32_t)dm_class_of(size, 16);
    dm_resv_t rv;
    dm_resv_init(&rv, (uint32_t)(n / 32 % narenas), cls);
    dm_grant_t g = dm_slab_grant(f.h, &rv, 1);
    if (!g.bits) {
      fails++;
      continue;
    }
    assert_true(n < cap);
    p[n++] = dm_grant_slot(g, dm_ctz64(g.bits));
    bytes += size;
  }
  double u = (double)bytes / (double)heap;
  printf("  mixed 16..4096 B, %u arenas: %llu blocks  %5.1f%%\n", narenas, (unsigned long long)n, 100 * u);
  if (u < 0.80) fail_msg("mixed-size utilization %.1f%% < 80%%", 100 * u);
  for (uint64_t i = 0; i < n; i++) assert_int_equal(dm_free(f.h, p[i]), DM_FREE_OK);
  fixture_assert_consistent(&f);
  assert_true(dm_heap_is_whole(f.h));
  free(p);
  fixture_heap_fini(&f);
}

/* The answer a warp whose run failed asks for before it asks lane by lane:
 * "no room for one block" exactly while a request of that order fails, and
 * not while empty chunks that bins keep could make room (a run of the tree
 * reclaims them first). */
static void test_no_room_answer(void **st) {
  fixture_heap_t f;
  fixture_heap_init(&f, HEAP, 4);
  uint64_t size = 64u << 10, n = 0, cap = HEAP / size;
  uint32_t order = dm_heap_large_order(f.h, size, 16);
  void **p = malloc(cap * sizeof *p);
  assert_false(dm_tree_no_room(f.h, order));
  while ((p[n] = dm_malloc(f.h, size, 16)) != NULL) n++;
  assert_true(n > 0 && n <= cap);
  assert_null(dm_heap_malloc_run(f.h, order, 2, 0));
  assert_true(dm_tree_no_room(f.h, order));
  assert_int_equal(dm_free(f.h, p[--n]), DM_FREE_OK);
  assert_false(dm_tree_no_room(f.h, order));
  assert_non_null(p[n] = dm_malloc(f.h, size, 16));
  n++;
  for (uint64_t i = 0; i < n; i++) assert_int_equal(dm_free(f.h, p[i]), DM_FREE_OK);
  /* Small blocks fill the heap, then all go: their chunks are kept empty,
   * and the run asked next reclaims them and succeeds. */
  void *q, **s = malloc((HEAP / 16) * sizeof *s);
  uint64_t m = 0;
  while ((q = dm_malloc(f.h, 16, 16)) != NULL) s[m++] = q;
  /* the pool's end past its last whole chunk may still hold a large block */
  void *tail[8];
  int t = 0;
  while (t < 8 && (tail[t] = dm_malloc(f.h, size, 16)) != NULL) t++;
  assert_true(t < 8);
  assert_true(dm_tree_no_room(f.h, order));
  while (t > 0) assert_int_equal(dm_free(f.h, tail[--t]), DM_FREE_OK);
  for (uint64_t i = 0; i < m; i++) assert_int_equal(dm_free(f.h, s[i]), DM_FREE_OK);
  char *run = dm_heap_malloc_run(f.h, order, 2, 0);
  assert_non_null(run);
  assert_false(dm_tree_no_room(f.h, order));
  assert_int_equal(dm_free(f.h, run), DM_FREE_OK);
  assert_int_equal(dm_free(f.h, run + size), DM_FREE_OK);
  fixture_assert_consistent(&f);
  assert_true(dm_heap_is_whole(f.h));
  free(s);
  free(p);
  fixture_heap_fini(&f);
}

/* Admission by the bytes in flight (tree.c): a request that others' bytes
 * in flight leave no room for waits for them, boundedly, and is never
 * refused for bytes that are only in flight. With the whole pool counted in
 * flight and nobody to settle it, a request still gets its block after the
 * wait, and its own count is taken back; with the pool held, it is refused. */
static void test_admission_never_refuses_on_flight_alone(void **st) {
  fixture_heap_t f;
  fixture_heap_init(&f, HEAP, 4);
  dm_heap_t *h = f.h;
  uint64_t size = 1u << 20, pool = h->buddy.pool_bytes;
  h->hstats->inflight = pool;
  void *p = dm_malloc(h, size, 16);
  assert_non_null(p);
  assert_int_equal(h->hstats->inflight, pool);
  assert_int_equal(h->hstats->footprint, size);
  h->hstats->inflight = 0;
  void **q = malloc((HEAP / size) * sizeof *q);
  uint64_t n = 0;
  while ((q[n] = dm_malloc(h, size, 16)) != NULL) n++;
  assert_true(n > 0);
  assert_int_equal(h->hstats->inflight, 0);
  assert_true(h->buddy.pool_bytes - h->hstats->footprint < size);
  assert_int_equal(dm_free(h, p), DM_FREE_OK);
  for (uint64_t i = 0; i < n; i++) assert_int_equal(dm_free(h, q[i]), DM_FREE_OK);
  assert_int_equal(h->hstats->footprint, 0);
  fixture_assert_consistent(&f);
  assert_true(dm_heap_is_whole(h));
  free(q);
  fixture_heap_fini(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_utilization_powers_of_two),
      cmocka_unit_test(test_utilization_odd_sizes),
      cmocka_unit_test(test_utilization_mixed_sizes),
      cmocka_unit_test(test_no_room_answer),
      cmocka_unit_test(test_admission_never_refuses_on_flight_alone),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
