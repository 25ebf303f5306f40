// growarray.cu — arrays that grow by "allocate twice the size, copy, free the
// old one": per thread (a small vector), per warp (lane 0 allocates, the
// pointer is broadcast with a shuffle, all lanes copy), per block (thread 0
// allocates, the pointer is shared through shared memory, all threads copy).
#include <vector>
#include "corpus.h"

__host__ __device__ inline int value(int owner, int k) { return (int)(hash32(owner * 7919 + k) % 1000); }

struct Vec {
  int *data = nullptr;
  int size = 0, cap = 0;
  __device__ bool push(int v) {
    if (size == cap) {
      int ncap = cap ? 2 * cap : 2;
      int *nd = (int *)malloc(ncap * sizeof(int));
      if (!nd) return false;
      for (int i = 0; i < size; i++) nd[i] = data[i];
      free(data);
      data = nd;
      cap = ncap;
    }
    data[size++] = v;
    return true;
  }
};

// result = sum of v[k] * (k + 1)
__global__ void per_thread(int n, long long *out, int *nulls) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  Vec v;
  int len = 1 + hash32(t) % 300;
  for (int k = 0; k < len; k++)
    if (!v.push(value(t, k))) {
      atomicAdd(nulls, 1);
      break;
    }
  long long s = 0;
  for (int k = 0; k < v.size; k++) s += (long long)v.data[k] * (k + 1);
  free(v.data);
  out[t] = s;
}

__global__ void per_warp(int nwarps, long long *out, int *nulls) {
  int w = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
  if (w >= nwarps) return;  // whole warps only: blockDim is a multiple of 32
  int rounds = 1 + hash32(w) % 40, cap = 0;
  int *data = nullptr;
  for (int r = 0; r < rounds; r++) {
    if (32 * (r + 1) > cap) {
      int ncap = cap ? 2 * cap : 32;
      int *nd = nullptr;
      if (lane == 0) nd = (int *)malloc(ncap * sizeof(int));
      nd = (int *)__shfl_sync(0xffffffffu, (unsigned long long)nd, 0);
      if (!nd) {
        if (lane == 0) atomicAdd(nulls, 1);
        rounds = r;
        break;
      }
      for (int i = lane; i < 32 * r; i += 32) nd[i] = data[i];
      __syncwarp();
      if (lane == 0) free(data);
      data = nd;
      cap = ncap;
    }
    data[32 * r + lane] = value(w, 32 * r + lane);
  }
  __syncwarp();
  long long s = 0;
  for (int i = lane; i < 32 * rounds; i += 32) s += (long long)data[i] * (i + 1);
  for (int o = 16; o; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
  __syncwarp();
  if (lane == 0) {
    free(data);
    out[w] = s;
  }
}

__global__ void per_block(long long *out, int *nulls) {
  __shared__ int *data;
  __shared__ long long part[32];
  int b = blockIdx.x, t = threadIdx.x, nt = blockDim.x;
  int rounds = 1 + hash32(b) % 24, cap = 0;
  if (t == 0) data = nullptr;
  __syncthreads();
  for (int r = 0; r < rounds; r++) {
    if (nt * (r + 1) > cap) {
      int ncap = cap ? 2 * cap : nt;
      __shared__ int *nd;
      if (t == 0) nd = (int *)malloc(ncap * sizeof(int));
      __syncthreads();
      if (!nd) {
        if (t == 0) atomicAdd(nulls, 1);
        rounds = r;
        break;
      }
      for (int i = t; i < nt * r; i += nt) nd[i] = data[i];
      __syncthreads();
      if (t == 0) {
        free(data);
        data = nd;
      }
      cap = ncap;
      __syncthreads();
    }
    data[nt * r + t] = value(b + 100000, nt * r + t);
  }
  __syncthreads();
  long long s = 0;
  for (int i = t; i < nt * rounds; i += nt) s += (long long)data[i] * (i + 1);
  for (int o = 16; o; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
  if (t % 32 == 0) part[t / 32] = s;
  __syncthreads();
  if (t == 0) {
    long long tot = 0;
    for (int i = 0; i < nt / 32; i++) tot += part[i];
    out[b] = tot;
    free(data);
  }
}

int main() {
  bool small = corpus_small();
  int nthr = small ? 8192 : 65536, nwarps = small ? 512 : 8192, nblocks = small ? 64 : 1024;
  const int bt = 256;
  corpus_heap_init(512u << 20);
  CK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, 512u << 20));
  long long *o1, *o2, *o3;
  int *nulls;
  CK(cudaMallocManaged(&o1, nthr * sizeof(long long)));
  CK(cudaMallocManaged(&o2, nwarps * sizeof(long long)));
  CK(cudaMallocManaged(&o3, nblocks * sizeof(long long)));
  CK(cudaMallocManaged(&nulls, sizeof(int)));
  *nulls = 0;
  per_thread<<<(nthr + 127) / 128, 128>>>(nthr, o1, nulls);
  CK(cudaGetLastError());
  per_warp<<<(nwarps * 32 + 127) / 128, 128>>>(nwarps, o2, nulls);
  CK(cudaGetLastError());
  per_block<<<nblocks, bt>>>(o3, nulls);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  int rc = 0;
  if (*nulls) {
    fprintf(stderr, "growarray: %d NULL from malloc\n", *nulls);
    rc = 1;
  }
  auto ref = [](int owner, int len) {
    long long s = 0;
    for (int k = 0; k < len; k++) s += (long long)value(owner, k) * (k + 1);
    return s;
  };
  int bad[3] = {0, 0, 0};
  for (int t = 0; t < nthr; t++) bad[0] += o1[t] != ref(t, 1 + hash32(t) % 300);
  for (int w = 0; w < nwarps; w++) bad[1] += o2[w] != ref(w, 32 * (1 + hash32(w) % 40));
  for (int b = 0; b < nblocks; b++) bad[2] += o3[b] != ref(b + 100000, bt * (1 + hash32(b) % 24));
  if (bad[0] || bad[1] || bad[2]) {
    fprintf(stderr, "growarray: wrong sums: %d per thread, %d per warp, %d per block\n", bad[0], bad[1],
            bad[2]);
    rc = 1;
  }
  Digest d;
  d.bytes(o1, nthr * sizeof(long long));
  d.bytes(o2, nwarps * sizeof(long long));
  d.bytes(o3, nblocks * sizeof(long long));
  fprintf(stderr, "growarray: %d threads, %d warps, %d blocks\n", nthr, nwarps, nblocks);
  corpus_result("growarray", d);
  return rc;
}
