// hashtable.cu — linked structures whose nodes are allocated in one kernel and
// freed in another kernel on another stream:
//  - a chained hash table counting word occurrences (nodes pushed on bucket
//    heads with CAS; a node that loses a race to the same key is freed);
//  - one singly linked list per thread, built on stream A, summed and freed
//    on stream B after an event.
#include <vector>
#include <map>
#include "corpus.h"

struct Entry {
  unsigned key;
  int count;
  Entry *next;
};
struct Cell {
  long long value;
  Cell *next;
};

__host__ __device__ inline unsigned word(int i, unsigned vocab) {
  unsigned r = hash32((unsigned)i);
  return 1 + (r % vocab) % (1 + (r >> 20) % vocab);  // skewed: small keys are frequent
}

// Nodes are published by other threads while we read: volatile loads.
__device__ Entry *find(Entry *e, unsigned key) {
  for (volatile Entry *v = e; v; v = v->next)
    if (v->key == key) return (Entry *)v;
  return nullptr;
}

__global__ void count_words(Entry **buckets, unsigned nb, int n, unsigned vocab, int *nulls) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    unsigned key = word(i, vocab);
    Entry **slot = &buckets[hash32(key) % nb];
    Entry *mine = nullptr;
    for (;;) {
      Entry *head = *(Entry *volatile *)slot;
      Entry *hit = find(head, key);
      if (hit) {
        atomicAdd(&hit->count, 1);
        free(mine);  // lost the race to insert this key: drop our node
        break;
      }
      if (!mine) {
        mine = (Entry *)malloc(sizeof(Entry));
        if (!mine) {
          atomicAdd(nulls, 1);
          break;
        }
        mine->key = key;
        mine->count = 1;
      }
      mine->next = head;
      __threadfence();
      if (atomicCAS((unsigned long long *)slot, (unsigned long long)head, (unsigned long long)mine) ==
          (unsigned long long)head)
        break;
    }
  }
}

__global__ void build_lists(Cell **heads, int n, int *nulls) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  Cell *head = nullptr;
  int len = 1 + hash32(t) % 24;
  for (int k = 0; k < len; k++) {
    Cell *c = (Cell *)malloc(sizeof(Cell));
    if (!c) {
      atomicAdd(nulls, 1);
      break;
    }
    c->value = (long long)t * 131 + k * k;
    c->next = head;
    head = c;
  }
  heads[t] = head;
}

// One thread per bucket: tally, then free the chain.
__global__ void drain_table(Entry **buckets, unsigned nb, unsigned long long *keysum, int *total,
                            int *distinct) {
  unsigned b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= nb) return;
  Entry *e = buckets[b];
  while (e) {
    Entry *next = e->next;
    atomicAdd(keysum, (unsigned long long)e->key * (unsigned long long)e->count);
    atomicAdd(total, e->count);
    atomicAdd(distinct, 1);
    free(e);
    e = next;
  }
  buckets[b] = nullptr;
}

__global__ void drain_lists(Cell **heads, int n, long long *sums) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  long long s = 0;
  int pos = 0;
  for (Cell *c = heads[t]; c;) {
    Cell *next = c->next;
    s += c->value * ++pos;
    free(c);
    c = next;
  }
  sums[t] = s;
}

int main() {
  bool small = corpus_small();
  int n = small ? 100000 : 2000000, nl = small ? 8192 : 131072;
  unsigned vocab = small ? 5000 : 50000, nb = 1 << 14;
  corpus_heap_init(256u << 20);
  CK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, 256u << 20));
  cudaStream_t a, b;
  cudaEvent_t built;
  CK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
  CK(cudaEventCreateWithFlags(&built, cudaEventDisableTiming));
  Entry **buckets;
  Cell **heads;
  long long *sums;
  unsigned long long *keysum;
  int *counters;  // total, distinct, nulls
  CK(cudaMalloc(&buckets, nb * sizeof(Entry *)));
  CK(cudaMalloc(&heads, nl * sizeof(Cell *)));
  CK(cudaMallocManaged(&sums, nl * sizeof(long long)));
  CK(cudaMallocManaged(&keysum, sizeof(unsigned long long)));
  CK(cudaMallocManaged(&counters, 3 * sizeof(int)));
  *keysum = 0;
  counters[0] = counters[1] = counters[2] = 0;
  CK(cudaDeviceSynchronize());

  CK(cudaMemsetAsync(buckets, 0, nb * sizeof(Entry *), a));
  count_words<<<256, 256, 0, a>>>(buckets, nb, n, vocab, &counters[2]);
  CK(cudaGetLastError());
  build_lists<<<(nl + 255) / 256, 256, 0, a>>>(heads, nl, &counters[2]);
  CK(cudaGetLastError());
  CK(cudaEventRecord(built, a));
  CK(cudaStreamWaitEvent(b, built, 0));
  drain_table<<<(nb + 255) / 256, 256, 0, b>>>(buckets, nb, keysum, &counters[0], &counters[1]);
  CK(cudaGetLastError());
  drain_lists<<<(nl + 255) / 256, 256, 0, b>>>(heads, nl, sums);
  CK(cudaGetLastError());
  CK(cudaStreamSynchronize(b));

  std::map<unsigned, int> ref;
  for (int i = 0; i < n; i++) ref[word(i, vocab)]++;
  unsigned long long ks = 0;
  for (auto &kv : ref) ks += (unsigned long long)kv.first * kv.second;
  int rc = 0;
  if (counters[2]) {
    fprintf(stderr, "hashtable: %d NULL from malloc\n", counters[2]);
    rc = 1;
  }
  if (counters[0] != n || counters[1] != (int)ref.size() || *keysum != ks) {
    fprintf(stderr, "hashtable: total %d distinct %d keysum %llu, want %d %zu %llu\n", counters[0],
            counters[1], *keysum, n, ref.size(), ks);
    rc = 1;
  }
  int bad = 0;
  for (int t = 0; t < nl; t++) {
    int len = 1 + (int)(hash32(t) % 24);
    long long s = 0;
    for (int pos = 1; pos <= len; pos++) {
      int k = len - pos;
      s += ((long long)t * 131 + k * k) * pos;
    }
    if (s != sums[t]) bad++;
  }
  if (bad) {
    fprintf(stderr, "hashtable: %d lists wrong\n", bad);
    rc = 1;
  }
  Digest d;
  d.add(counters[0]);
  d.add(counters[1]);
  d.add(*keysum);
  d.bytes(sums, nl * sizeof(long long));
  fprintf(stderr, "hashtable: %d words, %d distinct, %d lists\n", counters[0], counters[1], nl);
  corpus_result("hashtable", d);
  return rc;
}
