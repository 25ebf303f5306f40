/*
 * test_heap_sizes.c — the host runtime's heap creation (host/heap/heap_runtime.c)
 * at the size limits, against a permissive fake driver (no GPU): it hands
 * out any size, at addresses that are not 2 MiB aligned (so the aligned
 * retry runs), and checks that every memset and copy lands inside memory it
 * handed out. Sizes near 2^64 must be refused before any allocation, never
 * wrapped into a small allocation written below its start. Then every
 * driver call of a heap creation is made to fail in turn: the creation must
 * fail cleanly (no device memory kept, no host memory leaked: LSan).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <cuda.h>
#include "devmalloc.h"
#include "dm_internal.h"

/* ---- fake driver ------------------------------------------------------ */
#define MAXA 16
static struct {
  CUdeviceptr p;
  size_t n;
} allocs[MAXA];
static int nallocs, nalloc_calls, bad_writes;
static int calls, fail_at; /* fail the fail_at-th driver call (1-based; 0: none) */
#define FAULT()                                        \
  do {                                                 \
    if (++calls == fail_at) return CUDA_ERROR_UNKNOWN; \
  } while (0)
static CUdeviceptr next = 0x100001000ull; /* deliberately misaligned */

static void check_range(CUdeviceptr d, size_t n) {
  for (int i = 0; i < nallocs; i++)
    if (d >= allocs[i].p && n <= allocs[i].n && d - allocs[i].p <= allocs[i].n - n) return;
  bad_writes++;
}

CUresult cuMemAlloc(CUdeviceptr *p, size_t n) {
  nalloc_calls++;
  FAULT();
  if (nallocs == MAXA) return CUDA_ERROR_OUT_OF_MEMORY;
  *p = next;
  allocs[nallocs].p = next;
  allocs[nallocs].n = n;
  nallocs++;
  next += 0x10000000000ull + 0x1000;
  return CUDA_SUCCESS;
}
CUresult cuMemFree(CUdeviceptr p) {
  for (int i = 0; i < nallocs; i++)
    if (allocs[i].p == p) {
      allocs[i] = allocs[--nallocs];
      return CUDA_SUCCESS;
    }
  return CUDA_ERROR_INVALID_VALUE;
}
CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream s) {
  FAULT();
  check_range(d, n);
  return CUDA_SUCCESS;
}
CUresult cuMemsetD32Async(CUdeviceptr d, unsigned int v, size_t n, CUstream s) {
  FAULT();
  check_range(d, n * 4);
  return CUDA_SUCCESS;
}
CUresult cuMemcpyHtoDAsync(CUdeviceptr d, const void *src, size_t n, CUstream s) {
  FAULT();
  check_range(d, n);
  return CUDA_SUCCESS;
}
CUresult cuMemcpyDtoHAsync(void *dst, CUdeviceptr s, size_t n, CUstream st) {
  check_range(s, n);
  memset(dst, 0, n);
  return CUDA_SUCCESS;
}
CUresult cuMemcpyDtoH(void *dst, CUdeviceptr s, size_t n) { return cuMemcpyDtoHAsync(dst, s, n, 0); }
#include "fake_ctx.h" /* the context and stream stubs */
CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d) {
  *v = 132;
  return CUDA_SUCCESS;
}
CUresult cuModuleGetGlobal(CUdeviceptr *d, size_t *n, CUmodule m, const char *name) {
  return CUDA_ERROR_NOT_FOUND;
}
CUresult cuLibraryGetGlobal(CUdeviceptr *d, size_t *n, CUlibrary l, const char *name) {
  return CUDA_ERROR_NOT_FOUND;
}

static void reset(void) { nallocs = nalloc_calls = bad_writes = calls = fail_at = 0; }

static void t_refused_before_allocating(void **st) {
  static const size_t huge[] = {SIZE_MAX, SIZE_MAX - (2u << 20) + 1, (size_t)1 << 63, 0};
  for (int i = 0; huge[i]; i++) {
    reset();
    devmalloc_heap_t *h = NULL;
    assert_int_not_equal(devmalloc_heap_create(NULL, huge[i], &h), DEVMALLOC_OK);
    assert_null(h);
    assert_int_equal(nalloc_calls, 0);
    assert_int_equal(bad_writes, 0);
    assert_int_equal(nallocs, 0);
  }
  reset();
  devmalloc_heap_t *h = NULL;
  assert_int_not_equal(devmalloc_heap_create(NULL, dm_layout_max_bytes() + 1, &h), DEVMALLOC_OK);
  assert_int_equal(nalloc_calls, 0);
}

/* A misaligned first allocation is retried larger; the heap lies inside. */
static void t_aligned_retry_writes_inside(void **st) {
  static const size_t sizes[] = {64u << 20, (3u << 20) + 12345, 1u << 20};
  for (int i = 0; i < 3; i++) {
    reset();
    devmalloc_heap_t *h = NULL;
    assert_int_equal(devmalloc_heap_create(NULL, sizes[i], &h), DEVMALLOC_OK);
    assert_int_equal(nalloc_calls, 2);
    assert_int_equal(nallocs, 1);
    assert_int_equal(allocs[0].n, sizes[i] + (2u << 20));
    assert_int_equal(bad_writes, 0);
    assert_int_equal(devmalloc_heap_destroy(h), DEVMALLOC_OK);
    assert_int_equal(nallocs, 0);
  }
}

static void t_each_driver_call_failing(void **st) {
  reset();
  devmalloc_heap_t *h = NULL;
  assert_int_equal(devmalloc_heap_create(NULL, 8u << 20, &h), DEVMALLOC_OK);
  int total = calls;
  assert_true(total > 4);
  assert_int_equal(devmalloc_heap_destroy(h), DEVMALLOC_OK);
  for (int k = 1; k <= total; k++) {
    reset();
    fail_at = k;
    h = NULL;
    devmalloc_status_t s = devmalloc_heap_create(NULL, 8u << 20, &h);
    if (s == DEVMALLOC_OK) fail_msg("driver call %d of %d failed, heap created anyway", k, total);
    assert_null(h);
    assert_int_equal(nallocs, 0); /* device memory given back */
    assert_int_equal(bad_writes, 0);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(t_each_driver_call_failing),
      cmocka_unit_test(t_refused_before_allocating),
      cmocka_unit_test(t_aligned_retry_writes_inside),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
