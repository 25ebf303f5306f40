/*
 * pool_tree.h — intrusive AVL tree keyed by a pair of 64-bit integers.
 *
 * The MAM pool keeps two of these (paper, section III.A): all segments keyed
 * by (address, 0), and free segments keyed by (size, address) for best fit.
 * Nodes are embedded in the caller's structs (container_of style); the tree
 * never allocates. Every operation is O(log n); the tree stays AVL-balanced
 * (subtree heights of siblings differ by at most one).
 *
 * Keys: (k1, k2) ordered lexicographically; a key must be unique in a tree.
 * A node's key must not change while the node is in a tree.
 *
 * Locking: none. The tree is plain data; the owner (the pool) serializes all
 * access with its mutex.
 *
 * Error convention: functions that can fail return 0 on success and a
 * positive DM_TREE_E* code otherwise; lookups return NULL when nothing fits.
 */
#ifndef DM_POOL_TREE_H
#define DM_POOL_TREE_H
#include <stddef.h>
#include <stdint.h>

enum { DM_TREE_OK = 0, DM_TREE_EEXIST = 1, DM_TREE_ECORRUPT = 2 };

typedef struct dm_tnode {
  struct dm_tnode *left, *right, *parent;
  uint64_t k1, k2;
  int height; /* 1 for a leaf */
} dm_tnode_t;

typedef struct dm_tree {
  dm_tnode_t *root;
  size_t count;
} dm_tree_t;

#define DM_TREE_ENTRY(node, type, member) ((type *)((char *)(node)-offsetof(type, member)))

void dm_tree_init(dm_tree_t *t);
/* Insert `n` with n->k1, n->k2 already set. DM_TREE_EEXIST if the key is
 * present (the tree is unchanged). */
int dm_tree_insert(dm_tree_t *t, dm_tnode_t *n);
/* Remove `n`, which must be in `t`. */
void dm_tree_remove(dm_tree_t *t, dm_tnode_t *n);

dm_tnode_t *dm_tree_find(const dm_tree_t *t, uint64_t k1, uint64_t k2);
/* Smallest node with key >= (k1, k2) (best fit when keyed by size). */
dm_tnode_t *dm_tree_ceil(const dm_tree_t *t, uint64_t k1, uint64_t k2);
/* Largest node with key <= (k1, k2) (the segment holding an address). */
dm_tnode_t *dm_tree_floor(const dm_tree_t *t, uint64_t k1, uint64_t k2);
dm_tnode_t *dm_tree_first(const dm_tree_t *t);
dm_tnode_t *dm_tree_last(const dm_tree_t *t);
dm_tnode_t *dm_tree_next(const dm_tnode_t *n);
dm_tnode_t *dm_tree_prev(const dm_tnode_t *n);

/* Check every invariant: parent links, strict key order, stored heights,
 * AVL balance, and that `count` matches the nodes reachable from the root.
 * Returns 0 or DM_TREE_ECORRUPT with *why (if not NULL) set to a static
 * description. O(n): for tests and debug builds. */
int dm_tree_check(const dm_tree_t *t, const char **why);

#endif
