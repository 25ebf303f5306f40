/*
 * pool_app.cu — a program that uses cudaMalloc/cudaFree heavily, for the GPU
 * case 70_pool_preload: run as is and under the shim with the host pool on,
 * it must print the same "result" line and exit 0.
 *
 * Phases: (1) 3000 random allocations 1 B .. 64 MiB with up to 48 live, each
 * filled by a kernel and verified by another before it is freed; (2) pitched
 * 2D allocations written and read back; (3) a kernel still reading a buffer
 * on a non-blocking stream when the host frees it and reuses the memory
 * (cudaFree synchronizes: the kernel's sum must be unaffected); (4) four host
 * threads allocating, computing and freeing at once; (5) cudaMemGetInfo
 * moves by about what is allocated. "pooled" counts pointers that are not
 * the start of their driver allocation (cuMemGetAddressRange): > 0 only when
 * a pool hands out pieces of larger chunks (informational, not in "result").
 */
#include <cuda.h>
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "cuda_ck.h" /* CK */

__global__ void fill(uint32_t *p, size_t n, uint32_t seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    p[i] = (uint32_t)(i * 2654435761u) ^ seed;
}
__global__ void verify(const uint32_t *p, size_t n, uint32_t seed, unsigned long long *bad,
                       unsigned long long *sum) {
  unsigned long long s = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    uint32_t v = p[i];
    if (v != ((uint32_t)(i * 2654435761u) ^ seed)) atomicAdd(bad, 1ull);
    s += v;
  }
  atomicAdd(sum, s);
}
/* Slow reader: sums the buffer many times. */
__global__ void slow_sum(const uint32_t *p, size_t n, int rounds, unsigned long long *sum) {
  unsigned long long s = 0;
  for (int r = 0; r < rounds; r++)
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
      s += ((volatile const uint32_t *)p)[i];
  atomicAdd(sum, s);
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next_rand(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}
static int pooled;

static void note_range(void *p) {
  CUdeviceptr base = 0;
  size_t sz = 0;
  if (cuMemGetAddressRange(&base, &sz, (CUdeviceptr)(uintptr_t)p) == CUDA_SUCCESS &&
      base != (CUdeviceptr)(uintptr_t)p)
    pooled++;
}

typedef struct {
  void *p;
  size_t bytes;
  uint32_t seed;
} buf_t;

static unsigned long long check_buf(buf_t *b, unsigned long long *dev, cudaStream_t s) {
  size_t n = b->bytes / 4;
  CK(cudaMemsetAsync(dev, 0, 16, s));
  if (n) verify<<<64, 256, 0, s>>>((uint32_t *)b->p, n, b->seed, dev, dev + 1);
  unsigned long long h[2];
  CK(cudaMemcpyAsync(h, dev, 16, cudaMemcpyDeviceToHost, s));
  CK(cudaStreamSynchronize(s));
  if (h[0]) {
    fprintf(stderr, "corrupted buffer: %llu bad words\n", h[0]);
    exit(1);
  }
  return h[1];
}

static unsigned long long phase_random(void) {
  enum { LIVE = 48, STEPS = 3000 };
  buf_t live[LIVE] = {};
  unsigned long long *dev, acc = 0;
  CK(cudaMalloc(&dev, 16));
  for (int step = 0; step < STEPS; step++) {
    int i = (int)(next_rand() % LIVE);
    if (live[i].p) {
      acc = acc * 31 + check_buf(&live[i], dev, 0);
      CK(cudaFree(live[i].p));
      live[i].p = NULL;
    } else {
      int k = (int)(next_rand() % 27); /* 1 B .. 64 MiB */
      size_t bytes = 1 + (next_rand() & ((1ull << k) - 1));
      live[i].bytes = bytes;
      live[i].seed = (uint32_t)next_rand();
      CK(cudaMalloc(&live[i].p, bytes));
      if ((uintptr_t)live[i].p % 256) {
        fprintf(stderr, "misaligned pointer\n");
        exit(1);
      }
      note_range(live[i].p);
      if (bytes / 4) fill<<<64, 256>>>((uint32_t *)live[i].p, bytes / 4, live[i].seed);
      CK(cudaGetLastError());
    }
  }
  for (int i = 0; i < LIVE; i++)
    if (live[i].p) {
      acc = acc * 31 + check_buf(&live[i], dev, 0);
      CK(cudaFree(live[i].p));
    }
  CK(cudaFree(dev));
  return acc;
}

static unsigned long long phase_pitch(void) {
  unsigned long long acc = 0;
  for (int t = 0; t < 20; t++) {
    size_t w = 1 + next_rand() % 5000, h = 1 + next_rand() % 300, pitch = 0;
    void *d;
    CK(cudaMallocPitch(&d, &pitch, w, h));
    if (pitch < w) {
      fprintf(stderr, "pitch %zu < width %zu\n", pitch, w);
      exit(1);
    }
    unsigned char *src = (unsigned char *)malloc(w * h), *dst = (unsigned char *)malloc(w * h);
    for (size_t i = 0; i < w * h; i++) src[i] = (unsigned char)(i * 7 + t);
    CK(cudaMemcpy2D(d, pitch, src, w, w, h, cudaMemcpyHostToDevice));
    CK(cudaMemcpy2D(dst, w, d, pitch, w, h, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < w * h; i++) {
      if (src[i] != dst[i]) {
        fprintf(stderr, "pitched copy differs\n");
        exit(1);
      }
      acc += dst[i];
    }
    free(src);
    free(dst);
    CK(cudaFree(d));
  }
  return acc;
}

static unsigned long long phase_free_while_running(void) {
  const size_t n = 64u << 20 >> 2; /* 64 MiB */
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  uint32_t *a;
  unsigned long long *sum, h = 0;
  CK(cudaMalloc(&sum, 8));
  CK(cudaMemset(sum, 0, 8));
  CK(cudaMalloc(&a, n * 4));
  fill<<<256, 256>>>(a, n, 7);
  CK(cudaDeviceSynchronize());
  slow_sum<<<128, 256, 0, s>>>(a, n, 20, sum);
  CK(cudaFree(a)); /* must wait for slow_sum */
  uint32_t *b;
  CK(cudaMalloc(&b, n * 4)); /* may get a's memory back */
  CK(cudaMemset(b, 0xff, n * 4));
  CK(cudaStreamSynchronize(s));
  CK(cudaMemcpy(&h, sum, 8, cudaMemcpyDeviceToHost));
  CK(cudaFree(b));
  CK(cudaFree(sum));
  CK(cudaStreamDestroy(s));
  return h;
}

static void *thread_main(void *arg) {
  uint64_t seed = (uintptr_t)arg * 977 + 1;
  unsigned long long *dev, acc = 0;
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CK(cudaMalloc(&dev, 16));
  for (int i = 0; i < 400; i++) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    buf_t b = {NULL, 1 + (size_t)((seed >> 33) % (4u << 20)), (uint32_t)(seed >> 7)};
    CK(cudaMalloc(&b.p, b.bytes));
    if (b.bytes / 4) fill<<<32, 256, 0, s>>>((uint32_t *)b.p, b.bytes / 4, b.seed);
    acc = acc * 31 + check_buf(&b, dev, s);
    CK(cudaFree(b.p));
  }
  CK(cudaFree(dev));
  CK(cudaStreamDestroy(s));
  return (void *)(uintptr_t)acc;
}

static unsigned long long phase_threads(void) {
  pthread_t th[4];
  unsigned long long acc = 0;
  for (long i = 0; i < 4; i++) pthread_create(&th[i], NULL, thread_main, (void *)i);
  for (int i = 0; i < 4; i++) {
    void *r;
    pthread_join(th[i], &r);
    acc = acc * 131 + (uintptr_t)r;
  }
  return acc;
}

static int phase_mem_info(void) {
  size_t f0, t0, f1, t1;
  const size_t x = 256u << 20;
  void *p;
  CK(cudaMemGetInfo(&f0, &t0));
  CK(cudaMalloc(&p, x));
  CK(cudaMemGetInfo(&f1, &t1));
  CK(cudaFree(p));
  long long drop = (long long)f0 - (long long)f1;
  printf("meminfo: free %zu -> %zu of %zu (drop %lld for %zu)\n", f0, f1, t0, drop, x);
  return t0 == t1 && f0 <= t0 && drop >= (long long)x - (4 << 20) && drop <= (long long)x + (64 << 20);
}

int main(void) {
  CK(cudaFree(0));
  unsigned long long r1 = phase_random();
  unsigned long long r2 = phase_pitch();
  unsigned long long r3 = phase_free_while_running();
  unsigned long long expect3 = 0;
  for (size_t i = 0; i < (64u << 20 >> 2); i++) expect3 += (uint32_t)(i * 2654435761u) ^ 7u;
  expect3 *= 20;
  unsigned long long r4 = phase_threads();
  int info_ok = phase_mem_info();
  printf("result random=%016llx pitch=%llu reuse=%s threads=%016llx meminfo=%s\n", r1, r2,
         r3 == expect3 ? "ok" : "WRONG", r4, info_ok ? "ok" : "WRONG");
  printf("pooled %d\n", pooled);
  return r3 == expect3 && info_ok ? 0 : 1;
}
