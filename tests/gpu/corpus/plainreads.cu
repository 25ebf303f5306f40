// plainreads.cu — lock-free structures written the way people write them:
// a node is malloc'd, filled, fenced and published by a CAS; other threads
// find it through a link and read its fields (key, height, the level
// array's address, an immutable chain link) with PLAIN loads (a data race by
// the memory model, which the stock allocator runs correctly). Links that
// change after publication are read with volatile loads or taken from the
// CAS's answer, as such code does: read plainly, a stale link would make a
// retry loop spin on stock too.
//
//   plainreads skiplist|hash|tree BLOCKS THREADS KEYS   run one structure
//   plainreads place BLOCKS THREADS SIZE                 where blocks land
//
// skiplist: 16 B nodes with an 8..128 B array of level pointers, both
//   allocated inside the CAS retry loop (freed when the level-0 CAS loses);
// hash: insert-if-absent into a chained hash table (nodes pushed by CAS at
//   the head of a bucket, the chain searched with plain loads first);
// tree: an insert-only unbalanced binary search tree (child pointers set by
//   CAS from NULL, descents with plain loads).
// Each checks the whole structure against the host after the kernel and
// prints "digest plainreads-<kind> <hex>" (a checksum of the keys found).
// place: each thread mallocs SIZE and records the address, its SM and warp;
// prints how close blocks of different SMs and warps come (same 128-byte
// line, same 32-byte sector), the smallest spacing, and whether blocks come
// back zeroed (for comparing allocators; not judged).
#include <vector>
#include <algorithm>
#include "corpus.h"

#define MAXH 16

struct SNode {
  int key;
  int height;
  SNode **next;
};
struct HNode {
  int key;
  int pad;
  HNode *next;
};
struct TNode {
  int key;
  int pad;
  TNode *child[2];
};

__device__ unsigned long long d_nulls, d_retries;

__device__ static bool cas_ptr(void *p, void *expect, void *want) {
  return atomicCAS((unsigned long long *)p, (unsigned long long)expect, (unsigned long long)want) ==
         (unsigned long long)expect;
}
template <class T> __device__ static T *link(T *const *p) { return *(T *const volatile *)p; }

// ---- skiplist (plain loads throughout the traversal)
__device__ static bool sl_find(SNode *head, int key, SNode **preds, SNode **succs) {
  SNode *pred = head;
  bool found = false;
  for (int l = MAXH - 1; l >= 0; l--) {
    SNode *cur = link(&pred->next[l]);
    while (cur && cur->key < key) {
      pred = cur;
      cur = link(&cur->next[l]);
    }
    preds[l] = pred;
    succs[l] = cur;
    if (cur && cur->key == key) found = true;
  }
  return found;
}
__global__ void k_skiplist(SNode *head, int nkeys, int range) {
  int tid = blockIdx.x * blockDim.x + threadIdx.x, nt = gridDim.x * blockDim.x;
  for (int i = tid; i < nkeys; i += nt) {
    int key = 1 + (int)(hash32((unsigned)i) % (unsigned)range);
    int h = 1 + __ffs(hash32((unsigned)key * 7u) | (1u << (MAXH - 1))) - 1;
    SNode *preds[MAXH], *succs[MAXH];
    for (;;) {
      if (sl_find(head, key, preds, succs)) break;
      SNode *n = (SNode *)malloc(sizeof(SNode));
      SNode **lv = (SNode **)malloc(h * sizeof(SNode *));
      if (!n || !lv) {
        free(n);
        free(lv);
        atomicAdd(&d_nulls, 1ull);
        break;
      }
      n->key = key;
      n->height = h;
      n->next = lv;
      for (int l = 0; l < h; l++) lv[l] = succs[l];
      __threadfence();
      if (!cas_ptr(&preds[0]->next[0], succs[0], n)) {
        free(lv);
        free(n);
        atomicAdd(&d_retries, 1ull);
        continue;
      }
      for (int l = 1; l < h; l++)
        for (;;) {
          lv[l] = succs[l];
          __threadfence();
          if (cas_ptr(&preds[l]->next[l], succs[l], n)) break;
          sl_find(head, key, preds, succs);
        }
      break;
    }
  }
}
__device__ void *d_nodes[1 << 21]; /* the walks' nodes, freed in parallel */
__global__ void k_free_nodes(int n, int skiplist) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  if (skiplist) free(((SNode *)d_nodes[i])->next);
  free(d_nodes[i]);
}
__global__ void k_sl_walk(SNode *head, int *out, int cap, int *count, int *bad) {
  int n = 0;
  for (SNode *c = head->next[0]; c; c = c->next[0]) {
    if (n < cap) out[n] = c->key, d_nodes[n] = c;
    for (int l = 1; l < c->height; l++)
      if (c->next[l] && c->next[l]->key <= c->key) atomicAdd(bad, 1);
    n++;
  }
  *count = n;
}

