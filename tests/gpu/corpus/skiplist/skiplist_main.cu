// skiplist_main.cu — 32,000 threads insert keys into one skiplist, every
// level is walked and compared with the host's expectation, all nodes freed.
#include <vector>
#include "../corpus.h"
#include "skiplist.h"

int main() {
  bool small = corpus_small();
  const int threads = 32000, nkeys = small ? 64000 : 500000, range = small ? 1 << 17 : 1 << 21;
  corpus_heap_init(128u << 20);
  CK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, 128u << 20));

  std::vector<unsigned char> expect(range + 1, 0);
  for (int i = 0; i < nkeys; i++) expect[sl_key(i, range)] = 1;
  int want[SL_MAXH] = {0};
  unsigned long long want_hash[SL_MAXH] = {0};
  for (int k = 1; k <= range; k++)
    if (expect[k])
      for (int l = 0; l < sl_height(k); l++) {
        want[l]++;
        want_hash[l] += sl_mix((uint32_t)k ^ (uint32_t)l);
      }

  SlNode **head, **nodes;
  int *nnodes, *count, *bad;
  unsigned long long *hash;
  unsigned char *d_expect;
  SlStats *st;
  CK(cudaMalloc(&head, sizeof(SlNode *)));
  CK(cudaMalloc(&nodes, nkeys * sizeof(SlNode *)));
  CK(cudaMallocManaged(&nnodes, sizeof(int)));
  CK(cudaMallocManaged(&count, SL_MAXH * sizeof(int)));
  CK(cudaMallocManaged(&hash, SL_MAXH * sizeof(unsigned long long)));
  CK(cudaMallocManaged(&bad, sizeof(int)));
  CK(cudaMallocManaged(&st, sizeof(SlStats)));
  CK(cudaMalloc(&d_expect, range + 1));
  CK(cudaMemcpy(d_expect, expect.data(), range + 1, cudaMemcpyHostToDevice));
  *nnodes = 0;
  *bad = 0;
  memset(st, 0, sizeof *st);

  sl_create<<<1, 1>>>(head);
  CK(cudaGetLastError());
  sl_insert_all<<<threads / 128, 128>>>(head, nkeys, range, nodes, nnodes, st);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  sl_walk_levels<<<1, SL_MAXH>>>(head, d_expect, count, hash, bad);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  int n = *nnodes;
  fprintf(stderr, "skiplist: %d keys, %d nodes, %llu duplicates, %llu CAS retries, %llu NULL\n", nkeys, n,
          st->dups, st->retries, st->nulls);
  int rc = 0;
  if (st->nulls) {
    fprintf(stderr, "skiplist: malloc returned NULL\n");
    rc = 1;
  }
  if (*bad) {
    fprintf(stderr, "skiplist: %d levels out of order or with unknown keys\n", *bad);
    rc = 1;
  }
  if (n != want[0]) {
    fprintf(stderr, "skiplist: %d nodes inserted, want %d\n", n, want[0]);
    rc = 1;
  }
  Digest d;
  for (int l = 0; l < SL_MAXH; l++) {
    if (count[l] != want[l] || hash[l] != want_hash[l]) {
      fprintf(stderr, "skiplist: level %d: %d keys (want %d), hash %llx (want %llx)\n", l, count[l], want[l],
              hash[l], want_hash[l]);
      rc = 1;
    }
    d.add(count[l]);
    d.add(hash[l]);
  }
  sl_free_nodes<<<(n + 255) / 256, 256>>>(nodes, n);
  CK(cudaGetLastError());
  sl_destroy<<<1, 1>>>(head);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  char extra[64];
  snprintf(extra, sizeof extra, "nodes=%d", n);
  corpus_result("skiplist", d, extra);
  return rc;
}
