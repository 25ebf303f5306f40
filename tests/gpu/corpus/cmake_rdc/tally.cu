// tally.cu — the executable's second unit: device functions main.cu's kernel
// calls (a linked list pushed with CAS, its nodes from device malloc).
#include <cstdint>
struct CrNode {
  unsigned long long key;
  CrNode *next;
};

__device__ bool cr_push(CrNode **head, unsigned long long key) {
  CrNode *n = (CrNode *)malloc(sizeof *n);
  if (!n) return false;
  n->key = key;
  CrNode *old = *head;
  do {
    n->next = old;
  } while ((old = (CrNode *)atomicCAS((unsigned long long *)head, (unsigned long long)n->next,
                                      (unsigned long long)n)) != n->next);
  return true;
}

__device__ unsigned long long cr_drain(CrNode **head) {
  unsigned long long s = 0;
  for (CrNode *n = *head, *next; n; n = next) {
    next = n->next;
    s += n->key;
    free(n);
  }
  *head = nullptr;
  return s;
}
