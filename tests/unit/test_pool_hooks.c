/*
 * test_pool_hooks.c — host/pool/pool_hooks.c against a fake driver (no GPU):
 * per-context pools keyed by the current context, chunk use, the
 * cuMemGetInfo view, fallback to the real allocator and "nothing fails with
 * the pool that would succeed without it" (trimming), pass-through and
 * foreign frees, double frees, pitch allocations, context teardown, auto
 * sizing, sync-on-free, statistics, and re-entrance from pool callbacks.
 * The tests share the hooks' global state and run in order.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "pool_glue.h"
#include "pool_hooks.h"

#define MiB (1ull << 20)
#define GiB (1ull << 30)

/* ---- fake driver ------------------------------------------------------ */
static _Thread_local CUcontext cur_ctx;
static int n_sync, n_real_alloc, n_real_free;
static size_t last_real_alloc;
static uint64_t cap, used, next_addr = 0x7f0000000000ull;
#define MAXREC 1024
static struct {
  CUdeviceptr p;
  size_t rounded;
} rec[MAXREC];
static int nrec;

static size_t rnd(size_t b) { return (b + 65535) / 65536 * 65536; }
static CUresult f_ctx_get(CUcontext *c) {
  *c = cur_ctx;
  return CUDA_SUCCESS;
}
static CUresult f_sync(void) {
  n_sync++;
  return CUDA_SUCCESS;
}
static _Thread_local CUcontext pushed_over;
static CUresult f_push(CUcontext c) {
  pushed_over = cur_ctx;
  cur_ctx = c;
  return CUDA_SUCCESS;
}
static CUresult f_pop(CUcontext *c) {
  *c = cur_ctx;
  cur_ctx = pushed_over;
  return CUDA_SUCCESS;
}
static CUresult f_alloc(CUdeviceptr *p, size_t b) {
  n_real_alloc++;
  last_real_alloc = b;
  if (!cur_ctx) return CUDA_ERROR_INVALID_CONTEXT;
  if (b == 0) return CUDA_ERROR_INVALID_VALUE;
  if (rnd(b) > cap - used || nrec == MAXREC) return CUDA_ERROR_OUT_OF_MEMORY;
  used += rnd(b);
  rec[nrec].p = next_addr;
  rec[nrec].rounded = rnd(b);
  nrec++;
  *p = next_addr;
  next_addr += rnd(b) + 64 * MiB;
  return CUDA_SUCCESS;
}
static CUresult f_free(CUdeviceptr p) {
  if (p == 0) return CUDA_SUCCESS;
  for (int i = 0; i < nrec; i++)
    if (rec[i].p == p) {
      n_real_free++;
      used -= rec[i].rounded;
      rec[i] = rec[--nrec];
      return CUDA_SUCCESS;
    }
  return CUDA_ERROR_INVALID_VALUE;
}
static CUresult f_info(size_t *fr, size_t *tot) {
  *fr = cap - used;
  *tot = cap;
  return CUDA_SUCCESS;
}
/* A "real" get-info that is really the hook again (a shim whose dlsym
 * answers with its hooks): must not deadlock from inside the pool. */
static CUresult f_info_reentrant(size_t *fr, size_t *tot) { return dm_pool_mem_get_info(fr, tot, f_info); }

#define CTX_A ((CUcontext)(uintptr_t)0xA000)
#define CTX_B ((CUcontext)(uintptr_t)0xB000)

static void reset(const char *mode, int sync, uint64_t capacity) {
  dm_pool_hooks_shutdown();
  /* everything the pools held went back */
  cap = capacity;
  used = 0;
  nrec = 0;
  n_sync = n_real_alloc = n_real_free = 0;
  cur_ctx = CTX_A;
  assert_int_equal(dm_pool_hooks_configure(mode, sync), DM_POOL_OK);
  /* prime seen_free / seen_get_info with the fakes */
  size_t a, b;
  dm_pool_mem_get_info(&a, &b, f_info);
  dm_pool_mem_free(0, f_free);
}

static int setup(void **st) {
  (void)st;
  dm_pool_driver_t d = {.ctx_get_current = f_ctx_get,
                        .ctx_synchronize = f_sync,
                        .mem_get_info = f_info,
                        .mem_free = f_free,
                        .ctx_push_current = f_push,
                        .ctx_pop_current = f_pop};
  dm_pool_hooks_set_driver(&d);
  return 0;
}

