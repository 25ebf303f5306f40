/*
 * test_growth_fake.c — the host runtime's heaps that grow (host/heap/
 * growth.c) end to end against a fake driver that backs "device" memory
 * with host memory: cuMemAddressReserve = mmap(PROT_NONE), cuMemMap =
 * mprotect(RW) filled with garbage, cuMemUnmap = PROT_NONE again; host-mapped
 * memory is ordinary memory whose "device pointer" is itself. So the heap
 * the runtime formats is used for real by allocator threads running the
 * core (dm_malloc on the descriptor's address), the runtime's service
 * thread maps what they ask for, devmalloc_heap_trim unmaps, and any access
 * to memory that is not mapped crashes the test.
 *
 * Cases: growth under load with stats (mapped bytes, events, peak, waits),
 * verify and trim (mapped bytes drop, the heap grows again); the device
 * full (cuMemCreate refused: NULL, bounded); no VMM (a fixed heap and a
 * notice), and under compute-sanitizer (the same); every driver call of a creation failing in turn (clean failure:
 * nothing mapped, reserved or allocated is left).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <pthread.h>
#include <sys/mman.h>
#include <cuda.h>
#include "devmalloc.h"
#include "dm_internal.h"

/* ---- fake driver ------------------------------------------------------ */
static int vmm_supported = 1;
static uint64_t phys_limit; /* 0: unlimited */
static uint64_t phys_used, reserved, hostallocs, nhandles, devallocs;
static int calls, fail_at;
#define FAULT()                                                                                \
  do {                                                                                         \
    if (__atomic_add_fetch(&calls, 1, __ATOMIC_SEQ_CST) == fail_at) return CUDA_ERROR_UNKNOWN; \
  } while (0)
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
typedef struct {
  void *raw;
  size_t raw_bytes;
  CUdeviceptr va;
  size_t bytes;
} resv_t;
static resv_t resvs[8];
static uint64_t handle_size[1 << 16];

