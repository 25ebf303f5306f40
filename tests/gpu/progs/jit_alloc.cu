// jit_alloc.cu — an unmodified CUDA program for the load-time re-link cases
// (tests/gpu/cases/60_jit_*.sh). Built with plain `nvcc -arch=sm_90`: stock
// device malloc, sm_90 SASS plus compute_90 PTX. It knows nothing of devmalloc.
//
// Output (stdout, one fact per line, compared between runs):
//   small ok=<n>/<N> sum=<checksum>   N threads x 1 KiB, fits the 8 MiB stock heap
//   big ok=<n>/<M>                    M threads x 1 KiB held at once: 16 MiB,
//                                     more than the stock heap holds
//   new ok=<n>/<N> aligned ok=<n>/<N> misaligned=<n>
//   symbol seed=<v> counter=<n>       __device__ globals via cudaMemcpy{To,From}Symbol
//   time first_launch_ms=<t>          start of main to the end of the first kernel
//   result OK | result ERROR <what>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

__device__ unsigned long long g_seed;
__device__ unsigned int g_counter;

__global__ void k_small(unsigned long long *sums, unsigned *ok, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned long long *p = (unsigned long long *)malloc(1024);
  if (!p) {
    sums[i] = 0;
    return;
  }
  for (int j = 0; j < 128; j++) p[j] = g_seed * (unsigned long long)(i + 1) + j;
  unsigned long long s = 0;
  for (int j = 0; j < 128; j++) s += p[j];
  sums[i] = s;
  atomicAdd(ok, 1u);
  atomicAdd(&g_counter, 1u);
  free(p);
}

__global__ void k_big_alloc(void **ptrs, unsigned *ok, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int *p = (int *)malloc(1024);
  ptrs[i] = p;
  if (p) {
    p[0] = i;
    p[255] = i;
    atomicAdd(ok, 1u);
    atomicAdd(&g_counter, 1u);
  }
}

__global__ void k_big_free(void **ptrs, unsigned *bad, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n || !ptrs[i]) return;
  int *p = (int *)ptrs[i];
  if (p[0] != i || p[255] != i) atomicAdd(bad, 1u);
  free(p);
}

__global__ void k_new(unsigned *ok_new, unsigned *ok_al, unsigned *mis, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int *q = new int[64];
  if (q) {
    q[63] = i;
    if (q[63] == i) atomicAdd(ok_new, 1u);
    delete[] q;
  }
  void *a = __nv_aligned_device_malloc(256, 128);
  if (a) {
    atomicAdd(ok_al, 1u);
    if ((unsigned long long)a % 128) atomicAdd(mis, 1u);
    free(a);
  }
}

#define CK(x)                                                      \
  do {                                                             \
    cudaError_t e_ = (x);                                          \
    if (e_ != cudaSuccess) {                                       \
      printf("result ERROR %s: %s\n", #x, cudaGetErrorString(e_)); \
      return 1;                                                    \
    }                                                              \
  } while (0)

int main(int argc, char **argv) {
  auto t0 = std::chrono::steady_clock::now();
  const int N = 1024, M = argc > 1 ? atoi(argv[1]) : 16384, T = 256;
  unsigned long long seed = 0x9e3779b97f4a7c15ull, *d_sums;
  unsigned *d_cnt;  // [0] small ok, [1] big ok, [2] bad, [3] new ok, [4] aligned ok, [5] misaligned
  void **d_ptrs;
  CK(cudaMemcpyToSymbol(g_seed, &seed, sizeof seed));
  CK(cudaMalloc(&d_sums, N * sizeof *d_sums));
  CK(cudaMalloc(&d_cnt, 8 * sizeof *d_cnt));
  CK(cudaMalloc(&d_ptrs, M * sizeof *d_ptrs));
  CK(cudaMemset(d_cnt, 0, 8 * sizeof *d_cnt));

  k_small<<<(N + T - 1) / T, T>>>(d_sums, d_cnt, N);
  CK(cudaDeviceSynchronize());
  double first_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  k_big_alloc<<<(M + T - 1) / T, T>>>(d_ptrs, d_cnt + 1, M);
  CK(cudaDeviceSynchronize());
  k_big_free<<<(M + T - 1) / T, T>>>(d_ptrs, d_cnt + 2, M);
  CK(cudaDeviceSynchronize());
  k_new<<<(N + T - 1) / T, T>>>(d_cnt + 3, d_cnt + 4, d_cnt + 5, N);
  CK(cudaDeviceSynchronize());

  unsigned long long *sums = (unsigned long long *)malloc(N * sizeof *sums), sum = 0;
  unsigned cnt[8], counter = 0;
  unsigned long long seed_back = 0;
  CK(cudaMemcpy(sums, d_sums, N * sizeof *sums, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(cnt, d_cnt, sizeof cnt, cudaMemcpyDeviceToHost));
  CK(cudaMemcpyFromSymbol(&seed_back, g_seed, sizeof seed_back));
  CK(cudaMemcpyFromSymbol(&counter, g_counter, sizeof counter));
  for (int i = 0; i < N; i++) sum += sums[i];

  printf("small ok=%u/%d sum=%llu\n", cnt[0], N, sum);
  printf("big ok=%u/%d\n", cnt[1], M);
  printf("new ok=%u/%d aligned ok=%u/%d misaligned=%u\n", cnt[3], N, cnt[4], N, cnt[5]);
  printf("symbol seed=%llx counter=%u\n", seed_back, counter);
  printf("time first_launch_ms=%.1f\n", first_ms);
  if (cnt[2]) {
    printf("result ERROR %u blocks lost their contents\n", cnt[2]);
    return 1;
  }
  if (seed_back != seed || counter != cnt[0] + cnt[1]) {
    printf("result ERROR symbols: seed %llx counter %u\n", seed_back, counter);
    return 1;
  }
  printf("result OK\n");
  return 0;
}