static dm_pool_hook_stats_t hstats(void) {
  dm_pool_hook_stats_t h;
  dm_pool_hooks_get_stats(&h);
  return h;
}

static void test_off(void **st) {
  (void)st;
  reset("off", 1, GiB);
  assert_false(dm_pool_hooks_enabled());
  CUdeviceptr p;
  assert_int_equal(dm_pool_mem_alloc(&p, 1000, f_alloc), CUDA_SUCCESS);
  assert_int_equal(n_real_alloc, 1);
  assert_int_equal(dm_pool_mem_free(p, f_free), CUDA_SUCCESS);
  assert_int_equal(n_real_free, 1);
  assert_int_equal(n_sync, 0);
  assert_int_equal(dm_pool_hooks_configure("bogus", 1), DM_POOL_EINVAL);
}

static void test_bytes_mode_and_get_info(void **st) {
  (void)st;
  reset("64M", 1, 4 * GiB);
  assert_true(dm_pool_hooks_enabled());
  enum { N = 1000 };
  CUdeviceptr p[N];
  for (int i = 0; i < N; i++) {
    assert_int_equal(dm_pool_mem_alloc(&p[i], 1000, f_alloc), CUDA_SUCCESS);
    assert_int_equal(p[i] % 256, 0);
    if (i) assert_true(p[i] != p[i - 1]);
  }
  assert_int_equal(n_real_alloc, 1); /* one chunk */
  assert_int_equal(last_real_alloc, 64 * MiB);
  size_t fr, tot;
  assert_int_equal(dm_pool_mem_get_info(&fr, &tot, f_info), CUDA_SUCCESS);
  assert_int_equal(tot, 4 * GiB);
  assert_int_equal(fr, 4 * GiB - N * 1024); /* as if without the pool */
  for (int i = 0; i < N; i++) assert_int_equal(dm_pool_mem_free(p[i], f_free), CUDA_SUCCESS);
  assert_int_equal(n_real_free, 0);
  assert_int_equal(n_sync, N);
  dm_pool_mem_get_info(&fr, &tot, f_info);
  assert_int_equal(fr, 4 * GiB);
  dm_pool_stats_t s;
  assert_int_equal(dm_pool_hooks_ctx_stats(CTX_A, &s), 0);
  assert_int_equal(s.allocs, N);
  assert_int_equal(s.frees, N);
  assert_int_equal(dm_pool_hooks_ctx_stats(CTX_B, &s), DM_POOL_ENOTOURS);
}

static void test_nothing_fails_that_would_succeed(void **st) {
  (void)st;
  reset("64M", 1, 100 * MiB);
  CUdeviceptr a, b, c;
  assert_int_equal(dm_pool_mem_alloc(&a, 10 * MiB, f_alloc), CUDA_SUCCESS);
  assert_int_equal(dm_pool_mem_free(a, f_free), CUDA_SUCCESS);
  /* 90 MiB would succeed without the pool: the idle 64 MiB chunk goes back */
  assert_int_equal(dm_pool_mem_alloc(&b, 90 * MiB, f_alloc), CUDA_SUCCESS);
  dm_pool_stats_t s;
  dm_pool_hooks_ctx_stats(CTX_A, &s);
  assert_int_equal(s.chunks_released, 1);
  assert_int_equal(s.chunks, 1);
  /* 20 MiB more fails with or without the pool */
  assert_int_equal(dm_pool_mem_alloc(&c, 20 * MiB, f_alloc), CUDA_ERROR_OUT_OF_MEMORY);
  assert_int_equal(hstats().fallback_allocs, 1);
  /* 8 MiB fits in what is left: the pool grows by a smaller chunk */
  assert_int_equal(dm_pool_mem_alloc(&c, 8 * MiB, f_alloc), CUDA_SUCCESS);
  dm_pool_hooks_ctx_stats(CTX_A, &s);
  assert_int_equal(s.chunks, 2);
  assert_int_equal(dm_pool_mem_free(b, f_free), CUDA_SUCCESS);
  assert_int_equal(dm_pool_mem_free(c, f_free), CUDA_SUCCESS);
}

