/*
 * sem.c — bulk semaphores (Gelado & Garland, PPoPP'19, Algorithms 1 and 2).
 *
 * A bulk semaphore counts units of a resource (C), units expected from
 * batches being produced (E) and units reserved by waiting threads (R), all in
 * one 64-bit word updated by CAS (signal is a single fetch-add, and so is a
 * wait that finds enough units: see dm_sem_take_fast). wait(N, B)
 * either takes N units (DM_SEM_OK) or, when C + E - R < N, tells the caller to
 * produce a batch of B units (DM_SEM_GROW): the caller keeps N of them and
 * later calls signal(B - N, B - N), or signal(0, B - N) if it failed to
 * produce the batch. Otherwise the caller reserves N and spins until units
 * arrive or the expected units can no longer cover the reservations.
 *
 * Locking: lock-free; waiters spin with dm_pause(). E and R are 16 bits:
 * when E would overflow the caller waits for batches in flight instead.
 */
#include "dm_internal.h"

#define SEM_C(w) ((int64_t)dm_semw_c(w))
#define SEM_E(w) dm_semw_e(w)
#define SEM_R(w) dm_semw_r(w)
#define SEM_PACK(c, e, r) dm_semw_pack((c), (e), (r))
#define SEM_FIELD_MAX DM_SEM_EXPECT_MAX
#define SEM_UNIT (1ull << 32)  /* one unit of C */
#define SEM_RUNIT (1ull << 16) /* one unit of R */

DM_FN void dm_sem_init(dm_sem_t *s, uint32_t count) { s->w = SEM_PACK(count, 0, 0); }

DM_FN uint32_t dm_sem_value(const dm_sem_t *s) {
  int64_t c = SEM_C(dm_load64(&s->w));
  return c > 0 ? (uint32_t)c : 0u;
}
DM_FN uint32_t dm_sem_expected(const dm_sem_t *s) { return SEM_E(dm_load64(&s->w)); }
DM_FN uint32_t dm_sem_reserved(const dm_sem_t *s) { return SEM_R(dm_load64(&s->w)); }

enum { SEM_RESERVED = 1 };

/* Fast path: take n units with one fetch-add when there seem to be enough
 * (no CAS retries when thousands of threads take at once); a take that finds
 * too few puts them back. Returns 1 when it took them. `polite`: only when
 * no one waits (R == 0) either, so that a caller trying this ahead of
 * dm_sem_wait does not take the units that reserved waiters wait for. */
DM_HOT int dm_sem_take_fast(dm_sem_t *s, uint32_t n, int polite) {
  uint64_t w = dm_load64(&s->w);
  if (SEM_C(w) < (int64_t)n || (polite && SEM_R(w))) return 0;
  uint64_t old = dm_add64(&s->w, (uint64_t)0 - (uint64_t)n * SEM_UNIT);
  if (SEM_C(old) >= (int64_t)n) return 1;
  dm_add64(&s->w, (uint64_t)n * SEM_UNIT);
  return 0;
}

static DM_COLD int sem_wait_slow(dm_sem_t *s, uint32_t n, uint32_t b);

DM_FN int dm_sem_wait(dm_sem_t *s, uint32_t n, uint32_t b) {
  DM_ASSERT(n > 0 && b >= n);
  if (dm_sem_take_fast(s, n, 0)) return DM_SEM_OK;
  return sem_wait_slow(s, n, b);
}

/* dm_sem_wait when the fast take failed: grow, take or reserve, by CAS. */
static DM_COLD int sem_wait_slow(dm_sem_t *s, uint32_t n, uint32_t b) {
  for (;;) {
    uint64_t w = dm_load64(&s->w);
    int res;
    for (;;) {
      int64_t c = SEM_C(w);
      uint32_t e = SEM_E(w), r = SEM_R(w);
      uint64_t nw;
      if (c + e < (int64_t)r + n && e + (b - n) <= SEM_FIELD_MAX) {
        nw = SEM_PACK(c, e + (b - n), r);
        res = DM_SEM_GROW;
      } else if (c >= (int64_t)n) {
        nw = SEM_PACK(c - n, e, r);
        res = DM_SEM_OK;
      } else if (r + n <= SEM_FIELD_MAX) {
        nw = SEM_PACK(c, e, r + n);
        res = SEM_RESERVED;
      } else {
        dm_pause();
        w = dm_load64(&s->w);
        continue;
      }
      uint64_t old = dm_cas64(&s->w, w, nw);
      if (old == w) break;
      w = old;
    }
    if (res != SEM_RESERVED) return res;
    /* Reserved: wait until units arrive (take them and the reservation in one
     * CAS, so that a unit wakes one waiter, not a herd that drops and retakes
     * its reservations) or until the batches in flight cannot cover every
     * reservation any more (then drop ours and decide again). Backs off
     * exponentially: thousands of threads may wait on one word. */
    uint32_t ns = 64;
    for (;;) {
      dm_pause_ns(ns);
      if (ns < 2048) ns *= 2;
      w = dm_load64(&s->w);
      if (SEM_C(w) >= (int64_t)n) {
        if (dm_cas64(&s->w, w, SEM_PACK(SEM_C(w) - n, SEM_E(w), SEM_R(w) - n)) == w) return DM_SEM_OK;
        continue;
      }
      if ((int64_t)SEM_R(w) > SEM_C(w) + SEM_E(w)) break;
    }
    dm_add64(&s->w, (uint64_t)0 - (uint64_t)n * SEM_RUNIT);
  }
}

/* Add n units and retire b expected ones (E >= b: the caller added them). */
DM_FN void dm_sem_signal(dm_sem_t *s, uint32_t n, uint32_t b) { dm_add64(&s->w, (uint64_t)n * SEM_UNIT - b); }

/* Take n units if C >= n, or (partial) as many as there are, up to n. Never
 * waits. Returns the number of units taken. */
DM_FN uint32_t dm_sem_try_take(dm_sem_t *s, uint32_t n, int partial) {
  uint64_t w = dm_load64(&s->w);
  for (;;) {
    int64_t c = SEM_C(w);
    uint32_t t = c >= (int64_t)n ? n : (partial && c > 0 ? (uint32_t)c : 0);
    if (t == 0) return 0;
    uint64_t old = dm_cas64(&s->w, w, w - (uint64_t)t * SEM_UNIT);
    if (old == w) return t;
    w = old;
  }
}

/* The paper's try-wait: take n units if they are there, else fail. */
DM_FN int dm_sem_try_wait(dm_sem_t *s, uint32_t n) { return dm_sem_try_take(s, n, 0) == n; }
