/*
 * ahead.h — re-linked images read from the cache before their module is
 * loaded (relink.c: dm_relink_read_ahead), kept until the load's re-link
 * takes them (implemented in ahead.c).
 *
 * An image is kept under its fatbin's address and length and the target it
 * was read for; a take hands it over only for the same three (a load for
 * another device re-links as usual), once. Images never taken stay until
 * the process ends (at most DM_AHEAD_MAX, one per fatbin of the program).
 *
 * Locking: none; each slot is claimed, filled and published, then taken,
 * by atomic operations on its state, so that a fork() at any moment leaves
 * the child no lock to wait on and no half-written slot it would take.
 */
#ifndef DM_RELINK_AHEAD_H
#define DM_RELINK_AHEAD_H
#include <stddef.h>
#include "jit_link.h"

#define DM_AHEAD_MAX 64

/* Keep img (sz bytes, malloc'd; the table owns it from now) for the fatbin
 * at body (len bytes) and target t. Returns 0 when every slot is used. */
int dm_ahead_put(const void *body, size_t len, const dm_jit_target_t *t, const void *img, size_t sz);
/* The image kept for (body, len, t), handed over (the caller frees it,
 * dm_relink_free): 1 with *img and *sz set, else 0. */
int dm_ahead_take(const void *body, size_t len, const dm_jit_target_t *t, const void **img, size_t *sz);

#endif
