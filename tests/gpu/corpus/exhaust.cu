// exhaust.cu — a small heap (4 MiB, set before the first launch), a kernel
// that allocates until malloc returns NULL and then gives everything back,
// a job that falls back to preallocated memory when malloc fails, and a
// late attempt to change the heap size (refused: cudaErrorInvalidValue).
#include <vector>
#include "corpus.h"

// Each thread takes 64 KiB blocks until NULL (or 64 of them), chaining them
// through their first word, then frees them all.
__global__ void grab_all(int *got, int *saw_null) {
  void *head = nullptr;
  int n = 0;
  while (n < 64) {
    void **b = (void **)malloc(64 << 10);
    if (!b) {
      atomicOr(saw_null, 1);
      break;
    }
    b[0] = head;
    head = b;
    n++;
  }
  atomicAdd(got, n);
  while (head) {
    void *next = *(void **)head;
    free(head);
    head = next;
  }
}

// Histogram of a slice of the input in a 1 KiB buffer from malloc, or in a
// slot of the fallback area when malloc has nothing left.
__global__ void job(const unsigned *in, int per, unsigned *fallback, unsigned long long *out,
                    int *fell_back) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned *hist = (unsigned *)malloc(256 * sizeof(unsigned));
  bool mine = hist != nullptr;
  if (!mine) {
    hist = fallback + (size_t)t * 256;
    atomicAdd(fell_back, 1);
  }
  for (int i = 0; i < 256; i++) hist[i] = 0;
  for (int i = 0; i < per; i++) hist[in[(size_t)t * per + i] & 255]++;
  unsigned long long s = 0;
  for (int i = 0; i < 256; i++) s += (unsigned long long)hist[i] * hist[i] * (i + 1);
  out[t] = s;
  if (mine) free(hist);
}

int main() {
  bool small = corpus_small();
  int threads = small ? 8192 : 131072, per = 64;
  corpus_heap_init(4u << 20);
  CK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, 4u << 20));
  size_t lim = 0;
  CK(cudaDeviceGetLimit(&lim, cudaLimitMallocHeapSize));
  int *got, *flags;
  unsigned *in, *fallback;
  unsigned long long *out;
  CK(cudaMallocManaged(&got, sizeof(int)));
  CK(cudaMallocManaged(&flags, 2 * sizeof(int)));
  CK(cudaMallocManaged(&in, (size_t)threads * per * sizeof(unsigned)));
  CK(cudaMalloc(&fallback, (size_t)threads * 256 * sizeof(unsigned)));
  CK(cudaMallocManaged(&out, threads * sizeof(unsigned long long)));
  for (size_t i = 0; i < (size_t)threads * per; i++) in[i] = (unsigned)(i * 2654435761u >> 7);
  *got = 0;
  flags[0] = flags[1] = 0;

  grab_all<<<8, 128>>>(got, &flags[0]);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  job<<<threads / 256, 256>>>(in, per, fallback, out, &flags[1]);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  cudaError_t late = cudaDeviceSetLimit(cudaLimitMallocHeapSize, 64u << 20);
  (void)cudaGetLastError();
  // still works after the refused call
  grab_all<<<8, 128>>>(got, &flags[0]);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());

  fprintf(stderr, "exhaust: limit %zu, %d blocks of 64 KiB before NULL, %d fallbacks, late set: %s\n", lim,
          *got, flags[1], cudaGetErrorName(late));
  int rc = 0;
  if (!flags[0]) {
    fprintf(stderr, "exhaust: malloc never returned NULL\n");
    rc = 1;
  }
  if (*got == 0) {
    fprintf(stderr, "exhaust: no block at all from a 4 MiB heap\n");
    rc = 1;
  }
  // A relinked build that made its own heap (no shim) never launched a kernel
  // with the stock malloc, so the driver has no reason to refuse there.
  bool own_heap = getenv("CORPUS_DEVMALLOC_INIT") != nullptr;
  if (late != cudaErrorInvalidValue && !own_heap) {
    fprintf(stderr, "exhaust: late heap-size change not refused\n");
    rc = 1;
  }
  std::vector<unsigned> h(256);
  int bad = 0;
  for (int t = 0; t < threads; t++) {
    std::fill(h.begin(), h.end(), 0u);
    for (int i = 0; i < per; i++) h[in[(size_t)t * per + i] & 255]++;
    unsigned long long s = 0;
    for (int i = 0; i < 256; i++) s += (unsigned long long)h[i] * h[i] * (i + 1);
    bad += s != out[t];
  }
  if (bad) {
    fprintf(stderr, "exhaust: %d wrong histograms\n", bad);
    rc = 1;
  }
  Digest d;
  d.bytes(out, threads * sizeof(unsigned long long));
  char extra[96];
  snprintf(extra, sizeof extra, "null_seen=%d late_set=%s", flags[0], cudaGetErrorName(late));
  corpus_result("exhaust", d, extra);
  return rc;
}
