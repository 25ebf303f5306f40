/*
 * owners.c — what the launch path knows: owner records (a CUmodule or a
 * CUlibrary, whether it holds devmalloc, the contexts it is bound in) and the
 * launch cache (function-or-kernel handle, context) -> verdict, which makes
 * every launch after the first of a kernel in a context one hash lookup.
 *
 * May call: nothing of the shim (libc). Called by: bind.c, the hook
 * handlers, fork.c.
 *
 * Locking:
 *   - the launch cache has its own rwlock: launches take it shared; puts and
 *     purges take it exclusive. Purges (unload, context teardown) clear
 *     whole groups; handles the driver may reuse never outlive their owner.
 *   - owner records are guarded by dm_owner_lock() (a mutex), which callers
 *     take around every dm_owner_* call; the lock order is owner lock, then
 *     cache lock.
 */
#include "shim.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* --- launch cache ---------------------------------------------------------- */
typedef struct {
  const void *f;
  CUcontext ctx;
  const void *owner;
  dm_verdict_t v;
} dm_centry_t;

static pthread_rwlock_t g_clock = PTHREAD_RWLOCK_INITIALIZER;
static dm_centry_t *g_tab;
static size_t g_cap, g_used;

static size_t hash2(const void *f, CUcontext ctx) {
  uint64_t x =
      (uint64_t)(uintptr_t)f * 0x9E3779B97F4A7C15ull ^ (uint64_t)(uintptr_t)ctx * 0xC2B2AE3D27D4EB4Full;
  return (size_t)(x ^ (x >> 29));
}

static dm_centry_t *slot(dm_centry_t *tab, size_t cap, const void *f, CUcontext ctx) {
  size_t i = hash2(f, ctx) & (cap - 1);
  while (tab[i].f && !(tab[i].f == f && tab[i].ctx == ctx)) i = (i + 1) & (cap - 1);
  return &tab[i];
}

int dm_lcache_get(const void *f, CUcontext ctx, dm_verdict_t *v) {
  int hit = 0;
  pthread_rwlock_rdlock(&g_clock);
  if (g_tab) {
    dm_centry_t *e = slot(g_tab, g_cap, f, ctx);
    if (e->f) {
      *v = e->v;
      hit = 1;
    }
  }
  pthread_rwlock_unlock(&g_clock);
  return hit;
}

static int rehash(size_t cap, int (*keep)(const dm_centry_t *, const void *), const void *arg) {
  dm_centry_t *n = calloc(cap, sizeof *n);
  if (!n) return -1;
  size_t used = 0;
  for (size_t i = 0; i < g_cap; i++)
    if (g_tab[i].f && (!keep || keep(&g_tab[i], arg))) {
      *slot(n, cap, g_tab[i].f, g_tab[i].ctx) = g_tab[i];
      used++;
    }
  free(g_tab);
  g_tab = n;
  g_cap = cap;
  g_used = used;
  return 0;
}

void dm_lcache_put(const void *f, CUcontext ctx, dm_verdict_t v, const void *owner) {
  if (!f) return;
  pthread_rwlock_wrlock(&g_clock);
  if (!g_tab) {
    g_tab = calloc(256, sizeof *g_tab);
    g_cap = g_tab ? 256 : 0;
  }
  if (g_tab && 2 * (g_used + 1) > g_cap) rehash(2 * g_cap, NULL, NULL);
  if (g_tab && 2 * (g_used + 1) <= g_cap) {
    dm_centry_t *e = slot(g_tab, g_cap, f, ctx);
    if (!e->f) g_used++;
    *e = (dm_centry_t){f, ctx, owner, v};
  }
  pthread_rwlock_unlock(&g_clock);
}

static int not_ctx(const dm_centry_t *e, const void *ctx) { return e->ctx != ctx; }
static int not_owner(const dm_centry_t *e, const void *o) { return e->owner != o; }

void dm_lcache_purge_ctx(CUcontext ctx) {
  pthread_rwlock_wrlock(&g_clock);
  if (g_tab) rehash(g_cap, not_ctx, ctx);
  pthread_rwlock_unlock(&g_clock);
}

void dm_lcache_purge_owner(const void *owner) {
  pthread_rwlock_wrlock(&g_clock);
  if (g_tab) rehash(g_cap, not_owner, owner);
  pthread_rwlock_unlock(&g_clock);
}

void dm_lcache_clear(void) {
  pthread_rwlock_wrlock(&g_clock);
  free(g_tab);
  g_tab = NULL;
  g_cap = g_used = 0;
  pthread_rwlock_unlock(&g_clock);
}

size_t dm_lcache_size(void) {
  pthread_rwlock_rdlock(&g_clock);
  size_t n = g_used;
  pthread_rwlock_unlock(&g_clock);
  return n;
}

/* --- owner records ----------------------------------------------------------- */
struct dm_owner {
  dm_owner_kind_t kind;
  const void *handle;
  dm_has_t has;
  int loaded;    /* recorded by a load hook (else met at launch) */
  CUcontext ctx; /* modules: context loaded in */
  char name[96];
  CUcontext *bound; /* contexts whose heap this owner points to */
  size_t nbound, capbound;
};

