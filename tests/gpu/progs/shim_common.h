// shim_common.h — shared by the unchanged shim_* test programs (no devmalloc
// API anywhere: they only use device malloc/free, as any CUDA program does).
// Each thread allocates `size` bytes, writes a pattern, reads it back, frees.
// Exit status: 0 all allocations succeeded and checked; 2 some returned NULL
// (printed as "null=N"); 1 wrong data or a CUDA error.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#include "cuda_ck.h" /* CK */

#include "shim_kernel.cuh"

struct counts_t {
  unsigned long long ok, null, bad;
};

static inline int report(const char *what, counts_t c, unsigned long long expect) {
  printf("%s: ok=%llu null=%llu bad=%llu expect=%llu\n", what, c.ok, c.null, c.bad, expect);
  if (c.bad || c.ok + c.null != expect) return 1;
  return c.null ? 2 : 0;
}

static inline counts_t run_on(cudaStream_t s, unsigned n, unsigned size, unsigned salt) {
  unsigned long long *d;
  counts_t c;
  CK(cudaMalloc(&d, 3 * sizeof(unsigned long long)));
  CK(cudaMemsetAsync(d, 0, 3 * sizeof(unsigned long long), s));
  alloc_check<<<(n + 255) / 256, 256, 0, s>>>(n, size, salt, d);
  CK(cudaGetLastError());
  CK(cudaMemcpyAsync(&c, d, sizeof c, cudaMemcpyDeviceToHost, s));
  CK(cudaStreamSynchronize(s));
  CK(cudaFree(d));
  return c;
}