CUresult cuMemAddressReserve(CUdeviceptr *p, size_t size, size_t align, CUdeviceptr addr,
                             unsigned long long f) {
  FAULT();
  size_t raw_bytes = size + align;
  void *raw = mmap(NULL, raw_bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (raw == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
  pthread_mutex_lock(&mu);
  int i = 0;
  while (resvs[i].raw) i++;
  resvs[i] = (resv_t){raw, raw_bytes, ((uintptr_t)raw + align - 1) & ~(uintptr_t)(align - 1), size};
  *p = resvs[i].va;
  reserved++;
  pthread_mutex_unlock(&mu);
  return CUDA_SUCCESS;
}
CUresult cuMemAddressFree(CUdeviceptr p, size_t size) {
  pthread_mutex_lock(&mu);
  for (int i = 0; i < 8; i++)
    if (resvs[i].raw && resvs[i].va == p) {
      munmap(resvs[i].raw, resvs[i].raw_bytes);
      resvs[i].raw = NULL;
      reserved--;
    }
  pthread_mutex_unlock(&mu);
  return CUDA_SUCCESS;
}
CUresult cuMemCreate(CUmemGenericAllocationHandle *h, size_t size, const CUmemAllocationProp *p,
                     unsigned long long f) {
  FAULT();
  pthread_mutex_lock(&mu);
  if (phys_limit && phys_used + size > phys_limit) {
    pthread_mutex_unlock(&mu);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  phys_used += size;
  uint64_t id = 1;
  while (handle_size[id]) id++;
  handle_size[id] = size;
  nhandles++;
  *h = id;
  pthread_mutex_unlock(&mu);
  return CUDA_SUCCESS;
}
CUresult cuMemRelease(CUmemGenericAllocationHandle h) {
  pthread_mutex_lock(&mu);
  phys_used -= handle_size[h];
  handle_size[h] = 0;
  nhandles--;
  pthread_mutex_unlock(&mu);
  return CUDA_SUCCESS;
}
CUresult cuMemMap(CUdeviceptr p, size_t size, size_t off, CUmemGenericAllocationHandle h,
                  unsigned long long f) {
  FAULT();
  if (mprotect((void *)p, size, PROT_READ | PROT_WRITE)) return CUDA_ERROR_INVALID_VALUE;
  memset((void *)p, 0xA5, size);
  return CUDA_SUCCESS;
}
CUresult cuMemUnmap(CUdeviceptr p, size_t size) {
  madvise((void *)p, size, MADV_DONTNEED);
  mprotect((void *)p, size, PROT_NONE);
  return CUDA_SUCCESS;
}
CUresult cuMemSetAccess(CUdeviceptr p, size_t size, const CUmemAccessDesc *d, size_t n) {
  FAULT();
  return CUDA_SUCCESS;
}
CUresult cuMemGetInfo(size_t *fr, size_t *tot) {
  *fr = (size_t)1 << 40; /* the limit is cuMemCreate's (phys_limit) */
  *tot = (size_t)1 << 40;
  return CUDA_SUCCESS;
}
CUresult cuMemGetAllocationGranularity(size_t *g, const CUmemAllocationProp *p,
                                       CUmemAllocationGranularity_flags o) {
  *g = 2u << 20;
  return CUDA_SUCCESS;
}
CUresult cuMemHostRegister(void *p, size_t n, unsigned int flags) {
  FAULT();
  __atomic_add_fetch(&hostallocs, 1, __ATOMIC_SEQ_CST);
  return CUDA_SUCCESS;
}
CUresult cuMemHostUnregister(void *p) {
  __atomic_sub_fetch(&hostallocs, 1, __ATOMIC_SEQ_CST);
  return CUDA_SUCCESS;
}
CUresult cuMemHostGetDevicePointer(CUdeviceptr *d, void *p, unsigned int f) {
  FAULT();
  *d = (CUdeviceptr)(uintptr_t)p;
  return CUDA_SUCCESS;
}

CUresult cuMemAlloc(CUdeviceptr *p, size_t n) {
  FAULT();
  void *m = aligned_alloc(2u << 20, (n + (2u << 20) - 1) / (2u << 20) * (2u << 20));
  if (!m) return CUDA_ERROR_OUT_OF_MEMORY;
  *p = (CUdeviceptr)(uintptr_t)m;
  devallocs++;
  return CUDA_SUCCESS;
}
CUresult cuMemFree(CUdeviceptr p) {
  free((void *)(uintptr_t)p);
  devallocs--;
  return CUDA_SUCCESS;
}
CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream s) {
  FAULT();
  memset((void *)(uintptr_t)d, v, n);
  return CUDA_SUCCESS;
}
CUresult cuMemsetD32Async(CUdeviceptr d, unsigned int v, size_t n, CUstream s) {
  FAULT();
  uint32_t *q = (uint32_t *)(uintptr_t)d;
  for (size_t i = 0; i < n; i++) q[i] = v;
  return CUDA_SUCCESS;
}
CUresult cuMemcpyHtoDAsync(CUdeviceptr d, const void *src, size_t n, CUstream s) {
  FAULT();
  memcpy((void *)(uintptr_t)d, src, n);
  return CUDA_SUCCESS;
}
CUresult cuMemcpyDtoHAsync(void *dst, CUdeviceptr s, size_t n, CUstream st) {
  memcpy(dst, (const void *)(uintptr_t)s, n);
  return CUDA_SUCCESS;
}
CUresult cuMemcpyDtoH(void *dst, CUdeviceptr s, size_t n) { return cuMemcpyDtoHAsync(dst, s, n, 0); }
#include "fake_ctx.h" /* the context and stream stubs */
CUresult cuCtxSetCurrent(CUcontext c) { return CUDA_SUCCESS; }
CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *m) { return CUDA_SUCCESS; }
CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d) {
  *v = a == CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED ? vmm_supported : 4;
  return CUDA_SUCCESS;
}
CUresult cuDeviceTotalMem(size_t *b, CUdevice d) {
  *b = 1ull << 30;
  return CUDA_SUCCESS;
}
/* The trim kernel: "device" memory is host memory, so the fake runs the
 * kernel's body (dm_grow_trim) right here, on the heap, in this thread. */
