// streams.cu — allocation across streams, CUDA graphs and host threads.
// Built with --default-stream per-thread: four host threads each run rounds
// of fill (every thread mallocs a buffer) and consume (sums and frees it) on
// their own default stream; then the same pair, forked over two streams, is
// captured into a CUDA graph and the graph is launched several times.
#include <thread>
#include <vector>
#include "corpus.h"

__host__ __device__ inline int buf_len(int t, int round) { return 8 + (t + 3 * round) % 57; }
__host__ __device__ inline int buf_val(int t, int k, int round, int tag) {
  return (t * 31 + k * 7 + round * 1009 + tag) % 4099;
}

__global__ void fill(int **slots, int n, const int *round, int tag, int *nulls) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  int r = *round, len = buf_len(t, r);
  int *b = (int *)malloc(len * sizeof(int));
  if (!b)
    atomicAdd(nulls, 1);
  else
    for (int k = 0; k < len; k++) b[k] = buf_val(t, k, r, tag);
  slots[t] = b;
}
__global__ void consume(int **slots, int n, const int *round, unsigned long long *acc) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < n && slots[t]) {
    int len = buf_len(t, *round);
    unsigned long long s = 0;
    for (int k = 0; k < len; k++) s += (unsigned long long)slots[t][k] * (k + 1);
    free(slots[t]);
    slots[t] = nullptr;
    atomicAdd(acc, s);
  }
}
__global__ void advance(int *round) { ++*round; }

unsigned long long expect(int n, int round0, int rounds, int tag) {
  unsigned long long s = 0;
  for (int r = round0; r < round0 + rounds; r++)
    for (int t = 0; t < n; t++)
      for (int k = 0; k < buf_len(t, r); k++) s += (unsigned long long)buf_val(t, k, r, tag) * (k + 1);
  return s;
}

struct Work {
  int **slots;
  int *round;
  unsigned long long *acc;
  int *nulls;
};
Work make_work(int n) {
  Work w;
  CK(cudaMalloc(&w.slots, n * sizeof(int *)));
  CK(cudaMalloc(&w.round, sizeof(int)));
  CK(cudaMalloc(&w.acc, sizeof(unsigned long long)));
  CK(cudaMalloc(&w.nulls, sizeof(int)));
  CK(cudaMemset(w.round, 0, sizeof(int)));
  CK(cudaMemset(w.acc, 0, sizeof(unsigned long long)));
  CK(cudaMemset(w.nulls, 0, sizeof(int)));
  CK(cudaDeviceSynchronize());
  return w;
}

int main() {
  bool small = corpus_small();
  const int nthreads = 4, n = small ? 4096 : 65536, rounds = small ? 4 : 20, glaunches = small ? 3 : 10;
  corpus_heap_init(256u << 20);
  CK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, 256u << 20));
  int rc = 0;
  Digest d;

  std::vector<Work> works;
  for (int i = 0; i < nthreads; i++) works.push_back(make_work(n));
  std::vector<unsigned long long> got(nthreads);
  std::vector<int> nulls(nthreads);
  std::vector<std::thread> pool;
  for (int i = 0; i < nthreads; i++)
    pool.emplace_back([&, i] {
      Work w = works[i];
      for (int r = 0; r < rounds; r++) {
        fill<<<(n + 255) / 256, 256>>>(w.slots, n, w.round, i, w.nulls);
        consume<<<(n + 255) / 256, 256>>>(w.slots, n, w.round, w.acc);
        advance<<<1, 1>>>(w.round);
        if (r % 5 == 4) CK(cudaStreamSynchronize(cudaStreamPerThread));
      }
      CK(cudaMemcpyAsync(&got[i], w.acc, sizeof got[i], cudaMemcpyDeviceToHost, cudaStreamPerThread));
      CK(cudaMemcpyAsync(&nulls[i], w.nulls, sizeof nulls[i], cudaMemcpyDeviceToHost, cudaStreamPerThread));
      CK(cudaStreamSynchronize(cudaStreamPerThread));
    });
  for (auto &th : pool) th.join();
  for (int i = 0; i < nthreads; i++) {
    unsigned long long want = expect(n, 0, rounds, i);
    if (nulls[i] || got[i] != want) {
      fprintf(stderr, "streams: host thread %d: %llu (%d NULL), want %llu\n", i, got[i], nulls[i], want);
      rc = 1;
    }
    d.add(got[i]);
  }

  // Graph: fork to a second stream, a fill/consume pair on each, join.
  Work g1 = make_work(n), g2 = make_work(n);
  cudaStream_t s1, s2;
  cudaEvent_t fork, join;
  CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  CK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  CK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeThreadLocal));
  CK(cudaEventRecord(fork, s1));
  CK(cudaStreamWaitEvent(s2, fork, 0));
  fill<<<(n + 255) / 256, 256, 0, s1>>>(g1.slots, n, g1.round, 100, g1.nulls);
  fill<<<(n + 255) / 256, 256, 0, s2>>>(g2.slots, n, g2.round, 200, g2.nulls);
  consume<<<(n + 255) / 256, 256, 0, s1>>>(g1.slots, n, g1.round, g1.acc);
  consume<<<(n + 255) / 256, 256, 0, s2>>>(g2.slots, n, g2.round, g2.acc);
  advance<<<1, 1, 0, s1>>>(g1.round);
  advance<<<1, 1, 0, s2>>>(g2.round);
  CK(cudaEventRecord(join, s2));
  CK(cudaStreamWaitEvent(s1, join, 0));
  CK(cudaStreamEndCapture(s1, &graph));
  CK(cudaGraphInstantiate(&exec, graph, 0));
  for (int i = 0; i < glaunches; i++) CK(cudaGraphLaunch(exec, s1));
  CK(cudaStreamSynchronize(s1));
  unsigned long long a1, a2;
  int n1, n2;
  CK(cudaMemcpy(&a1, g1.acc, sizeof a1, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(&a2, g2.acc, sizeof a2, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(&n1, g1.nulls, sizeof n1, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(&n2, g2.nulls, sizeof n2, cudaMemcpyDeviceToHost));
  unsigned long long w1 = expect(n, 0, glaunches, 100), w2 = expect(n, 0, glaunches, 200);
  if (n1 || n2 || a1 != w1 || a2 != w2) {
    fprintf(stderr, "streams: graph: %llu %llu (%d, %d NULL), want %llu %llu\n", a1, a2, n1, n2, w1, w2);
    rc = 1;
  }
  d.add(a1);
  d.add(a2);
  CK(cudaGraphExecDestroy(exec));
  CK(cudaGraphDestroy(graph));
  fprintf(stderr, "streams: %d host threads x %d rounds, graph launched %d times\n", nthreads, rounds,
          glaunches);
  corpus_result("streams", d);
  return rc;
}