// ---- chained hash table, insert if absent
__global__ void k_hash(HNode **buckets, int nb, int nkeys, int range) {
  int tid = blockIdx.x * blockDim.x + threadIdx.x, nt = gridDim.x * blockDim.x;
  for (int i = tid; i < nkeys; i += nt) {
    int key = 1 + (int)(hash32((unsigned)i) % (unsigned)range);
    HNode **b = &buckets[hash32((unsigned)key * 31u) % (unsigned)nb];
    HNode *n = 0;
    for (;;) {
      HNode *head = *(HNode *volatile *)b, *c = head;
      while (c && c->key != key) c = c->next;  // plain loads
      if (c) {
        free(n);
        break;
      }
      if (!n) {
        n = (HNode *)malloc(sizeof(HNode));
        if (!n) {
          atomicAdd(&d_nulls, 1ull);
          break;
        }
        n->key = key;
      }
      n->next = head;
      __threadfence();
      if (cas_ptr(b, head, n)) break;
      atomicAdd(&d_retries, 1ull);
    }
  }
}
__global__ void k_hash_walk(HNode **buckets, int nb, int *out, int cap, int *count, int *bad) {
  int n = 0;
  for (int i = 0; i < nb; i++)
    for (HNode *c = buckets[i]; c; c = c->next) {
      if (n < cap) out[n] = c->key, d_nodes[n] = c;
      n++;
    }
  *count = n;
  (void)bad;
}

// ---- insert-only binary search tree
__global__ void k_tree(TNode *root, int nkeys, int range) {
  int tid = blockIdx.x * blockDim.x + threadIdx.x, nt = gridDim.x * blockDim.x;
  for (int i = tid; i < nkeys; i += nt) {
    int key = 1 + (int)(hash32((unsigned)i) % (unsigned)range);
    TNode *n = 0, *cur = root;
    for (;;) {
      if (cur->key == key) {
        free(n);
        break;
      }
      int d = key > cur->key;
      TNode *nx = link(&cur->child[d]);
      if (nx) {
        cur = nx;
        continue;
      }  // then cur->key: a plain load of a published node
      if (!n) {
        n = (TNode *)malloc(sizeof(TNode));
        if (!n) {
          atomicAdd(&d_nulls, 1ull);
          break;
        }
        n->key = key;
        n->child[0] = n->child[1] = 0;
        __threadfence();
      }
      nx = (TNode *)atomicCAS((unsigned long long *)&cur->child[d], 0ull, (unsigned long long)n);
      if (!nx) break;
      cur = nx;  // lost: go on below the winner
      atomicAdd(&d_retries, 1ull);
    }
  }
}
__device__ static void tree_walk(TNode *t, int *out, int cap, int *n, int *bad, int lo, int hi) {
  TNode *stack[64];
  int los[64], his[64], sp = 0;
  stack[sp] = t;
  los[sp] = lo;
  his[sp] = hi;
  sp++;
  while (sp) {
    sp--;
    TNode *c = stack[sp];
    int l = los[sp], h = his[sp];
    if (!c) continue;
    if (c->key <= l || c->key >= h) atomicAdd(bad, 1);
    if (*n < cap) out[*n] = c->key, d_nodes[*n] = c;
    (*n)++;
    if (sp + 2 > 64) {
      atomicAdd(bad, 1000000);
      return;
    }
    stack[sp] = c->child[0];
    los[sp] = l;
    his[sp] = c->key;
    sp++;
    stack[sp] = c->child[1];
    los[sp] = c->key;
    his[sp] = h;
    sp++;
  }
}
__global__ void k_tree_walk(TNode *root, int *out, int cap, int *count, int *bad) {
  int n = 0;
  tree_walk(root->child[1], out, cap, &n, bad, 0, 0x7fffffff);
  *count = n;
}

