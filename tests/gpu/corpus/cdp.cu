// cdp.cu — dynamic parallelism (CDP2; -rdc=true -lcudadevrt). Each block of
// the parent grid launches a child grid whose threads malloc and fill
// buffers; a tail-launched kernel of the parent sums and frees half of them,
// and a second parent kernel, launched from the host, frees the rest.
#include <vector>
#include "corpus.h"

#define CHILD_THREADS 128

__host__ __device__ inline int len_of(int task, int i) { return 4 + (task * 7 + i) % 61; }
__host__ __device__ inline long long val_of(int task, int i, int k) {
  return (task * 1000003ll + i * 131 + k) % 100019;
}

__global__ void child_fill(int task, long long **slots, int *nulls) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int len = len_of(task, i);
  long long *b = (long long *)malloc(len * sizeof(long long));
  if (!b) {
    atomicAdd(nulls, 1);
    slots[i] = nullptr;
    return;
  }
  for (int k = 0; k < len; k++) b[k] = val_of(task, i, k);
  slots[i] = b;
}

__device__ long long sum_and_free(int task, long long **slots, int i) {
  long long *b = slots[i];
  if (!b) return 0;
  long long s = 0;
  for (int k = 0; k < len_of(task, i); k++) s += b[k] * (k + 1);
  free(b);
  slots[i] = nullptr;
  return s;
}

// Runs after the parent block's grid and all its children are complete.
__global__ void reap_even(int ntasks, int per_task, long long **slots, long long *sums) {
  int task = blockIdx.x, i = threadIdx.x;
  if (task >= ntasks) return;
  for (int j = 2 * i; j < per_task; j += 2 * blockDim.x)
    atomicAdd((unsigned long long *)&sums[task],
              (unsigned long long)sum_and_free(task, slots + (size_t)task * per_task, j));
}

__global__ void parent(int ntasks, int per_task, long long **slots, long long *sums, int *nulls) {
  int task = blockIdx.x;
  if (threadIdx.x == 0) {
    child_fill<<<per_task / CHILD_THREADS, CHILD_THREADS, 0, cudaStreamFireAndForget>>>(
        task, slots + (size_t)task * per_task, nulls);
    if (task == 0) reap_even<<<ntasks, 64, 0, cudaStreamTailLaunch>>>(ntasks, per_task, slots, sums);
  }
}

__global__ void parent_reap_odd(int per_task, long long **slots, long long *sums) {
  int task = blockIdx.x;
  long long s = 0;
  for (int j = 2 * threadIdx.x + 1; j < per_task; j += 2 * blockDim.x)
    s += sum_and_free(task, slots + (size_t)task * per_task, j);
  atomicAdd((unsigned long long *)&sums[task], (unsigned long long)s);
}

int main() {
  bool small = corpus_small();
  int ntasks = small ? 16 : 256, per_task = small ? 256 : 1024;
  corpus_heap_init(256u << 20);
  CK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, 256u << 20));
  long long **slots, *sums;
  int *nulls;
  CK(cudaMalloc(&slots, (size_t)ntasks * per_task * sizeof(long long *)));
  CK(cudaMallocManaged(&sums, ntasks * sizeof(long long)));
  CK(cudaMallocManaged(&nulls, sizeof(int)));
  memset(sums, 0, ntasks * sizeof(long long));
  *nulls = 0;
  parent<<<ntasks, 32>>>(ntasks, per_task, slots, sums, nulls);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  parent_reap_odd<<<ntasks, 64>>>(per_task, slots, sums);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  int rc = 0, bad = 0;
  if (*nulls) {
    fprintf(stderr, "cdp: %d NULL from malloc in child grids\n", *nulls);
    rc = 1;
  }
  for (int t = 0; t < ntasks; t++) {
    long long s = 0;
    for (int i = 0; i < per_task; i++)
      for (int k = 0; k < len_of(t, i); k++) s += val_of(t, i, k) * (k + 1);
    if (s != sums[t] && bad++ < 5) fprintf(stderr, "cdp: task %d: %lld, want %lld\n", t, sums[t], s);
  }
  if (bad) rc = 1;
  Digest d;
  d.bytes(sums, ntasks * sizeof(long long));
  fprintf(stderr, "cdp: %d child grids of %d threads\n", ntasks, per_task);
  corpus_result("cdp", d);
  return rc;
}
