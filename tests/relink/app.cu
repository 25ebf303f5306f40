// An ordinary CUDA program that knows nothing of devmalloc: device malloc,
// free, new/delete and the aligned allocator.
#include <cstdio>
__global__ void work(int *out) {
  int *p = (int *)malloc(64 * sizeof(int));
  int *q = new int[4];
  void *a = __nv_aligned_device_malloc(256, 128);
  out[threadIdx.x] = (p != nullptr) + (q != nullptr) + (a != nullptr);
  free(p);
  delete[] q;
  free(a);
}
int main() {
  int *out;
  cudaMallocManaged(&out, 32 * sizeof(int));
  work<<<1, 32>>>(out);
  cudaError_t e = cudaDeviceSynchronize();
  printf("%s %d\n", cudaGetErrorString(e), e == cudaSuccess ? out[0] : -1);
  return e != cudaSuccess;
}