static int kernel_launches;
CUresult cuModuleLoadData(CUmodule *m, const void *image) {
  FAULT();
  *m = (CUmodule)0x30;
  return CUDA_SUCCESS;
}
CUresult cuModuleUnload(CUmodule m) { return CUDA_SUCCESS; }
CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name) {
  if (strcmp(name, "devmalloc_trim_kernel")) return CUDA_ERROR_NOT_FOUND;
  *f = (CUfunction)0x40;
  return CUDA_SUCCESS;
}
CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned shm, CUstream s, void **params, void **extra) {
  FAULT();
  if (f != (CUfunction)0x40) return CUDA_ERROR_INVALID_HANDLE;
  dm_heap_t *h = (dm_heap_t *)(uintptr_t) * (CUdeviceptr *)params[0];
  uint64_t fl = *(unsigned long long *)params[1], un = *(unsigned long long *)params[2];
  uint64_t *out = (uint64_t *)(uintptr_t) * (CUdeviceptr *)params[3];
  *out = dm_grow_trim(h, fl, un);
  kernel_launches++;
  return CUDA_SUCCESS;
}
CUresult cuModuleGetGlobal(CUdeviceptr *d, size_t *n, CUmodule m, const char *name) {
  return CUDA_ERROR_NOT_FOUND;
}
CUresult cuLibraryGetGlobal(CUdeviceptr *d, size_t *n, CUlibrary l, const char *name) {
  return CUDA_ERROR_NOT_FOUND;
}

static void reset(void) {
  calls = fail_at = 0;
  phys_limit = 0;
  vmm_supported = 1;
}

/* ---- allocator threads on the "device" heap --------------------------- */
typedef struct {
  dm_heap_t *h;
  uint64_t goal, got, nulls, bad;
  pthread_barrier_t *hold;
} worker_t;

static void *worker(void *arg) {
  worker_t *w = arg;
  static const uint64_t sizes[] = {16, 96, 2048, 8192, 40000, 1u << 20};
  size_t cap = 1 << 15, n = 0;
  char **p = malloc(cap * sizeof *p);
  uint64_t live = 0;
  for (uint32_t i = 0; live < w->goal && n < cap; i++) {
    uint64_t s = sizes[i % 6];
    char *q = dm_malloc(w->h, s, 16);
    if (!q) {
      w->nulls++;
      break;
    }
    q[0] = q[s - 1] = 0x5a;
    p[n++] = q;
    live += s;
    w->got++;
  }
  pthread_barrier_wait(w->hold);
  for (size_t i = 0; i < n; i++)
    if (dm_free(w->h, p[i]) != DM_FREE_OK) w->bad++;
  free(p);
  return NULL;
}

static void run(dm_heap_t *h, int nt, uint64_t goal, worker_t *w) {
  pthread_t t[8];
  pthread_barrier_t b;
  pthread_barrier_init(&b, NULL, (unsigned)nt);
  for (int i = 0; i < nt; i++) {
    w[i] = (worker_t){h, goal, 0, 0, 0, &b};
    pthread_create(&t[i], NULL, worker, &w[i]);
  }
  for (int i = 0; i < nt; i++) pthread_join(t[i], NULL);
  pthread_barrier_destroy(&b);
}

