// skiplist_verify.cu — walk each level (one thread per level), then free.
#include "skiplist.h"

__global__ void sl_walk_levels(SlNode **headp, const unsigned char *expected, int *count,
                               unsigned long long *hash, int *bad) {
  int l = threadIdx.x;
  if (l >= SL_MAXH) return;
  SlNode *n = (*headp)->next[l];
  int prev = 0, c = 0;
  unsigned long long h = 0;
  while (n) {
    if (n->key <= prev || !expected[n->key] || n->height <= l) {
      atomicAdd(bad, 1);
      break;
    }
    prev = n->key;
    c++;
    h += sl_mix((uint32_t)n->key ^ (uint32_t)l);
    n = n->next[l];
  }
  count[l] = c;
  hash[l] = h;
}

__global__ void sl_free_nodes(SlNode **nodes, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    free(nodes[i]->next);
    free(nodes[i]);
  }
}

__global__ void sl_create(SlNode **head) {
  SlNode *h = (SlNode *)malloc(sizeof(SlNode));
  SlNode **lv = (SlNode **)malloc(SL_MAXH * sizeof(SlNode *));
  if (h && lv) {
    h->key = 0;
    h->height = SL_MAXH;
    h->next = lv;
    for (int l = 0; l < SL_MAXH; l++) lv[l] = nullptr;
  }
  *head = h && lv ? h : nullptr;
}

__global__ void sl_destroy(SlNode **head) {
  free((*head)->next);
  free(*head);
}
