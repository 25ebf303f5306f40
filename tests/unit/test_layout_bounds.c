/*
 * test_layout_bounds.c — the heap layout at the edges of what it can
 * describe, under UBSan and ASan: sizes near 2^64 and just above the largest
 * describable heap are refused (never planned with a wrapped size or an
 * order past the order table), the largest one and small and odd ones are
 * planned within their heap, and building the heap image indexes only its
 * tables (no memory is touched: the base is never dereferenced).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "dm_internal.h"

static void check_plan(uint64_t bytes) {
  dm_layout_t L;
  assert_int_equal(dm_layout_compute(bytes, 1, &L), 0);
  assert_true(L.top < DM_MAX_ORDERS);
  assert_true(L.nchunks <= UINT32_MAX);
  assert_true(L.pool_bytes <= bytes);
  assert_true(L.heap_off + sizeof(dm_heap_t) <= bytes);
  assert_int_equal(L.total, bytes);
  static dm_heap_t h;
  dm_heap_build(&L, 1ull << 40, bytes, &h);
  assert_int_equal(h.buddy.top, L.top);
}

static void t_refused(void **st) {
  dm_layout_t L;
  uint64_t max = dm_layout_max_bytes();
  assert_int_equal(dm_layout_compute(UINT64_MAX, 1, &L), -1);
  assert_int_equal(dm_layout_compute(UINT64_MAX - (2ull << 20) + 1, 1, &L), -1);
  assert_int_equal(dm_layout_compute(1ull << 63, 1, &L), -1);
  assert_int_equal(dm_layout_compute(max + 1, 1, &L), -1);
  assert_int_equal(dm_layout_compute(DM_CHUNK_BYTES - 1, 1, &L), -1);
  assert_int_equal(dm_layout_compute(64ull << 20, 0, &L), -1);
  assert_int_equal(dm_layout_compute(64ull << 20, DM_MAX_ARENAS + 1, &L), -1);
}

static void t_planned(void **st) {
  check_plan(dm_layout_max_bytes());
  check_plan(dm_layout_max_bytes() - 12345);
  check_plan(1ull << 40);
  check_plan((3ull << 20) + 12345); /* odd */
  check_plan(1ull << 20);           /* the shim's smallest heap */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(t_refused),
      cmocka_unit_test(t_planned),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
