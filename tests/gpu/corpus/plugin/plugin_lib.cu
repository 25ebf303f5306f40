// plugin_lib.cu — libcorpus_plugin.so: its own kernels, its own device malloc.
#include <cstdio>
#include <cuda_runtime.h>
#include "plugin.h"

__global__ void plugin_kernel(const int *values, int n, unsigned long long *out, int *nulls) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int v = values[i], len = v % 64 + 1;
  int *buf = (int *)malloc(len * sizeof(int));
  if (!buf) {
    atomicAdd(nulls, 1);
    return;
  }
  for (int k = 0; k < len; k++) buf[k] = v + k;
  unsigned long long s = 0;
  for (int k = 0; k < len; k++) s += (unsigned long long)buf[k] * (k + 1);
  free(buf);
  atomicAdd(&out[0], s);
  atomicAdd(&out[1], (unsigned long long)len);
}

PLUGIN_API int plugin_histogram(const int *d_values, int n, unsigned long long *h_result) {
  unsigned long long *out;
  int *nulls, hn = 0;
  if (cudaMalloc(&out, 2 * sizeof *out) != cudaSuccess || cudaMalloc(&nulls, sizeof *nulls) != cudaSuccess)
    return 1;
  cudaMemset(out, 0, 2 * sizeof *out);
  cudaMemset(nulls, 0, sizeof *nulls);
  plugin_kernel<<<(n + 255) / 256, 256>>>(d_values, n, out, nulls);
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) e = cudaMemcpy(h_result, out, 2 * sizeof *out, cudaMemcpyDeviceToHost);
  if (e == cudaSuccess) e = cudaMemcpy(&hn, nulls, sizeof hn, cudaMemcpyDeviceToHost);
  cudaFree(out);
  cudaFree(nulls);
  if (e != cudaSuccess) {
    fprintf(stderr, "plugin library: %s\n", cudaGetErrorString(e));
    return 2;
  }
  return hn ? 3 : 0;
}