static void t_grow_stats_trim(void **st) {
  reset();
  devmalloc_grow_config_t c = {8u << 20, 256u << 20, 4u << 20, 0, 2000, 20, 0};
  devmalloc_heap_t *hp = NULL;
  const char *notice = "x";
  assert_int_equal(devmalloc_heap_create_growing(NULL, &c, &hp, &notice), DEVMALLOC_OK);
  assert_null(notice);
  assert_true(devmalloc_heap_grows(hp));
  devmalloc_stats_t s;
  assert_int_equal(devmalloc_heap_stats(hp, &s), DEVMALLOC_OK);
  uint64_t meta = s.mapped_bytes - (8u << 20);
  assert_int_equal(s.max_bytes, 256u << 20);
  assert_int_equal(s.growth_events, 0);
  dm_heap_t *h = (dm_heap_t *)(uintptr_t)devmalloc_heap_device_ptr(hp);
  worker_t w[4];
  run(h, 4, 40u << 20, w);
  for (int i = 0; i < 4; i++) assert_int_equal(w[i].nulls + w[i].bad, 0);
  assert_int_equal(devmalloc_heap_stats(hp, &s), DEVMALLOC_OK);
  printf("  mapped %llu MiB (peak %llu MiB, metadata %llu KiB), %llu growth events, %llu waits\n",
         (unsigned long long)(s.mapped_bytes >> 20), (unsigned long long)(s.mapped_peak >> 20),
         (unsigned long long)(meta >> 10), (unsigned long long)s.growth_events,
         (unsigned long long)s.grow_waits);
  assert_true(s.growth_events > 0);
  assert_true(s.mapped_peak >= (160u << 20) + meta);
  assert_int_equal(s.grow_timeouts, 0);
  int whole = 0;
  char why[160] = "";
  assert_int_equal(devmalloc_heap_verify(hp, &whole, why, sizeof why), DEVMALLOC_OK);
  assert_true(whole);
  size_t unmapped = 0;
  assert_int_equal(devmalloc_heap_trim(hp, 0, &unmapped), DEVMALLOC_OK);
  assert_int_equal(devmalloc_heap_stats(hp, &s), DEVMALLOC_OK);
  printf("  trim unmapped %zu MiB; mapped now %llu MiB\n", unmapped >> 20,
         (unsigned long long)(s.mapped_bytes >> 20));
  assert_true(unmapped >= 150u << 20);
  assert_true(kernel_launches > 0);
  assert_int_equal(s.mapped_bytes, (8u << 20) + meta);
  assert_int_equal(s.trims, 1);
  assert_int_equal(devmalloc_heap_verify(hp, &whole, why, sizeof why), DEVMALLOC_OK);
  assert_true(whole);
  run(h, 2, 30u << 20, w); /* grows again */
  for (int i = 0; i < 2; i++) assert_int_equal(w[i].nulls + w[i].bad, 0);
  assert_int_equal(devmalloc_heap_verify(hp, &whole, why, sizeof why), DEVMALLOC_OK);
  assert_int_equal(devmalloc_heap_destroy(hp), DEVMALLOC_OK);
  assert_int_equal(phys_used, 0);
  assert_int_equal(nhandles, 0);
  assert_int_equal(reserved, 0);
  assert_int_equal(hostallocs, 0);
}

/* Two heaps ("contexts"), two threads churning on each, trims of both
 * racing them: the trim kernel runs beside allocations (here: in this
 * thread, on the same memory), and memory is unmapped under no live block. */
typedef struct {
  dm_heap_t *h;
  int seed, *stop;
  uint64_t got, bad;
} churn_t;

