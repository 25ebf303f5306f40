/* dm_unbound.cu — relinked with devmalloc, run with no heap bound and no
 * shim: device malloc must return NULL, the call is counted in
 * devmalloc_unbound_calls, and one line is printed. */
#include <cstdio>
extern "C" __device__ unsigned long long devmalloc_unbound_calls;
__global__ void k(int *nulls) {
  void *p = malloc(64);
  if (!p) atomicAdd(nulls, 1);
  free(p);
}
int main() {
  int *nulls;
  cudaMallocManaged(&nulls, sizeof *nulls);
  *nulls = 0;
  k<<<4, 64>>>(nulls);
  cudaError_t e = cudaDeviceSynchronize();
  unsigned long long calls = 0;
  cudaMemcpyFromSymbol(&calls, devmalloc_unbound_calls, sizeof calls);
  printf("unbound: kernel %s, %d NULL of 256, counter %llu\n", cudaGetErrorString(e), *nulls, calls);
  return (e == cudaSuccess && *nulls == 256 && calls == 256) ? 0 : 1;
}
