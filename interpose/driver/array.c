/*
 * array.c — the doubling arrays of the shim's tables (context table, trace
 * contexts): one growth rule.
 *
 * May call: libc only.
 *
 * Locking: none; the caller holds the lock of the table it grows.
 */
#include "shim.h"

#include <stdlib.h>

int dm_grow_array(void **arr, size_t *cap, size_t n, size_t size) {
  if (n < *cap) return 0;
  size_t c = *cap ? 2 * *cap : 8;
  void *p = realloc(*arr, c * size);
  if (!p) return -1;
  *arr = p;
  *cap = c;
  return 0;
}