static void *churner(void *arg) {
  churn_t *c = arg;
  static const uint64_t sizes[] = {16, 200, 4096, 20000, 150000, 1u << 20};
  char *p[512];
  uint64_t sz[512];
  int n = 0;
  uint32_t r = (uint32_t)c->seed * 2654435761u + 1;
  while (!__atomic_load_n(c->stop, __ATOMIC_SEQ_CST)) {
    r ^= r << 13;
    r ^= r >> 17;
    r ^= r << 5;
    if (n < 512 && (n == 0 || (r & 3) != 0)) {
      uint64_t s = sizes[(r >> 8) % 6];
      char *q = dm_malloc(c->h, s, 16);
      if (!q) continue;
      q[0] = q[s - 1] = (char)(c->seed + n);
      p[n] = q;
      sz[n++] = s;
      c->got++;
    } else {
      int i = (int)((r >> 4) % (uint32_t)n);
      if (p[i][0] != (char)(c->seed + i) || p[i][sz[i] - 1] != (char)(c->seed + i)) c->bad++;
      if (dm_free(c->h, p[i]) != DM_FREE_OK) c->bad++;
      p[i] = p[--n];
      sz[i] = sz[n];
      if (i < n) p[i][0] = p[i][sz[i] - 1] = (char)(c->seed + i);
    }
  }
  for (int i = 0; i < n; i++)
    if (dm_free(c->h, p[i]) != DM_FREE_OK) c->bad++;
  return NULL;
}

static void t_trim_beside_kernels(void **st) {
  reset();
  devmalloc_grow_config_t c = {8u << 20, 256u << 20, 4u << 20, 0, 2000, 20, 0};
  devmalloc_heap_t *hp[2];
  for (int i = 0; i < 2; i++)
    assert_int_equal(devmalloc_heap_create_growing(NULL, &c, &hp[i], NULL), DEVMALLOC_OK);
  int stop = 0;
  churn_t w[4];
  pthread_t t[4];
  for (int i = 0; i < 4; i++) {
    w[i] = (churn_t){(dm_heap_t *)(uintptr_t)devmalloc_heap_device_ptr(hp[i / 2]), i + 3, &stop, 0, 0};
    pthread_create(&t[i], NULL, churner, &w[i]);
  }
  int launches0 = kernel_launches;
  size_t freed = 0;
  for (int k = 0; k < 300; k++) {
    size_t un = 0;
    if (k % 3 == 2)
      assert_int_equal(devmalloc_heap_trim_start(hp[k & 1], 0), DEVMALLOC_OK); /* the shim's way */
    else
      assert_int_equal(devmalloc_heap_trim(hp[k & 1], 0, &un), DEVMALLOC_OK);
    freed += un;
    struct timespec ts = {0, 2000000};
    nanosleep(&ts, NULL);
  }
  __atomic_store_n(&stop, 1, __ATOMIC_SEQ_CST);
  for (int i = 0; i < 4; i++) {
    pthread_join(t[i], NULL);
    assert_int_equal(w[i].bad, 0);
  }
  printf("  %llu+%llu+%llu+%llu allocations; %d trim kernels unmapped %zu MiB\n",
         (unsigned long long)w[0].got, (unsigned long long)w[1].got, (unsigned long long)w[2].got,
         (unsigned long long)w[3].got, kernel_launches - launches0, freed >> 20);
  assert_true(kernel_launches - launches0 > 0);
  for (int i = 0; i < 2; i++) {
    int whole = 0;
    char why[160] = "";
    assert_int_equal(devmalloc_heap_verify(hp[i], &whole, why, sizeof why), DEVMALLOC_OK);
    assert_true(whole);
    size_t un = 0;
    assert_int_equal(devmalloc_heap_trim(hp[i], 0, &un), DEVMALLOC_OK);
    devmalloc_stats_t s;
    assert_int_equal(devmalloc_heap_stats(hp[i], &s), DEVMALLOC_OK);
    assert_true(s.mapped_bytes - (s.heap_bytes - s.pool_bytes) <= (8u << 20) + (2u << 20));
    assert_int_equal(devmalloc_heap_destroy(hp[i]), DEVMALLOC_OK);
  }
  assert_int_equal(phys_used, 0);
  assert_int_equal(reserved, 0);
}

