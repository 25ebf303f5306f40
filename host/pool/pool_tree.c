/*
 * pool_tree.c — intrusive AVL tree (see pool_tree.h for the contract).
 *
 * Nodes carry parent pointers so that neighbours (prev/next) and removal need
 * no search stack. Rebalancing walks from the lowest changed node to the root,
 * recomputing heights and rotating where a balance factor reaches +-2: at most
 * O(log n) steps per insert or remove.
 */
#include "pool_tree.h"

static inline int ht(const dm_tnode_t *n) { return n ? n->height : 0; }

static inline void fix_height(dm_tnode_t *n) {
  int a = ht(n->left), b = ht(n->right);
  n->height = (a > b ? a : b) + 1;
}

static inline int key_cmp(uint64_t k1, uint64_t k2, const dm_tnode_t *n) {
  if (k1 != n->k1) return k1 < n->k1 ? -1 : 1;
  if (k2 != n->k2) return k2 < n->k2 ? -1 : 1;
  return 0;
}

/* Make `nw` take `old`'s place under `parent` (or at the root). */
static void replace_child(dm_tree_t *t, dm_tnode_t *parent, dm_tnode_t *old, dm_tnode_t *nw) {
  if (!parent)
    t->root = nw;
  else if (parent->left == old)
    parent->left = nw;
  else
    parent->right = nw;
  if (nw) nw->parent = parent;
}

static void rotate_left(dm_tree_t *t, dm_tnode_t *x) {
  dm_tnode_t *y = x->right;
  x->right = y->left;
  if (y->left) y->left->parent = x;
  replace_child(t, x->parent, x, y);
  y->left = x;
  x->parent = y;
  fix_height(x);
  fix_height(y);
}

static void rotate_right(dm_tree_t *t, dm_tnode_t *x) {
  dm_tnode_t *y = x->left;
  x->left = y->right;
  if (y->right) y->right->parent = x;
  replace_child(t, x->parent, x, y);
  y->right = x;
  x->parent = y;
  fix_height(x);
  fix_height(y);
}

/* Restore heights and balance from `n` up to the root. */
static void rebalance(dm_tree_t *t, dm_tnode_t *n) {
  while (n) {
    dm_tnode_t *up = n->parent; /* the rotated subtree's new root keeps it */
    fix_height(n);
    int bf = ht(n->left) - ht(n->right);
    if (bf > 1) {
      if (ht(n->left->left) < ht(n->left->right)) rotate_left(t, n->left);
      rotate_right(t, n);
    } else if (bf < -1) {
      if (ht(n->right->right) < ht(n->right->left)) rotate_right(t, n->right);
      rotate_left(t, n);
    }
    n = up;
  }
}

void dm_tree_init(dm_tree_t *t) {
  t->root = NULL;
  t->count = 0;
}

int dm_tree_insert(dm_tree_t *t, dm_tnode_t *n) {
  dm_tnode_t **link = &t->root, *parent = NULL;
  while (*link) {
    parent = *link;
    int c = key_cmp(n->k1, n->k2, parent);
    if (c == 0) return DM_TREE_EEXIST;
    link = c < 0 ? &parent->left : &parent->right;
  }
  n->left = n->right = NULL;
  n->parent = parent;
  n->height = 1;
  *link = n;
  t->count++;
  rebalance(t, parent);
  return DM_TREE_OK;
}

void dm_tree_remove(dm_tree_t *t, dm_tnode_t *n) {
  dm_tnode_t *start;
  if (n->left && n->right) {
    /* Splice in the in-order successor `s` (leftmost of the right subtree,
     * so it has no left child) in place of `n`. */
    dm_tnode_t *s = n->right;
    while (s->left) s = s->left;
    if (s->parent != n) {
      start = s->parent;
      replace_child(t, s->parent, s, s->right);
      s->right = n->right;
      n->right->parent = s;
    } else {
      start = s;
    }
    s->left = n->left;
    n->left->parent = s;
    replace_child(t, n->parent, n, s);
    s->height = n->height;
  } else {
    start = n->parent;
    replace_child(t, n->parent, n, n->left ? n->left : n->right);
  }
  n->left = n->right = n->parent = NULL;
  t->count--;
  rebalance(t, start);
}

