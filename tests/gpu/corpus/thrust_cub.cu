// thrust_cub.cu — a dynamic graph: per-vertex adjacency arrays from device
// malloc, grown (allocate, copy, free) as batches of edges arrive. Thrust
// groups each batch by source vertex (stable_sort_by_key, lower_bound); after
// every batch CUB builds a CSR copy (DeviceScan::ExclusiveSum) and sorts its
// edges (DeviceRadixSort), Thrust counts them (reduce), and the host checks
// the result against its own copy of the graph.
#include <algorithm>
#include <vector>
#include <cub/cub.cuh>
#include <thrust/binary_search.h>
#include <thrust/device_vector.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/reduce.h>
#include <thrust/sort.h>
#include "corpus.h"

struct Adj {
  int *nbr;
  int deg, cap;
};

__global__ void insert_edges(Adj *adj, int nv, const int *first, const int *dst, int *nulls) {
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= nv) return;
  int b = first[v], k = first[v + 1] - b;
  if (!k) return;
  Adj a = adj[v];
  if (a.deg + k > a.cap) {
    int cap = a.cap ? 2 * a.cap : 4;
    while (cap < a.deg + k) cap *= 2;
    int *n = (int *)malloc(cap * sizeof(int));
    if (!n) {
      atomicAdd(nulls, 1);
      return;
    }
    for (int i = 0; i < a.deg; i++) n[i] = a.nbr[i];
    free(a.nbr);
    a.nbr = n;
    a.cap = cap;
  }
  for (int i = 0; i < k; i++) a.nbr[a.deg + i] = dst[b + i];
  a.deg += k;
  adj[v] = a;
}

__global__ void degrees(const Adj *adj, int nv, int *deg) {
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v < nv) deg[v] = adj[v].deg;
}
__global__ void gather(const Adj *adj, int nv, const int *off, unsigned long long *keys) {
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= nv) return;
  for (int i = 0; i < adj[v].deg; i++)
    keys[off[v] + i] = ((unsigned long long)v << 32) | (unsigned)adj[v].nbr[i];
}
__global__ void release(Adj *adj, int nv) {
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v < nv) {
    free(adj[v].nbr);
    adj[v] = Adj{nullptr, 0, 0};
  }
}

int main() {
  bool small = corpus_small();
  int nv = small ? 2048 : 32768, batches = small ? 3 : 8, ne = small ? 8192 : 131072;
  corpus_heap_init(256u << 20);
  CK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, 256u << 20));
  Adj *adj;
  int *nulls;
  CK(cudaMalloc(&adj, nv * sizeof(Adj)));
  CK(cudaMemset(adj, 0, nv * sizeof(Adj)));
  CK(cudaMallocManaged(&nulls, sizeof(int)));
  *nulls = 0;
  std::vector<unsigned long long> host;  // the host's copy, as sorted keys
  Digest d;
  int rc = 0, tb = 256, gb = (nv + tb - 1) / tb;
  for (int b = 0; b < batches && !rc; b++) {
    std::vector<int> hs(ne), hd(ne);
    for (int i = 0; i < ne; i++) {
      unsigned r = hash32(b * 7777777u + i);
      hs[i] = (int)((r % nv) * (r % 3 ? 1u : (r >> 12) % nv) % nv);
      hd[i] = (int)(hash32(r) % nv);
      host.push_back(((unsigned long long)hs[i] << 32) | (unsigned)hd[i]);
    }
    thrust::device_vector<int> src(hs.begin(), hs.end()), dst(hd.begin(), hd.end()), first(nv + 1);
    thrust::stable_sort_by_key(src.begin(), src.end(), dst.begin());
    thrust::lower_bound(src.begin(), src.end(), thrust::counting_iterator<int>(0),
                        thrust::counting_iterator<int>(nv + 1), first.begin());
    insert_edges<<<gb, tb>>>(adj, nv, thrust::raw_pointer_cast(first.data()),
                             thrust::raw_pointer_cast(dst.data()), nulls);
    CK(cudaGetLastError());

    thrust::device_vector<int> deg(nv), off(nv);
    degrees<<<gb, tb>>>(adj, nv, thrust::raw_pointer_cast(deg.data()));
    CK(cudaGetLastError());
    long long total = thrust::reduce(deg.begin(), deg.end(), 0ll);
    void *tmp = nullptr;
    size_t tmp_bytes = 0;
    CK(cub::DeviceScan::ExclusiveSum(tmp, tmp_bytes, thrust::raw_pointer_cast(deg.data()),
                                     thrust::raw_pointer_cast(off.data()), nv));
    CK(cudaMalloc(&tmp, tmp_bytes));
    CK(cub::DeviceScan::ExclusiveSum(tmp, tmp_bytes, thrust::raw_pointer_cast(deg.data()),
                                     thrust::raw_pointer_cast(off.data()), nv));
    CK(cudaFree(tmp));
    thrust::device_vector<unsigned long long> keys(total), sorted(total);
    gather<<<gb, tb>>>(adj, nv, thrust::raw_pointer_cast(off.data()), thrust::raw_pointer_cast(keys.data()));
    CK(cudaGetLastError());
    tmp = nullptr;
    tmp_bytes = 0;
    CK(cub::DeviceRadixSort::SortKeys(tmp, tmp_bytes, thrust::raw_pointer_cast(keys.data()),
                                      thrust::raw_pointer_cast(sorted.data()), (int)total));
    CK(cudaMalloc(&tmp, tmp_bytes));
    CK(cub::DeviceRadixSort::SortKeys(tmp, tmp_bytes, thrust::raw_pointer_cast(keys.data()),
                                      thrust::raw_pointer_cast(sorted.data()), (int)total));
    CK(cudaFree(tmp));
    CK(cudaDeviceSynchronize());
    std::vector<unsigned long long> got(total);
    thrust::copy(sorted.begin(), sorted.end(), got.begin());
    std::sort(host.begin(), host.end());
    if (*nulls) {
      fprintf(stderr, "thrust_cub: batch %d: %d NULL from malloc\n", b, *nulls);
      rc = 1;
    }
    if (got != host) {
      fprintf(stderr, "thrust_cub: batch %d: the graph differs from the host's copy (%lld edges, want %zu)\n",
              b, total, host.size());
      rc = 1;
    }
    d.add(total);
    d.bytes(got.data(), got.size() * sizeof(got[0]));
  }
  release<<<gb, tb>>>(adj, nv);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  fprintf(stderr, "thrust_cub: %d vertices, %d batches of %d edges\n", nv, batches, ne);
  corpus_result("thrust_cub", d);
  return rc;
}