/* A maximum that is not a multiple of the step (the last step is partial)
 * and one below the step (the step shrinks to it): the heap fills exactly to
 * its maximum, then trims back to its initial size. */
static void t_partial_top(void **st) {
  static const size_t maxes[] = {10u << 20, 3u << 20};
  for (int m = 0; m < 2; m++) {
    reset();
    devmalloc_grow_config_t c = {2u << 20, maxes[m], 4u << 20, 0, 2000, 20, 0};
    devmalloc_heap_t *hp = NULL;
    assert_int_equal(devmalloc_heap_create_growing(NULL, &c, &hp, NULL), DEVMALLOC_OK);
    devmalloc_stats_t s0, s;
    assert_int_equal(devmalloc_heap_stats(hp, &s0), DEVMALLOC_OK);
    uint64_t meta = s0.heap_bytes - s0.pool_bytes,
             max = (maxes[m] + (2u << 20) - 1) / (2u << 20) * (2u << 20);
    assert_int_equal(s0.max_bytes, max);
    dm_heap_t *h = (dm_heap_t *)(uintptr_t)devmalloc_heap_device_ptr(hp);
    char *p[128];
    int n = 0;
    while (n < 128 && (p[n] = dm_malloc(h, 128u << 10, 16)) != NULL) p[n++][0] = 1;
    if (((uint64_t)n << 17) != max) {
      devmalloc_stats_t d;
      devmalloc_heap_stats(hp, &d);
      printf("  max %llu: %d blocks; mapped %llu, waits %llu, timeouts %llu, events %llu, released %llu\n",
             (unsigned long long)max, n, (unsigned long long)d.mapped_bytes, (unsigned long long)d.grow_waits,
             (unsigned long long)d.grow_timeouts, (unsigned long long)d.growth_events,
             (unsigned long long)dm_grow_released(h));
    }
    assert_int_equal((uint64_t)n << 17, max); /* every byte of the maximum */
    assert_int_equal(devmalloc_heap_stats(hp, &s), DEVMALLOC_OK);
    assert_true(s.mapped_bytes >= max + meta - (2u << 20)); /* metadata rounds to the granule */
    for (int i = 0; i < n; i++) assert_int_equal(dm_free(h, p[i]), DEVMALLOC_OK);
    size_t un = 0;
    assert_int_equal(devmalloc_heap_trim(hp, 0, &un), DEVMALLOC_OK);
    assert_int_equal(devmalloc_heap_stats(hp, &s), DEVMALLOC_OK);
    assert_int_equal(s.mapped_bytes, s0.mapped_bytes); /* back to the initial size */
    int whole = 0;
    assert_int_equal(devmalloc_heap_verify(hp, &whole, NULL, 0), DEVMALLOC_OK);
    assert_true(whole);
    assert_int_equal(devmalloc_heap_destroy(hp), DEVMALLOC_OK);
  }
}

static void t_device_full(void **st) {
  reset();
  devmalloc_grow_config_t c = {8u << 20, 512u << 20, 4u << 20, 0, 5000, 20, 0};
  devmalloc_heap_t *hp = NULL;
  assert_int_equal(devmalloc_heap_create_growing(NULL, &c, &hp, NULL), DEVMALLOC_OK);
  phys_limit = phys_used + (24u << 20);
  dm_heap_t *h = (dm_heap_t *)(uintptr_t)devmalloc_heap_device_ptr(hp);
  worker_t w[2];
  run(h, 2, 1ull << 40, w);
  for (int i = 0; i < 2; i++) assert_int_equal(w[i].nulls, 1);
  devmalloc_stats_t s;
  assert_int_equal(devmalloc_heap_stats(hp, &s), DEVMALLOC_OK);
  assert_true(s.mapped_bytes - (8u << 20) <= phys_limit);
  assert_int_equal(devmalloc_heap_destroy(hp), DEVMALLOC_OK);
  assert_int_equal(phys_used, 0);
}

