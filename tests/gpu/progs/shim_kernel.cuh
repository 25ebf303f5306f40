// shim_kernel.cuh — the one kernel of the shim test programs (extern "C" so
// that the Driver API route finds it by name). Each thread allocates `size`
// bytes, writes a pattern, reads it back, frees.
#pragma once
// counts[0] = successful allocations, counts[1] = NULL, counts[2] = bad data
extern "C" __global__ void alloc_check(unsigned n, unsigned size, unsigned salt, unsigned long long *counts) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned *p = (unsigned *)malloc(size);
  if (!p) {
    atomicAdd(&counts[1], 1ull);
    return;
  }
  unsigned words = size / sizeof(unsigned);
  for (unsigned w = 0; w < words; w++) p[w] = i * 2654435761u + w + salt;
  int bad = 0;
  for (unsigned w = 0; w < words; w++) bad |= p[w] != i * 2654435761u + w + salt;
  free(p);
  atomicAdd(&counts[bad ? 2 : 0], 1ull);
}
