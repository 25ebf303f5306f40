// shim_driver_kernels.cu — kernels for the Driver API route, device-linked
// with devmalloc into a cubin (mk/interpose.mk) and loaded by shim_driver.
extern "C" __global__ void alloc_check(unsigned n, unsigned size, unsigned salt,
                                       unsigned long long *counts) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned *p = (unsigned *)malloc(size);
  if (!p) { atomicAdd(&counts[1], 1ull); return; }
  unsigned words = size / sizeof(unsigned);
  for (unsigned w = 0; w < words; w++) p[w] = i * 2654435761u + w + salt;
  int bad = 0;
  for (unsigned w = 0; w < words; w++) bad |= p[w] != i * 2654435761u + w + salt;
  free(p);
  atomicAdd(&counts[bad ? 2 : 0], 1ull);
}