static void t_no_vmm(void **st) {
  reset();
  vmm_supported = 0;
  devmalloc_grow_config_t c = {8u << 20, 512u << 20, 0, 0, 0, 0, 32u << 20};
  devmalloc_heap_t *hp = NULL;
  const char *notice = NULL;
  assert_int_equal(devmalloc_heap_create_growing(NULL, &c, &hp, &notice), DEVMALLOC_OK);
  assert_non_null(notice);
  assert_false(devmalloc_heap_grows(hp));
  assert_int_equal(devmalloc_heap_bytes(hp), 32u << 20);
  size_t un = 1;
  assert_int_equal(devmalloc_heap_trim(hp, 0, &un), DEVMALLOC_OK);
  assert_int_equal(un, 0);
  assert_int_equal(devmalloc_heap_destroy(hp), DEVMALLOC_OK);
  assert_int_equal(devallocs, 0);
}

/* Under compute-sanitizer (its tool named in NVTX_INJECTION64_PATH or
 * CUDA_INJECTION64_PATH) a fixed heap and a notice that says why; another
 * injected tool changes nothing. */
static void t_under_sanitizer(void **st) {
  devmalloc_grow_config_t c = {8u << 20, 512u << 20, 0, 0, 0, 0, 32u << 20};
  const char *vars[] = {"NVTX_INJECTION64_PATH", "CUDA_INJECTION64_PATH", "CUDA_INJECTION64_PATH"};
  const char *tools[] = {"libsanitizer-collection.so",
                         "/opt/cuda/compute-sanitizer/libsanitizer-collection.so",
                         "/opt/nsight-compute/target/linux-desktop-glibc_2_11_3-x64/libcuda-injection.so"};
  for (int i = 0; i < 3; i++) {
    reset();
    setenv(vars[i], tools[i], 1);
    devmalloc_heap_t *hp = NULL;
    const char *notice = NULL;
    assert_int_equal(devmalloc_heap_create_growing(NULL, &c, &hp, &notice), DEVMALLOC_OK);
    unsetenv(vars[i]);
    if (i < 2) {
      assert_non_null(notice);
      assert_non_null(strstr(notice, "compute-sanitizer"));
      assert_false(devmalloc_heap_grows(hp));
      assert_int_equal(devmalloc_heap_bytes(hp), 32u << 20);
    } else {
      assert_null(notice);
      assert_true(devmalloc_heap_grows(hp));
    }
    assert_int_equal(devmalloc_heap_destroy(hp), DEVMALLOC_OK);
  }
}

static void t_each_driver_call_failing(void **st) {
  reset();
  devmalloc_grow_config_t c = {8u << 20, 128u << 20, 4u << 20, 0, 100, 50, 0};
  devmalloc_heap_t *hp = NULL;
  assert_int_equal(devmalloc_heap_create_growing(NULL, &c, &hp, NULL), DEVMALLOC_OK);
  int total = calls;
  assert_int_equal(devmalloc_heap_destroy(hp), DEVMALLOC_OK);
  assert_true(total > 8);
  for (int k = 1; k <= total; k++) {
    reset();
    fail_at = k;
    hp = NULL;
    if (devmalloc_heap_create_growing(NULL, &c, &hp, NULL) == DEVMALLOC_OK)
      fail_msg("driver call %d of %d failed, heap created anyway", k, total);
    assert_null(hp);
    assert_int_equal(phys_used, 0);
    assert_int_equal(nhandles, 0);
    assert_int_equal(reserved, 0);
    assert_int_equal(hostallocs, 0);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(t_grow_stats_trim),
      cmocka_unit_test(t_trim_beside_kernels),
      cmocka_unit_test(t_partial_top),
      cmocka_unit_test(t_device_full),
      cmocka_unit_test(t_no_vmm),
      cmocka_unit_test(t_under_sanitizer),
      cmocka_unit_test(t_each_driver_call_failing),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
