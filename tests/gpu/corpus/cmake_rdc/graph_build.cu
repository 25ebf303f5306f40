// graph_build.cu — libcr_graph: per-vertex adjacency arrays from device
// malloc (grown by doubling), then a second kernel sums and frees them.
#include <cstdio>
#include <cuda_runtime.h>
#include "cmake_rdc.h"

__device__ uint32_t cr_edge_weight(uint32_t a, uint32_t b);  // graph_weight.cu

struct Adj {
  uint32_t *to;
  int n;
};

__global__ void cr_graph_build(Adj *adj, int n, uint32_t seed, int *fails) {
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n) return;
  uint32_t r = cr_rand(seed ^ (uint32_t)(v * 7919 + 1));
  int deg = (int)(r % 9), cap = 1;
  uint32_t *to = (uint32_t *)malloc(cap * sizeof *to);
  if (!to) {
    atomicAdd(fails, 1);
    adj[v].to = nullptr;
    adj[v].n = 0;
    return;
  }
  for (int k = 0; k < deg; k++) {
    if (k == cap) {  // grow: allocate twice, copy, free
      uint32_t *bigger = (uint32_t *)malloc(2 * cap * sizeof *to);
      if (!bigger) {
        atomicAdd(fails, 1);
        break;
      }
      for (int i = 0; i < cap; i++) bigger[i] = to[i];
      free(to);
      to = bigger;
      cap *= 2;
    }
    r = cr_rand(r);
    to[k] = r % (uint32_t)n;
  }
  adj[v].to = to;
  adj[v].n = deg;
}

__global__ void cr_graph_sum(Adj *adj, int n, unsigned long long *out) {
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n || !adj[v].to) return;
  unsigned long long s = 0;
  for (int k = 0; k < adj[v].n; k++) s += cr_edge_weight((uint32_t)v, adj[v].to[k]);
  free(adj[v].to);
  atomicAdd(&out[0], s);
  atomicAdd(&out[1], (unsigned long long)adj[v].n);
}

CR_API int cr_graph_run(int n, uint32_t seed, unsigned long long out[3]) {
  Adj *adj;
  unsigned long long *d_out;
  int *fails, hf = 0;
  if (cudaMalloc(&adj, n * sizeof *adj) || cudaMalloc(&d_out, 2 * sizeof *d_out) ||
      cudaMalloc(&fails, sizeof *fails))
    return 1;
  cudaMemset(d_out, 0, 2 * sizeof *d_out);
  cudaMemset(fails, 0, sizeof *fails);
  cr_graph_build<<<(n + 127) / 128, 128>>>(adj, n, seed, fails);
  cr_graph_sum<<<(n + 127) / 128, 128>>>(adj, n, d_out);
  cudaError_t e = cudaGetLastError();
  if (!e) e = cudaMemcpy(out, d_out, 2 * sizeof *d_out, cudaMemcpyDeviceToHost);
  if (!e) e = cudaMemcpy(&hf, fails, sizeof hf, cudaMemcpyDeviceToHost);
  out[2] = (unsigned long long)hf;
  cudaFree(adj);
  cudaFree(d_out);
  cudaFree(fails);
  if (e) {
    fprintf(stderr, "libcr_graph: %s\n", cudaGetErrorString(e));
    return 2;
  }
  return 0;
}