static void test_fallback_and_passthrough(void **st) {
  (void)st;
  reset("64M", 1, 64 * MiB + MiB);
  CUdeviceptr big, small, x;
  assert_int_equal(dm_pool_mem_alloc(&big, 64 * MiB, f_alloc), CUDA_SUCCESS);
  /* no 2 MiB chunk can be had, but the driver can still give 512 KiB */
  assert_int_equal(dm_pool_mem_alloc(&small, 512 * 1024, f_alloc), CUDA_SUCCESS);
  dm_pool_hook_stats_t h = hstats();
  uint64_t fb = h.fallback_allocs, pf = h.passthrough_frees;
  assert_true(fb >= 1);
  int frees = n_real_free;
  assert_int_equal(dm_pool_mem_free(small, f_free), CUDA_SUCCESS);
  assert_int_equal(n_real_free, frees + 1);
  assert_int_equal(hstats().passthrough_frees, pf + 1);
  /* size 0 and no current context go to the driver unchanged */
  assert_int_equal(dm_pool_mem_alloc(&x, 0, f_alloc), CUDA_ERROR_INVALID_VALUE);
  cur_ctx = NULL;
  assert_int_equal(dm_pool_mem_alloc(&x, 100, f_alloc), CUDA_ERROR_INVALID_CONTEXT);
  cur_ctx = CTX_A;
  assert_int_equal(dm_pool_mem_free(big, f_free), CUDA_SUCCESS);
}

/* A pool size the 2 MiB rounding would wrap: no pool, the driver serves. */
static void test_huge_pool_size(void **st) {
  (void)st;
  reset("off", 1, GiB);
  /* 2^64 - 2048: refused (the parser takes nothing above 1 PiB; the pool's
   * 2 MiB rounding would wrap it to 0), the pool stays off */
  assert_int_not_equal(dm_pool_hooks_configure("18446744073709549568", 1), DM_POOL_OK);
  uint64_t created = hstats().pools_created;
  CUdeviceptr a;
  int reals = n_real_alloc;
  assert_int_equal(dm_pool_mem_alloc(&a, 4096, f_alloc), CUDA_SUCCESS);
  assert_int_equal(n_real_alloc, reals + 1);
  assert_int_equal(last_real_alloc, 4096);
  assert_int_equal(hstats().pools_created, created);
  assert_int_equal(dm_pool_mem_free(a, f_free), CUDA_SUCCESS);
}

static void test_bad_frees(void **st) {
  (void)st;
  reset("64M", 1, GiB);
  CUdeviceptr a, b;
  assert_int_equal(dm_pool_mem_alloc(&a, 4096, f_alloc), CUDA_SUCCESS);
  assert_int_equal(dm_pool_mem_alloc(&b, 4096, f_alloc), CUDA_SUCCESS);
  uint64_t ff = hstats().foreign_frees, rj = hstats().pool_rejected_frees;
  assert_int_equal(dm_pool_mem_free(0x1234000, f_free), CUDA_ERROR_INVALID_VALUE);
  assert_int_equal(hstats().foreign_frees, ff + 1);
  assert_int_equal(dm_pool_mem_free(a, f_free), CUDA_SUCCESS);
  assert_int_equal(dm_pool_mem_free(a, f_free), CUDA_ERROR_INVALID_VALUE);
  assert_int_equal(dm_pool_mem_free(b + 256, f_free), CUDA_ERROR_INVALID_VALUE);
  assert_int_equal(hstats().pool_rejected_frees, rj + 2);
  dm_pool_stats_t s;
  dm_pool_hooks_ctx_stats(CTX_A, &s);
  assert_int_equal(s.double_frees, 1);
  assert_int_equal(s.invalid_frees, 1);
  assert_int_equal(s.used_segments, 1);
  assert_int_equal(dm_pool_mem_free(b, f_free), CUDA_SUCCESS);
  assert_int_equal(n_real_free, 0);
}

