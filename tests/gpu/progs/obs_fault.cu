// obs_fault.cu — keeps 1024 blocks of 64 bytes from device malloc, synchronizes,
// then faults on purpose (a store to an invalid address: cudaErrorIllegalAddress)
// and exits. Run under the shim with DEVMALLOC_STATS: the summary must report
// the context as lost with the last known counters (1024 allocations).
// Exit status: 0 when the fault was seen as expected, 1 otherwise.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void keep(void **slots) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  slots[i] = malloc(64);
}

__global__ void crash(int *p) { *(volatile int *)p = 1; }

int main() {
  void **slots;
  if (cudaMalloc(&slots, 1024 * sizeof(void *)) != cudaSuccess) return 1;
  keep<<<4, 256>>>(slots);
  if (cudaStreamSynchronize(0) != cudaSuccess) return 1;
  crash<<<1, 1>>>((int *)8);
  cudaError_t e = cudaStreamSynchronize(0);
  printf("after the fault: %s\n", cudaGetErrorString(e));
  return e == cudaErrorIllegalAddress ? 0 : 1;
}
