/*
 * test_pool_lifetime.c — host/pool/pool_hooks.c: the lifetime of a
 * context's pool and the context a pooled free synchronizes, against a fake
 * driver (no GPU). Built twice: under ASan/UBSan (a pool freed under a user
 * is a heap-use-after-free) and under TSan (races, a mutex destroyed while
 * locked).
 *
 *  - 16 threads allocate and free in one context while another thread
 *    destroys that context again and again;
 *  - a block of context B freed while context A is current synchronizes B
 *    (made current for the call), not A, and leaves A current.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <cmocka.h>

#include "pool_glue.h"
#include "pool_hooks.h"

#ifndef LIFETIME_THREADS
#define LIFETIME_THREADS 16
#endif
#ifndef LIFETIME_ROUNDS
#define LIFETIME_ROUNDS 400
#endif

#define CTX_A ((CUcontext)(uintptr_t)0xA000)
#define CTX_B ((CUcontext)(uintptr_t)0xB000)

/* ---- fake driver: a bump allocator, a per-thread context stack ---------- */
static _Thread_local CUcontext cur, saved[4];
static _Thread_local int depth;
static _Atomic uint64_t next_addr = 0x100000000000ull;
static _Atomic(CUcontext) synced;
static _Atomic int syncs;

static CUresult f_ctx_get(CUcontext *c) {
  *c = cur;
  return CUDA_SUCCESS;
}
static CUresult f_push(CUcontext c) {
  if (depth == 4) return CUDA_ERROR_INVALID_VALUE;
  saved[depth++] = cur;
  cur = c;
  return CUDA_SUCCESS;
}
static CUresult f_pop(CUcontext *c) {
  if (!depth) return CUDA_ERROR_INVALID_CONTEXT;
  *c = cur;
  cur = saved[--depth];
  return CUDA_SUCCESS;
}
static CUresult f_sync(void) {
  atomic_store(&synced, cur);
  atomic_fetch_add(&syncs, 1);
  return CUDA_SUCCESS;
}
static CUresult f_alloc(CUdeviceptr *p, size_t b) {
  if (!cur || !b) return CUDA_ERROR_INVALID_VALUE;
  *p = atomic_fetch_add(&next_addr, (b + 0xffff) & ~(uint64_t)0xffff);
  return CUDA_SUCCESS;
}
static CUresult f_free(CUdeviceptr p) { return CUDA_SUCCESS; }
static CUresult f_info(size_t *fr, size_t *tot) {
  *fr = 64ull << 30;
  *tot = 80ull << 30;
  return CUDA_SUCCESS;
}

static int setup(void **st) {
  dm_pool_driver_t d = {.ctx_get_current = f_ctx_get,
                        .ctx_synchronize = f_sync,
                        .mem_get_info = f_info,
                        .mem_free = f_free,
                        .ctx_push_current = f_push,
                        .ctx_pop_current = f_pop};
  dm_pool_hooks_set_driver(&d);
  return 0;
}

static int teardown(void **st) {
  dm_pool_hooks_shutdown();
  return 0;
}

static void t_free_syncs_own_context(void **st) {
  assert_int_equal(dm_pool_hooks_configure("64M", 1), DM_POOL_OK);
  CUdeviceptr a = 0, b = 0;
  cur = CTX_A;
  assert_int_equal(dm_pool_mem_alloc(&a, 4096, f_alloc), CUDA_SUCCESS);
  cur = CTX_B;
  assert_int_equal(dm_pool_mem_alloc(&b, 4096, f_alloc), CUDA_SUCCESS);
  cur = CTX_A;
  atomic_store(&synced, NULL);
  int before = atomic_load(&syncs);
  assert_int_equal(dm_pool_mem_free(b, f_free), CUDA_SUCCESS);
  assert_int_equal(atomic_load(&syncs), before + 1);
  assert_ptr_equal(atomic_load(&synced), CTX_B);
  assert_ptr_equal(cur, CTX_A);
  assert_int_equal(depth, 0);
  assert_int_equal(dm_pool_mem_free(a, f_free), CUDA_SUCCESS);
  assert_ptr_equal(atomic_load(&synced), CTX_A);
  dm_pool_hooks_shutdown();
}

static atomic_int stop;

static void *worker(void *arg) {
  cur = CTX_A;
  CUdeviceptr live[8] = {0};
  for (int r = 0; r < LIFETIME_ROUNDS; r++) {
    int i = r % 8;
    if (live[i]) assert_int_equal(dm_pool_mem_free(live[i], f_free), CUDA_SUCCESS);
    live[i] = 0;
    assert_int_equal(dm_pool_mem_alloc(&live[i], 256 + (size_t)(r % 5) * 4096, f_alloc), CUDA_SUCCESS);
    size_t fr, tot;
    if (r % 16 == 0) dm_pool_mem_get_info(&fr, &tot, f_info);
  }
  for (int i = 0; i < 8; i++)
    if (live[i]) dm_pool_mem_free(live[i], f_free);
  return arg;
}

static void *destroyer(void *arg) {
  while (!atomic_load(&stop)) {
    dm_pool_hooks_forget_context(CTX_A);
    dm_pool_stats_t s;
    dm_pool_hooks_ctx_stats(CTX_A, &s);
    sched_yield();
  }
  return arg;
}

static void t_destroy_while_in_use(void **st) {
  assert_int_equal(dm_pool_hooks_configure("8M", 1), DM_POOL_OK);
  pthread_t w[LIFETIME_THREADS], d;
  atomic_store(&stop, 0);
  assert_int_equal(pthread_create(&d, NULL, destroyer, NULL), 0);
  for (int i = 0; i < LIFETIME_THREADS; i++) assert_int_equal(pthread_create(&w[i], NULL, worker, NULL), 0);
  for (int i = 0; i < LIFETIME_THREADS; i++) pthread_join(w[i], NULL);
  atomic_store(&stop, 1);
  pthread_join(d, NULL);
  dm_pool_hook_stats_t h;
  dm_pool_hooks_get_stats(&h);
  assert_true(h.pools_created > 1); /* the context was destroyed under them */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(t_free_syncs_own_context),
      cmocka_unit_test(t_destroy_while_in_use),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
