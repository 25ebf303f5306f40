// main.cu — cmake_rdc: the executable calls both libraries and runs its own
// kernels, whose list nodes come from device malloc through tally.cu; every
// result is checked against the host's computation.
#include <vector>
#include "corpus.h"
#include "cmake_rdc.h"

struct CrNode;
__device__ bool cr_push(CrNode **head, unsigned long long key);  // tally.cu
__device__ unsigned long long cr_drain(CrNode **head);

__global__ void cr_lists(CrNode **heads, int nheads, int n, int *fails) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < n && !cr_push(&heads[t % nheads], (unsigned long long)t * 3 + 1)) atomicAdd(fails, 1);
}
__global__ void cr_drain_all(CrNode **heads, int nheads, unsigned long long *sums) {
  int h = blockIdx.x * blockDim.x + threadIdx.x;
  if (h < nheads) sums[h] = cr_drain(&heads[h]);
}

static unsigned long long host_graph(int n, uint32_t seed, unsigned long long *edges) {
  unsigned long long s = 0;
  *edges = 0;
  for (int v = 0; v < n; v++) {
    uint32_t r = cr_rand(seed ^ (uint32_t)(v * 7919 + 1));
    int deg = (int)(r % 9);
    for (int k = 0; k < deg; k++) {
      r = cr_rand(r);
      s += ((uint32_t)v * 2654435761u ^ (r % (uint32_t)n)) % 1000u;
    }
    *edges += (unsigned long long)deg;
  }
  return s;
}

static unsigned long long host_text(int n, unsigned long long *total) {
  unsigned long long s = 0;
  *total = 0;
  for (int t = 0; t < n; t++) {
    int len = 1 + t % 37;
    unsigned long long h = 1469598103934665603ull;
    for (int i = 0; i < len; i++) {
      h ^= (unsigned char)('a' + (t * 31 + i * 7) % 26);
      h *= 1099511628211ull;
    }
    s += h >> 20;
    *total += (unsigned long long)len;
  }
  return s;
}

int main() {
  const bool small = corpus_small();
  const int n = small ? 10000 : 100000, nheads = 1024;
  CK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, 256u << 20));
  corpus_heap_init(256u << 20);
  Digest d;
  int bad = 0;

  unsigned long long g[3], ge;
  if (cr_graph_run(n, 12345u, g)) return 1;
  if (g[2] || g[0] != host_graph(n, 12345u, &ge) || g[1] != ge) {
    fprintf(stderr, "graph: %llu/%llu, %llu failed allocations\n", g[0], g[1], g[2]);
    bad = 1;
  }
  d.add(g[0]);
  d.add(g[1]);

  unsigned long long w[3], wl;
  if (cr_text_run(n, w)) return 1;
  if (w[2] || w[0] != host_text(n, &wl) || w[1] != wl) {
    fprintf(stderr, "text: %llu/%llu, %llu failed allocations\n", w[0], w[1], w[2]);
    bad = 1;
  }
  d.add(w[0]);
  d.add(w[1]);

  CrNode **heads;
  unsigned long long *sums;
  int *fails, hf = 0;
  CK(cudaMalloc(&heads, nheads * sizeof *heads));
  CK(cudaMemset(heads, 0, nheads * sizeof *heads));
  CK(cudaMalloc(&sums, nheads * sizeof *sums));
  CK(cudaMalloc(&fails, sizeof *fails));
  CK(cudaMemset(fails, 0, sizeof *fails));
  cr_lists<<<(n + 255) / 256, 256>>>(heads, nheads, n, fails);
  cr_drain_all<<<(nheads + 127) / 128, 128>>>(heads, nheads, sums);
  CK(cudaGetLastError());
  std::vector<unsigned long long> hs(nheads), want(nheads, 0);
  CK(cudaMemcpy(hs.data(), sums, nheads * sizeof *sums, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(&hf, fails, sizeof hf, cudaMemcpyDeviceToHost));
  for (int t = 0; t < n; t++) want[t % nheads] += (unsigned long long)t * 3 + 1;
  if (hf || hs != want) {
    fprintf(stderr, "lists: %d failed allocations, sums %s\n", hf, hs == want ? "ok" : "wrong");
    bad = 1;
  }
  for (auto s : hs) d.add(s);
  CK(cudaFree(heads));
  CK(cudaFree(sums));
  CK(cudaFree(fails));
  if (bad) return 1;
  corpus_result("cmake_rdc", d);
  return 0;
}
