// scratch.cu — per-thread scratch buffers in a register-heavy kernel: each
// thread mallocs a work buffer at entry (64..256 B), expands its input into
// it, runs a 16-word mixing function held in registers, and frees the
// buffer at exit. Launched with 1, 32, 1000, 65536 and 1M threads.
#include <vector>
#include "corpus.h"

#define ROTL(a, b) (((a) << (b)) | ((a) >> (32 - (b))))
#define QR(a, b, c, d)                                                                                       \
  (a += b, d ^= a, d = ROTL(d, 16), c += d, b ^= c, b = ROTL(b, 12), a += b, d ^= a, d = ROTL(d, 8), c += d, \
   b ^= c, b = ROTL(b, 7))

// The whole per-thread job. `buf` is the scratch area of `words` words.
__host__ __device__ inline uint32_t job(uint32_t tid, uint32_t *buf, int words) {
  for (int i = 0; i < words; i++) buf[i] = tid * 0x9e3779b9u + i * 0x85ebca6bu + (uint32_t)words;
  uint32_t x[16];
#pragma unroll
  for (int i = 0; i < 16; i++) x[i] = 0x61707865u + i * tid;
  for (int blk = 0; blk + 16 <= words; blk += 16) {
#pragma unroll
    for (int i = 0; i < 16; i++) x[i] ^= buf[blk + i];
#pragma unroll
    for (int r = 0; r < 4; r++) {
      QR(x[0], x[4], x[8], x[12]);
      QR(x[1], x[5], x[9], x[13]);
      QR(x[2], x[6], x[10], x[14]);
      QR(x[3], x[7], x[11], x[15]);
      QR(x[0], x[5], x[10], x[15]);
      QR(x[1], x[6], x[11], x[12]);
      QR(x[2], x[7], x[8], x[13]);
      QR(x[3], x[4], x[9], x[14]);
    }
#pragma unroll
    for (int i = 0; i < 16; i++) buf[blk + i] = x[i];
  }
  uint32_t h = 0;
  for (int i = 0; i < words; i++) h = ROTL(h, 5) ^ buf[i];
#pragma unroll
  for (int i = 0; i < 16; i++) h += x[i];
  return h;
}
__host__ __device__ inline int words_of(uint32_t tid) { return 16 * (1 + tid % 4); }

__global__ void work(uint32_t *out, int n, int *nulls) {
  int tid = blockIdx.x * blockDim.x + threadIdx.x;
  if (tid >= n) return;
  int words = words_of(tid);
  uint32_t *buf = (uint32_t *)malloc(words * sizeof(uint32_t));
  if (!buf) {
    atomicAdd(nulls, 1);
    out[tid] = 0;
    return;
  }
  out[tid] = job(tid, buf, words);
  free(buf);
}

int main() {
  bool small = corpus_small();
  corpus_heap_init(512u << 20);
  CK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, 512u << 20));
  std::vector<int> sizes = {1, 32, 1000, 65536};
  if (!small) sizes.push_back(1 << 20);
  uint32_t *out;
  int *nulls;
  CK(cudaMallocManaged(&out, (1 << 20) * sizeof(uint32_t)));
  CK(cudaMallocManaged(&nulls, sizeof(int)));
  Digest d;
  int rc = 0;
  std::vector<uint32_t> tmp(64);
  for (int n : sizes) {
    *nulls = 0;
    int tb = n < 256 ? n : 256;
    work<<<(n + tb - 1) / tb, tb>>>(out, n, nulls);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    if (*nulls) {
      fprintf(stderr, "scratch: %d threads: %d NULL\n", n, *nulls);
      rc = 1;
    }
    int bad = 0;
    for (int t = 0; t < n; t += (n > 4096 ? 97 : 1))
      if (out[t] != job(t, tmp.data(), words_of(t))) bad++;
    if (out[n - 1] != job(n - 1, tmp.data(), words_of(n - 1))) bad++;
    if (bad) {
      fprintf(stderr, "scratch: %d threads: %d wrong results\n", n, bad);
      rc = 1;
    }
    d.add(n);
    d.bytes(out, n * sizeof(uint32_t));
  }
  fprintf(stderr, "scratch: %zu launches\n", sizes.size());
  corpus_result("scratch", d);
  return rc;
}