dm_tnode_t *dm_tree_find(const dm_tree_t *t, uint64_t k1, uint64_t k2) {
  dm_tnode_t *n = t->root;
  while (n) {
    int c = key_cmp(k1, k2, n);
    if (c == 0) return n;
    n = c < 0 ? n->left : n->right;
  }
  return NULL;
}

dm_tnode_t *dm_tree_ceil(const dm_tree_t *t, uint64_t k1, uint64_t k2) {
  dm_tnode_t *n = t->root, *best = NULL;
  while (n) {
    int c = key_cmp(k1, k2, n);
    if (c == 0) return n;
    if (c < 0) {
      best = n;
      n = n->left;
    } else
      n = n->right;
  }
  return best;
}

dm_tnode_t *dm_tree_floor(const dm_tree_t *t, uint64_t k1, uint64_t k2) {
  dm_tnode_t *n = t->root, *best = NULL;
  while (n) {
    int c = key_cmp(k1, k2, n);
    if (c == 0) return n;
    if (c > 0) {
      best = n;
      n = n->right;
    } else
      n = n->left;
  }
  return best;
}

dm_tnode_t *dm_tree_first(const dm_tree_t *t) {
  dm_tnode_t *n = t->root;
  if (n)
    while (n->left) n = n->left;
  return n;
}

dm_tnode_t *dm_tree_last(const dm_tree_t *t) {
  dm_tnode_t *n = t->root;
  if (n)
    while (n->right) n = n->right;
  return n;
}

dm_tnode_t *dm_tree_next(const dm_tnode_t *n) {
  if (n->right) {
    n = n->right;
    while (n->left) n = n->left;
    return (dm_tnode_t *)n;
  }
  while (n->parent && n == n->parent->right) n = n->parent;
  return n->parent;
}

dm_tnode_t *dm_tree_prev(const dm_tnode_t *n) {
  if (n->left) {
    n = n->left;
    while (n->right) n = n->right;
    return (dm_tnode_t *)n;
  }
  while (n->parent && n == n->parent->left) n = n->parent;
  return n->parent;
}

/* Recursive check of the subtree at `n`; returns its height or -1. */
static int check_node(const dm_tnode_t *n, const dm_tnode_t *parent, const dm_tnode_t *lo,
                      const dm_tnode_t *hi, size_t *count, const char **why) {
  if (!n) return 0;
  if (n->parent != parent) {
    *why = "bad parent link";
    return -1;
  }
  if (lo && key_cmp(n->k1, n->k2, lo) <= 0) {
    *why = "key order";
    return -1;
  }
  if (hi && key_cmp(n->k1, n->k2, hi) >= 0) {
    *why = "key order";
    return -1;
  }
  (*count)++;
  int a = check_node(n->left, n, lo, n, count, why);
  if (a < 0) return -1;
  int b = check_node(n->right, n, n, hi, count, why);
  if (b < 0) return -1;
  if (a - b > 1 || b - a > 1) {
    *why = "AVL balance";
    return -1;
  }
  if (n->height != (a > b ? a : b) + 1) {
    *why = "stored height";
    return -1;
  }
  return n->height;
}

int dm_tree_check(const dm_tree_t *t, const char **why) {
  const char *dummy;
  size_t count = 0;
  if (!why) why = &dummy;
  *why = NULL;
  if (check_node(t->root, NULL, NULL, NULL, &count, why) < 0) return DM_TREE_ECORRUPT;
  if (count != t->count) {
    *why = "node count";
    return DM_TREE_ECORRUPT;
  }
  return DM_TREE_OK;
}
