// shim_graph.cu — CUDA graphs. The very first launch of a malloc kernel in
// the process is captured (so the shim must bind at instantiation, never
// during the capture), the graph is replayed 3 times; then a graph built
// node by node (cudaGraphAddKernelNode) is instantiated and launched.
#include "shim_common.h"

int main() {
  const unsigned n = 1 << 16;
  cudaStream_t s;
  CK(cudaStreamCreate(&s));  // a blocking stream: the strict case for capture
  unsigned long long *d;
  CK(cudaMalloc(&d, 3 * sizeof(unsigned long long)));
  CK(cudaMemset(d, 0, 3 * sizeof(unsigned long long)));
  CK(cudaDeviceSynchronize());

  cudaGraph_t g;
  cudaGraphExec_t ge;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  alloc_check<<<(n + 255) / 256, 256, 0, s>>>(n, 1024, 7, d);
  CK(cudaStreamEndCapture(s, &g));
  CK(cudaGraphInstantiate(&ge, g, 0));
  for (int i = 0; i < 3; i++) CK(cudaGraphLaunch(ge, s));
  counts_t c;
  CK(cudaMemcpyAsync(&c, d, sizeof c, cudaMemcpyDeviceToHost, s));
  CK(cudaStreamSynchronize(s));
  int rc = report("captured", c, 3ull * n);

  // built graph
  CK(cudaMemset(d, 0, 3 * sizeof(unsigned long long)));
  cudaGraph_t g2;
  cudaGraphExec_t ge2;
  CK(cudaGraphCreate(&g2, 0));
  unsigned nn = n, sz = 256, salt = 9;
  void *args[] = {&nn, &sz, &salt, &d};
  cudaKernelNodeParams p = {};
  p.func = (void *)alloc_check;
  p.gridDim = dim3((n + 255) / 256);
  p.blockDim = dim3(256);
  p.kernelParams = args;
  cudaGraphNode_t node;
  CK(cudaGraphAddKernelNode(&node, g2, nullptr, 0, &p));
  CK(cudaGraphInstantiate(&ge2, g2, 0));
  CK(cudaGraphLaunch(ge2, s));
  CK(cudaMemcpyAsync(&c, d, sizeof c, cudaMemcpyDeviceToHost, s));
  CK(cudaStreamSynchronize(s));
  int rc2 = report("built", c, n);
  if (rc == 1 || rc2 == 1) return 1;
  return rc ? rc : rc2;
}
