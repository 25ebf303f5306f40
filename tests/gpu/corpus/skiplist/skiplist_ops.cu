// skiplist_ops.cu — find and insert. Each attempt allocates the node and its
// level array; if the level-0 CAS loses a race both are freed and the insert
// is retried.
#include "skiplist.h"

__device__ static SlNode *load(SlNode **p) { return *(SlNode *volatile *)p; }
__device__ static bool cas(SlNode **p, SlNode *expect, SlNode *want) {
  return atomicCAS((unsigned long long *)p, (unsigned long long)expect, (unsigned long long)want) ==
         (unsigned long long)expect;
}
__device__ static int key_of(const SlNode *n) { return *(volatile const int *)&n->key; }

__device__ bool sl_find(SlNode *head, int key, SlNode **preds, SlNode **succs) {
  SlNode *pred = head;
  bool found = false;
  for (int l = SL_MAXH - 1; l >= 0; l--) {
    SlNode *cur = load(&pred->next[l]);
    while (cur && key_of(cur) < key) {
      pred = cur;
      cur = load(&cur->next[l]);
    }
    preds[l] = pred;
    succs[l] = cur;
    if (cur && key_of(cur) == key) found = true;
  }
  return found;
}

__device__ int sl_insert(SlNode *head, int key, SlStats *st, SlNode **made) {
  SlNode *preds[SL_MAXH], *succs[SL_MAXH];
  int h = sl_height(key);
  for (;;) {
    if (sl_find(head, key, preds, succs)) {
      atomicAdd(&st->dups, 1ull);
      return 0;
    }
    SlNode *n = (SlNode *)malloc(sizeof(SlNode));
    SlNode **lv = (SlNode **)malloc(h * sizeof(SlNode *));
    if (!n || !lv) {
      free(n);
      free(lv);
      atomicAdd(&st->nulls, 1ull);
      return -1;
    }
    n->key = key;
    n->height = h;
    n->next = lv;
    for (int l = 0; l < h; l++) lv[l] = succs[l];
    __threadfence();
    if (!cas(&preds[0]->next[0], succs[0], n)) {
      free(lv);
      free(n);
      atomicAdd(&st->retries, 1ull);
      continue;
    }
    for (int l = 1; l < h; l++) {
      for (;;) {
        *(SlNode *volatile *)&lv[l] = succs[l];
        __threadfence();
        if (cas(&preds[l]->next[l], succs[l], n)) break;
        sl_find(head, key, preds, succs);
      }
    }
    *made = n;
    return 1;
  }
}

__global__ void sl_insert_all(SlNode **headp, int nkeys, int range, SlNode **nodes, int *nnodes,
                              SlStats *st) {
  SlNode *head = *headp;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < nkeys; i += gridDim.x * blockDim.x) {
    SlNode *n = nullptr;
    if (sl_insert(head, sl_key(i, range), st, &n) == 1) nodes[atomicAdd(nnodes, 1)] = n;
  }
}