static void test_contexts(void **st) {
  (void)st;
  reset("64M", 1, GiB);
  uint64_t created = hstats().pools_created;
  CUdeviceptr pa, pb;
  cur_ctx = CTX_A;
  assert_int_equal(dm_pool_mem_alloc(&pa, 1 * MiB, f_alloc), CUDA_SUCCESS);
  cur_ctx = CTX_B;
  assert_int_equal(dm_pool_mem_alloc(&pb, 3 * MiB, f_alloc), CUDA_SUCCESS);
  assert_int_equal(hstats().pools_created, created + 2);
  size_t fr, tot;
  dm_pool_mem_get_info(&fr, &tot, f_info); /* B's pool only */
  assert_int_equal(fr, GiB - 2 * 64 * MiB + (64 * MiB - 3 * MiB));
  /* A's pointer freed while B is current */
  assert_int_equal(dm_pool_mem_free(pa, f_free), CUDA_SUCCESS);
  /* B is destroyed: its pool is dropped, its chunk is not freed by us */
  int frees = n_real_free;
  dm_pool_hooks_forget_context(CTX_B);
  assert_int_equal(n_real_free, frees);
  assert_int_equal(dm_pool_hooks_ctx_stats(CTX_B, NULL), DM_POOL_ENOTOURS);
  nrec--;
  used -= 64 * MiB; /* the driver freed it with the context */
  assert_int_equal(dm_pool_mem_alloc(&pb, 3 * MiB, f_alloc), CUDA_SUCCESS);
  assert_int_equal(hstats().pools_created, created + 3);
  assert_int_equal(dm_pool_mem_free(pb, f_free), CUDA_SUCCESS);
  cur_ctx = CTX_A;
}

static void test_pitch(void **st) {
  (void)st;
  reset("64M", 1, GiB);
  CUdeviceptr p;
  size_t pitch = 0;
  assert_int_equal(dm_pool_mem_alloc_pitch(&p, &pitch, 100, 10, 4, f_alloc), CUDA_SUCCESS);
  assert_int_equal(pitch, 512);
  assert_int_equal(p % 512, 0);
  assert_int_equal(dm_pool_mem_alloc_pitch(&p, &pitch, 1000, 3, 16, f_alloc), CUDA_SUCCESS);
  assert_int_equal(pitch, 1024);
  assert_int_equal(dm_pool_mem_alloc_pitch(&p, &pitch, 100, 10, 3, f_alloc), CUDA_ERROR_INVALID_VALUE);
  assert_int_equal(dm_pool_mem_alloc_pitch(&p, &pitch, 0, 10, 4, f_alloc), CUDA_ERROR_INVALID_VALUE);
  assert_int_equal(dm_pool_mem_alloc_pitch(&p, &pitch, SIZE_MAX / 2, 10, 4, f_alloc),
                   CUDA_ERROR_INVALID_VALUE);
}

static void test_auto_and_reentrance(void **st) {
  (void)st;
  reset("auto", 0, 8 * GiB);
  /* the shim passes its own hook as "real" get-info: callbacks re-enter */
  size_t fr, tot;
  dm_pool_mem_get_info(&fr, &tot, f_info_reentrant);
  CUdeviceptr p;
  assert_int_equal(dm_pool_mem_alloc(&p, 1, f_alloc), CUDA_SUCCESS);
  assert_int_equal(last_real_alloc, 8 * GiB - 256 * MiB);
  dm_pool_mem_get_info(&fr, &tot, f_info);
  assert_int_equal(fr, 8 * GiB - 256);
  assert_int_equal(dm_pool_mem_free(p, f_free), CUDA_SUCCESS);
  assert_int_equal(n_sync, 0); /* sync_free off */
  dm_pool_mem_get_info(&fr, &tot, f_info);
}

static void test_print_stats(void **st) {
  (void)st;
  reset("64M", 1, GiB);
  CUdeviceptr p;
  assert_int_equal(dm_pool_mem_alloc(&p, 100, f_alloc), CUDA_SUCCESS);
  char buf[8192] = {0};
  FILE *f = fmemopen(buf, sizeof buf - 1, "w");
  dm_pool_print_stats(f);
  fclose(f);
  assert_non_null(strstr(buf, "devmalloc host pool, context 0xa000"));
  assert_non_null(strstr(buf, "fallback_allocs"));
  assert_non_null(strstr(buf, "mode bytes"));
  dm_pool_hooks_shutdown();
  assert_int_equal(used, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_off),
      cmocka_unit_test(test_bytes_mode_and_get_info),
      cmocka_unit_test(test_nothing_fails_that_would_succeed),
      cmocka_unit_test(test_fallback_and_passthrough),
      cmocka_unit_test(test_bad_frees),
      cmocka_unit_test(test_huge_pool_size),
      cmocka_unit_test(test_contexts),
      cmocka_unit_test(test_pitch),
      cmocka_unit_test(test_auto_and_reentrance),
      cmocka_unit_test(test_print_stats),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
