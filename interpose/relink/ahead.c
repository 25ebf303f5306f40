/*
 * ahead.c — the images read ahead (implements ahead.h).
 *
 * Locking: a slot's state goes FREE -> FILLING (claimed by a put's CAS),
 * -> READY (published with a release store once filled), -> TAKEN (a take's
 * CAS, after it compared the slot's key under an acquire load). No slot
 * returns to FREE: a process reads its program's fatbins ahead once.
 */
#include "ahead.h"

#include <stdint.h>
#include <string.h>

enum { SLOT_FREE, SLOT_FILLING, SLOT_READY, SLOT_TAKEN };

typedef struct {
  int state; /* SLOT_*, atomic */
  const void *body;
  size_t len;
  dm_jit_target_t target;
  const void *img;
  size_t sz;
} ahead_slot_t;

static ahead_slot_t slots[DM_AHEAD_MAX];

static int same_target(const dm_jit_target_t *a, const dm_jit_target_t *b) {
  return a->cc_major == b->cc_major && a->cc_minor == b->cc_minor && a->driver_version == b->driver_version &&
         !strcmp(a->driver_id, b->driver_id);
}

int dm_ahead_put(const void *body, size_t len, const dm_jit_target_t *t, const void *img, size_t sz) {
  for (int i = 0; i < DM_AHEAD_MAX; i++) {
    ahead_slot_t *s = &slots[i];
    int free_ = SLOT_FREE;
    if (!__atomic_compare_exchange_n(&s->state, &free_, SLOT_FILLING, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
      continue;
    s->body = body;
    s->len = len;
    s->target = *t;
    s->img = img;
    s->sz = sz;
    __atomic_store_n(&s->state, SLOT_READY, __ATOMIC_RELEASE);
    return 1;
  }
  return 0;
}

int dm_ahead_take(const void *body, size_t len, const dm_jit_target_t *t, const void **img, size_t *sz) {
  for (int i = 0; i < DM_AHEAD_MAX; i++) {
    ahead_slot_t *s = &slots[i];
    int st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
    if (st == SLOT_FREE) return 0; /* slots fill in order: none beyond */
    if (st != SLOT_READY || s->body != body || s->len != len || !same_target(&s->target, t)) continue;
    int ready = SLOT_READY;
    if (!__atomic_compare_exchange_n(&s->state, &ready, SLOT_TAKEN, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
      continue; /* another load took it */
    *img = s->img;
    *sz = s->sz;
    return 1;
  }
  return 0;
}
