// text_words.cu — libcr_text: one word per thread, appended a letter at a
// time to a device-malloc'd buffer that grows by 8 bytes whenever full.
#include <cstdio>
#include <cuda_runtime.h>
#include "cmake_rdc.h"

__device__ unsigned long long cr_word_hash(const char *w, int n) {
  unsigned long long h = 1469598103934665603ull;
  for (int i = 0; i < n; i++) {
    h ^= (unsigned char)w[i];
    h *= 1099511628211ull;
  }
  return h;
}

__global__ void cr_text_words(int n, unsigned long long *out, int *fails) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  int len = 1 + t % 37, cap = 8;
  char *w = (char *)malloc(cap);
  if (!w) {
    atomicAdd(fails, 1);
    return;
  }
  for (int i = 0; i < len; i++) {
    if (i == cap) {
      char *g = (char *)malloc(cap + 8);
      if (!g) {
        atomicAdd(fails, 1);
        free(w);
        return;
      }
      memcpy(g, w, cap);
      free(w);
      w = g;
      cap += 8;
    }
    w[i] = (char)('a' + (t * 31 + i * 7) % 26);
  }
  atomicAdd(&out[0], cr_word_hash(w, len) >> 20);
  atomicAdd(&out[1], (unsigned long long)len);
  free(w);
}

CR_API int cr_text_run(int n, unsigned long long out[3]) {
  unsigned long long *d_out;
  int *fails, hf = 0;
  if (cudaMalloc(&d_out, 2 * sizeof *d_out) || cudaMalloc(&fails, sizeof *fails)) return 1;
  cudaMemset(d_out, 0, 2 * sizeof *d_out);
  cudaMemset(fails, 0, sizeof *fails);
  cr_text_words<<<(n + 255) / 256, 256>>>(n, d_out, fails);
  cudaError_t e = cudaGetLastError();
  if (!e) e = cudaMemcpy(out, d_out, 2 * sizeof *d_out, cudaMemcpyDeviceToHost);
  if (!e) e = cudaMemcpy(&hf, fails, sizeof hf, cudaMemcpyDeviceToHost);
  out[2] = (unsigned long long)hf;
  cudaFree(d_out);
  cudaFree(fails);
  if (e) {
    fprintf(stderr, "libcr_text: %s\n", cudaGetErrorString(e));
    return 2;
  }
  return 0;
}
