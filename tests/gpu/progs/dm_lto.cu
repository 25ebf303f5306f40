/* dm_lto.cu — linked with nvcc -dlto against libdevmalloc_device_lto.a:
 * allocations must come from devmalloc (its counters move). */
#include <cstdio>
#include "devmalloc_cuda.h"
__global__ void k(int *ok) {
  int *p = (int *)malloc(1024);
  if (p) {
    p[255] = 1;
    atomicAdd(ok, p[255]);
    free(p);
  }
}
int main() {
  if (devmalloc_cuda_init(64u << 20) != cudaSuccess) {
    printf("init failed\n");
    return 1;
  }
  int *ok;
  cudaMallocManaged(&ok, sizeof *ok);
  *ok = 0;
  k<<<256, 256>>>(ok);
  cudaError_t e = cudaDeviceSynchronize();
  devmalloc_stats_t s;
  devmalloc_heap_stats(devmalloc_cuda_heap(), &s);
  printf("lto: kernel %s, %d of 65536 ok, devmalloc allocations %llu\n", cudaGetErrorString(e), *ok,
         (unsigned long long)s.allocs);
  return (e == cudaSuccess && *ok == 65536 && s.allocs == 65536) ? 0 : 1;
}
