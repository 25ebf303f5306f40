/* heap_fixture.c — see heap_fixture.h. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "heap_fixture.h"

static void write_host(void *ctx, uint64_t off, const void *src, uint64_t n) {
  memcpy((char *)ctx + off, src, n);
}

static void fill_host(void *ctx, uint64_t off, uint32_t v, uint64_t count) {
  uint32_t *w = (uint32_t *)((char *)ctx + off);
  for (uint64_t i = 0; i < count; i++) w[i] = v;
}

static void init(fixture_heap_t *f, size_t bytes, unsigned narenas, int fresh) {
  assert_int_equal(dm_layout_compute(bytes, narenas, &f->L), 0);
  f->mem = aligned_alloc(2u << 20, (bytes + (2u << 20) - 1) / (2u << 20) * (2u << 20));
  assert_non_null(f->mem);
  memset((char *)f->mem + f->L.pool_bytes, 0, bytes - f->L.pool_bytes);
  dm_heap_t tmp;
  dm_heap_build(&f->L, (uint64_t)(uintptr_t)f->mem, bytes, &tmp);
  dm_heap_format(&f->L, &tmp, write_host, fill_host, f->mem, fresh);
  f->h = (dm_heap_t *)((char *)f->mem + f->L.heap_off);
}

void fixture_heap_init(fixture_heap_t *f, size_t bytes, unsigned narenas) { init(f, bytes, narenas, 1); }
void fixture_heap_init_tree(fixture_heap_t *f, size_t bytes, unsigned narenas) { init(f, bytes, narenas, 0); }

void fixture_heap_fini(fixture_heap_t *f) {
  free(f->mem);
  f->mem = NULL;
}

void fixture_assert_consistent(const fixture_heap_t *f) {
  char why[160] = "";
  int n = dm_heap_check(f->h, why, sizeof why);
  if (n) fail_msg("heap inconsistent: %d violations, first: %s", n, why);
}

void fixture_heap_fini_whole(fixture_heap_t *f) {
  char why[160] = "";
  fixture_assert_consistent(f);
  if (!dm_heap_whole(f->h, why, sizeof why)) fail_msg("heap not whole: %s", why);
  fixture_heap_fini(f);
}