// ---- placement probe
__global__ void k_place(size_t size, unsigned long long *addr, unsigned *who, unsigned *zero) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned sm;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  char *p = (char *)malloc(size);
  addr[i] = (unsigned long long)p;
  who[i] = sm << 16 | (unsigned)(i / 32);
  unsigned z = 1;
  if (p)
    for (size_t k = 0; k < size && k < 64; k++) z &= p[k] == 0;
  zero[i] = z;
}

static int run_structure(const char *kind, int blocks, int threads, int nkeys) {
  int range = nkeys, cap = nkeys + 16;
  int *d_out, *d_count, *d_bad;
  CK(cudaMalloc(&d_out, cap * sizeof(int)));
  CK(cudaMalloc(&d_count, sizeof(int)));
  CK(cudaMalloc(&d_bad, sizeof(int)));
  CK(cudaMemset(d_bad, 0, sizeof(int)));
  void *root = 0;
  int nb = 1 << 14;
  if (!strcmp(kind, "skiplist")) {
    SNode h = {0, MAXH, 0};
    SNode **lv;
    CK(cudaMalloc(&lv, MAXH * sizeof(SNode *)));
    CK(cudaMemset(lv, 0, MAXH * sizeof(SNode *)));
    h.next = lv;
    CK(cudaMalloc(&root, sizeof h));
    CK(cudaMemcpy(root, &h, sizeof h, cudaMemcpyHostToDevice));
    k_skiplist<<<blocks, threads>>>((SNode *)root, nkeys, range);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    k_sl_walk<<<1, 1>>>((SNode *)root, d_out, cap, d_count, d_bad);
  } else if (!strcmp(kind, "hash")) {
    CK(cudaMalloc(&root, nb * sizeof(HNode *)));
    CK(cudaMemset(root, 0, nb * sizeof(HNode *)));
    k_hash<<<blocks, threads>>>((HNode **)root, nb, nkeys, range);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    k_hash_walk<<<1, 1>>>((HNode **)root, nb, d_out, cap, d_count, d_bad);
  } else {
    TNode t = {0, 0, {0, 0}};
    CK(cudaMalloc(&root, sizeof t));
    CK(cudaMemcpy(root, &t, sizeof t, cudaMemcpyHostToDevice));
    k_tree<<<blocks, threads>>>((TNode *)root, nkeys, range);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    k_tree_walk<<<1, 1>>>((TNode *)root, d_out, cap, d_count, d_bad);
  }
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  int count = 0, bad = 0;
  unsigned long long nulls = 0;
  CK(cudaMemcpy(&count, d_count, sizeof count, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(&bad, d_bad, sizeof bad, cudaMemcpyDeviceToHost));
  CK(cudaMemcpyFromSymbol(&nulls, d_nulls, sizeof nulls));
  std::vector<int> got(std::min(count, cap));
  CK(cudaMemcpy(got.data(), d_out, got.size() * sizeof(int), cudaMemcpyDeviceToHost));
  // the host's answer: the distinct keys
  std::vector<int> want;
  for (int i = 0; i < nkeys; i++) { want.push_back(1 + (int)(hash32((unsigned)i) % (unsigned)range)); }
  std::sort(want.begin(), want.end());
  want.erase(std::unique(want.begin(), want.end()), want.end());
  std::vector<int> sorted = got;
  std::sort(sorted.begin(), sorted.end());
  bool ok = !bad && !nulls && sorted == want && (strcmp(kind, "skiplist") || got == sorted);
  int nfree = std::min(count, cap);
  k_free_nodes<<<(nfree + 255) / 256, 256>>>(nfree, !strcmp(kind, "skiplist"));
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  Digest d;
  for (int k : sorted) d.add(k);
  char extra[96];
  snprintf(extra, sizeof extra, "keys=%d", (int)sorted.size());
  char name[32];
  snprintf(name, sizeof name, "plainreads-%s", kind);
  corpus_result(name, d, extra);
  if (!ok)
    fprintf(stderr, "plainreads %s: WRONG: %d keys found, %zu expected, %d order errors, %llu NULL\n", kind,
            count, want.size(), bad, nulls);
  return ok ? 0 : 1;
}

static int run_place(int blocks, int threads, size_t size) {
  int n = blocks * threads;
  unsigned long long *d_addr;
  unsigned *d_who, *d_zero;
  CK(cudaMalloc(&d_addr, n * 8));
  CK(cudaMalloc(&d_who, n * 4));
  CK(cudaMalloc(&d_zero, n * 4));
  k_place<<<blocks, threads>>>(size, d_addr, d_who, d_zero);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  std::vector<unsigned long long> a(n);
  std::vector<unsigned> w(n), z(n);
  CK(cudaMemcpy(a.data(), d_addr, n * 8, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(w.data(), d_who, n * 4, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(z.data(), d_zero, n * 4, cudaMemcpyDeviceToHost));
  std::vector<std::pair<unsigned long long, unsigned>> v;
  int zeroed = 0, nulls = 0;
  for (int i = 0; i < n; i++) {
    if (!a[i]) {
      nulls++;
      continue;
    }
    v.push_back({a[i], w[i]});
    zeroed += z[i];
  }
  std::sort(v.begin(), v.end());
  unsigned long long minsp = ~0ull;
  int line_sm = 0, line_warp = 0, sector_sm = 0, sector_warp = 0;
  for (size_t i = 1; i < v.size(); i++) {
    unsigned long long sp = v[i].first - v[i - 1].first;
    minsp = std::min(minsp, sp);
    bool same_line = (v[i].first >> 7) == ((v[i - 1].first + size - 1) >> 7);
    bool same_sector = (v[i].first >> 5) == ((v[i - 1].first + size - 1) >> 5);
    bool other_sm = (v[i].second >> 16) != (v[i - 1].second >> 16),
         other_warp = v[i].second != v[i - 1].second;
    line_sm += same_line && other_sm;
    line_warp += same_line && other_warp;
    sector_sm += same_sector && other_sm;
    sector_warp += same_sector && other_warp;
  }
  printf("place size=%zu blocks=%d: min spacing %llu B, first %llx; neighbours sharing a 128 B line: "
         "%d of two SMs, %d of two warps; a 32 B sector: %d of two SMs, %d of two warps; "
         "zeroed %d of %zu; NULL %d\n",
         size, n, minsp, v.empty() ? 0ull : v[0].first, line_sm, line_warp, sector_sm, sector_warp, zeroed,
         v.size(), nulls);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: %s skiplist|hash|tree BLOCKS THREADS KEYS | place BLOCKS THREADS SIZE\n",
            argv[0]);
    return 2;
  }
  CK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, 512ull << 20));
  corpus_heap_init(512ull << 20);
  int blocks = atoi(argv[2]), threads = atoi(argv[3]);
  if (!strcmp(argv[1], "place")) return run_place(blocks, threads, strtoull(argv[4], 0, 0));
  return run_structure(argv[1], blocks, threads, atoi(argv[4]));
}
