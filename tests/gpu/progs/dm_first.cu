/*
 * dm_first.cu — a fresh process's first kernels on a fresh heap, as a new
 * user's program meets them: every kernel's NULLs are counted, the first
 * one's included.
 *
 *   dm_first HEAP_BYTES SIZE THREADS KIND [grow]
 *     KIND pair: each thread mallocs SIZE, writes its first and last byte,
 *                frees it (3 kernels);
 *          all:  each thread mallocs SIZE and keeps it, one kernel; a
 *                second kernel frees them all (3 rounds);
 *          fill: as `all`, one round (THREADS x SIZE near a fill level).
 *     grow: a heap that grows (relinked: devmalloc_cuda_init_growing with
 *           HEAP_BYTES as its maximum; plain: the shim's DEVMALLOC_GROW=1).
 *
 * Relinked build: the heap from devmalloc_cuda_init(_growing). -DPLAIN: a
 * plain program (no devmalloc calls) that sets cudaLimitMallocHeapSize, for
 * the shim and for stock.
 * Prints "nulls first=N later=M rounds=R ms_first=T" and exits 0 when every
 * kernel's requests were served (1: a CUDA error or a bad byte, 2: NULLs).
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <chrono>
#ifndef PLAIN
#include "devmalloc_cuda.h"
#else
#include <cuda_runtime.h>
#endif

#include "pass_fail.h" /* CK */

__device__ unsigned long long d_nulls, d_bad;

__device__ static void touch(char *p, size_t size, unsigned tag) {
  p[0] = (char)tag;
  p[size - 1] = (char)(tag >> 8);
}
__device__ static int intact(const char *p, size_t size, unsigned tag) {
  return p[0] == (char)tag && p[size - 1] == (char)(tag >> 8);
}

__global__ void k_pair(size_t n, size_t size) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i >= n) return;
  char *p = (char *)malloc(size);
  if (!p) {
    atomicAdd(&d_nulls, 1ull);
    return;
  }
  touch(p, size, (unsigned)i);
  if (!intact(p, size, (unsigned)i)) atomicAdd(&d_bad, 1ull);
  free(p);
}

__global__ void k_alloc(char **ptrs, size_t n, size_t size) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i >= n) return;
  char *p = (char *)malloc(size);
  ptrs[i] = p;
  if (!p) {
    atomicAdd(&d_nulls, 1ull);
    return;
  }
  touch(p, size, (unsigned)i);
}

__global__ void k_free(char **ptrs, size_t n, size_t size) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i >= n || !ptrs[i]) return;
  if (!intact(ptrs[i], size, (unsigned)i)) atomicAdd(&d_bad, 1ull);
  free(ptrs[i]);
}

static unsigned long long take(unsigned long long *bad) {
  unsigned long long n = 0, b = 0, z = 0;
  CK(cudaMemcpyFromSymbol(&n, d_nulls, sizeof n));
  CK(cudaMemcpyFromSymbol(&b, d_bad, sizeof b));
  CK(cudaMemcpyToSymbol(d_nulls, &z, sizeof z));
  CK(cudaMemcpyToSymbol(d_bad, &z, sizeof z));
  *bad += b;
  return n;
}

int main(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: %s HEAP_BYTES SIZE THREADS pair|all|fill [grow]\n", argv[0]);
    return 1;
  }
  size_t heap = strtoull(argv[1], 0, 0), size = strtoull(argv[2], 0, 0), n = strtoull(argv[3], 0, 0);
  const char *kind = argv[4];
  int grow = argc > 5 && !strcmp(argv[5], "grow");
#ifndef PLAIN
  if (grow) {
    devmalloc_grow_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.max = heap;
    CK(devmalloc_cuda_init_growing(&cfg));
  } else {
    CK(devmalloc_cuda_init(heap));
  }
#else
  (void)grow;
  CK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, heap));
#endif
  unsigned blocks = (unsigned)((n + 255) / 256);
  char **ptrs = 0;
  if (strcmp(kind, "pair")) CK(cudaMalloc(&ptrs, n * sizeof(char *)));
  int rounds = !strcmp(kind, "fill") ? 1 : 3;
  unsigned long long first = 0, later = 0, bad = 0;
  double ms_first = 0;
  for (int r = 0; r < rounds; r++) {
    auto t0 = std::chrono::steady_clock::now();
    if (!strcmp(kind, "pair")) {
      k_pair<<<blocks, 256>>>(n, size);
    } else {
      k_alloc<<<blocks, 256>>>(ptrs, n, size);
    }
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    if (r == 0)
      ms_first = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    unsigned long long nulls = take(&bad);
    if (ptrs) {
      k_free<<<blocks, 256>>>(ptrs, n, size);
      CK(cudaGetLastError());
      CK(cudaDeviceSynchronize());
      take(&bad);
    }
    (r == 0 ? first : later) += nulls;
  }
  printf("nulls first=%llu later=%llu rounds=%d bad=%llu ms_first=%.2f\n", first, later, rounds, bad,
         ms_first);
  if (bad) return 1;
  return first || later ? 2 : 0;
}