static pthread_mutex_t g_olock = PTHREAD_MUTEX_INITIALIZER;
static dm_owner_t **g_owners;
static size_t g_nowners, g_capowners;

void dm_owner_lock(void) { pthread_mutex_lock(&g_olock); }
void dm_owner_fork(dm_fork_phase_t ph) { dm_mutex_fork(&g_olock, ph); }
void dm_launch_cache_fork(dm_fork_phase_t ph) {
  /* a writer's rwlock cannot be unlocked from the child's new thread id */
  if (ph == DM_FORK_TAKE)
    pthread_rwlock_wrlock(&g_clock);
  else if (ph == DM_FORK_PARENT)
    pthread_rwlock_unlock(&g_clock);
  else
    pthread_rwlock_init(&g_clock, NULL);
}
void dm_owner_unlock(void) { pthread_mutex_unlock(&g_olock); }

dm_owner_t *dm_owner_get(dm_owner_kind_t kind, const void *handle, int create) {
  for (size_t i = 0; i < g_nowners; i++)
    if (g_owners[i]->handle == handle && g_owners[i]->kind == kind) return g_owners[i];
  if (!create) return NULL;
  if (g_nowners == g_capowners) {
    size_t cap = g_capowners ? 2 * g_capowners : 16;
    dm_owner_t **n = realloc(g_owners, cap * sizeof *n);
    if (!n) return NULL;
    g_owners = n;
    g_capowners = cap;
  }
  dm_owner_t *o = calloc(1, sizeof *o);
  if (!o) return NULL;
  o->kind = kind;
  o->handle = handle;
  o->has = DM_HAS_UNKNOWN;
  g_owners[g_nowners++] = o;
  return o;
}

static void drop(size_t i) {
  dm_owner_t *o = g_owners[i];
  dm_lcache_purge_owner(o->handle);
  free(o->bound);
  free(o);
  g_owners[i] = g_owners[--g_nowners];
}

void dm_owner_remove(const void *handle) {
  for (size_t i = 0; i < g_nowners; i++)
    if (g_owners[i]->handle == handle) {
      drop(i);
      return;
    }
  dm_lcache_purge_owner(handle);
}

void dm_owner_forget_ctx(CUcontext ctx) {
  for (size_t i = 0; i < g_nowners;) {
    dm_owner_t *o = g_owners[i];
    for (size_t j = 0; j < o->nbound;) {
      if (o->bound[j] == ctx)
        o->bound[j] = o->bound[--o->nbound];
      else
        j++;
    }
    /* modules die with their context; modules met only at launch may be a
     * library's per-context module, of this context or not: forget them */
    if (o->kind == DM_OWNER_MODULE && (!o->loaded || o->ctx == ctx)) {
      drop(i);
      continue;
    }
    i++;
  }
  dm_lcache_purge_ctx(ctx);
}

void dm_owner_forget_derived(void) {
  for (size_t i = 0; i < g_nowners;) {
    if (!g_owners[i]->loaded) {
      drop(i);
      continue;
    }
    i++;
  }
}

/* A module or library is being unloaded: forget it and the records met only
 * at launch (they may be its per-context modules). Takes the owner lock. */
void dm_owner_unloaded(const void *handle) {
  dm_owner_lock();
  dm_owner_remove(handle);
  dm_owner_forget_derived();
  dm_owner_unlock();
}

dm_has_t dm_owner_has(const dm_owner_t *o) { return o->has; }
void dm_owner_set_has(dm_owner_t *o, dm_has_t h) { o->has = h; }
void dm_owner_set_loaded(dm_owner_t *o, const char *what) {
  o->loaded = 1;
  if (what) {
    strncpy(o->name, what, sizeof o->name - 1);
    o->name[sizeof o->name - 1] = 0;
  }
}
void dm_owner_set_ctx(dm_owner_t *o, CUcontext ctx) { o->ctx = ctx; }
const char *dm_owner_name(const dm_owner_t *o) { return o->name[0] ? o->name : "?"; }

int dm_owner_bound_in(const dm_owner_t *o, CUcontext ctx) {
  for (size_t j = 0; j < o->nbound; j++)
    if (o->bound[j] == ctx) return 1;
  return 0;
}

void dm_owner_set_bound(dm_owner_t *o, CUcontext ctx) {
  if (dm_owner_bound_in(o, ctx)) return;
  if (o->nbound == o->capbound) {
    size_t cap = o->capbound ? 2 * o->capbound : 4;
    CUcontext *n = realloc(o->bound, cap * sizeof *n);
    if (!n) return;
    o->bound = n;
    o->capbound = cap;
  }
  o->bound[o->nbound++] = ctx;
}

size_t dm_owner_count(void) { return g_nowners; }

#ifdef DM_TESTING
void dm_owners_reset_for_tests(void) {
  while (g_nowners) drop(0);
  dm_lcache_clear();
}
#endif
