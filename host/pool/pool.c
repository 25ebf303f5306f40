/*
 * pool.c — the MAM pool core (contract and locking rules in pool.h).
 *
 * Data: chunks (a list; few), segments (host structs, recycled through a
 * free list fed by blocks of DM_POOL_SEG_BLOCK), and two AVL trees over the
 * segments (pool_tree.h): by_addr holds all of them keyed (address, 0),
 * by_size holds the free ones keyed (size, address).
 *
 * Invariants (checked by dm_pool_check): the segments of a chunk tile it
 * exactly, in address order; no two free segments of one chunk are adjacent
 * (free merges them); a segment is in by_size iff it is free; addresses and
 * sizes are multiples of the alignment.
 */
#include "pool.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "pool_tree.h"

#define DM_POOL_MIN_ALIGN 256u
#define DM_POOL_DEFAULT_GRANULE (2u << 20)
#define DM_POOL_SEG_BLOCK 1024
#define DM_POOL_AUTO_MIN_RESERVE ((size_t)256 << 20)
#define DM_POOL_AUTO_MIN_GROW ((size_t)64 << 20)
#define DM_POOL_AUTO_TRIES 48

typedef struct dm_chunk {
  uint64_t raw_base; /* as the source gave it */
  size_t raw_bytes;
  uint64_t base; /* aligned usable range */
  uint64_t bytes;
  struct dm_chunk *next;
} dm_chunk_t;

typedef struct dm_seg {
  dm_tnode_t by_addr; /* k1 = address */
  dm_tnode_t by_size; /* k1 = size, k2 = address; only while free */
  uint64_t size;
  uint64_t req; /* requested bytes while used */
  dm_chunk_t *chunk;
  struct dm_seg *next_free; /* host free list of segment structs */
  int used;
} dm_seg_t;

#define SEG_ADDR(s) ((s)->by_addr.k1)

typedef struct seg_block {
  struct seg_block *next;
  dm_seg_t segs[DM_POOL_SEG_BLOCK];
} seg_block_t;

struct dm_pool {
  pthread_mutex_t lock;
  dm_tree_t by_addr, by_size;
  dm_chunk_t *chunks;
  seg_block_t *blocks;
  dm_seg_t *seg_free;
  dm_pool_config_t cfg;
  dm_pool_source_t src;
  size_t align;
  size_t granule;
  size_t grow_bytes; /* effective, set when the first chunk is made */
  int started;       /* first-chunk policy has run */
  dm_pool_stats_t st;
};

/* ---- small helpers ---------------------------------------------------- */

static inline uint64_t round_up(uint64_t x, uint64_t a) { return (x + a - 1) & ~(a - 1); }
static inline size_t round_up_any(size_t x, size_t g) { return (x + g - 1) / g * g; }
static inline size_t round_down_any(size_t x, size_t g) { return x / g * g; }
static inline int is_pow2(size_t x) { return x && !(x & (x - 1)); }

static void report_default(void *ctx, const char *line) {
  (void)ctx;
  fprintf(stderr, "%s\n", line);
}

static void report(dm_pool_t *p, const char *line) {
  if (p->cfg.report)
    p->cfg.report(p->cfg.report_ctx, line);
  else
    report_default(NULL, line);
}

static dm_seg_t *seg_new(dm_pool_t *p) {
  if (!p->seg_free) {
    seg_block_t *b = malloc(sizeof *b);
    if (!b) return NULL;
    b->next = p->blocks;
    p->blocks = b;
    for (int i = DM_POOL_SEG_BLOCK - 1; i >= 0; i--) {
      b->segs[i].next_free = p->seg_free;
      p->seg_free = &b->segs[i];
    }
  }
  dm_seg_t *s = p->seg_free;
  p->seg_free = s->next_free;
  memset(s, 0, sizeof *s);
  return s;
}

static void seg_put(dm_pool_t *p, dm_seg_t *s) {
  s->next_free = p->seg_free;
  p->seg_free = s;
}

static void size_tree_insert(dm_pool_t *p, dm_seg_t *s) {
  s->by_size.k1 = s->size;
  s->by_size.k2 = SEG_ADDR(s);
  dm_tree_insert(&p->by_size, &s->by_size); /* keys are unique: no fail */
}

/* A new free segment: into both trees, counted. */
static void free_seg_add(dm_pool_t *p, dm_seg_t *s) {
  dm_tree_insert(&p->by_addr, &s->by_addr);
  size_tree_insert(p, s);
  p->st.free_segments++;
}

static dm_seg_t *best_fit(dm_pool_t *p, uint64_t need) {
  dm_tnode_t *n = dm_tree_ceil(&p->by_size, need, 0);
  return n ? DM_TREE_ENTRY(n, dm_seg_t, by_size) : NULL;
}

/* ---- chunks ----------------------------------------------------------- */

/* Obtain a chunk of `bytes` and add it as one free segment. 0 or error. */
static int add_chunk(dm_pool_t *p, size_t bytes) {
  uint64_t raw = 0;
  if (p->src.chunk_alloc(p->src.ctx, bytes, &raw) != 0) {
    p->st.chunk_refusals++;
    return DM_POOL_ENOMEM;
  }
  uint64_t base = round_up(raw, p->align);
  uint64_t end = (raw + bytes) & ~(uint64_t)(p->align - 1);
  dm_chunk_t *c = malloc(sizeof *c);
  dm_seg_t *s = c ? seg_new(p) : NULL;
  if (!s || end <= base) {
    free(c);
    p->src.chunk_free(p->src.ctx, raw, bytes);
    return DM_POOL_ENOMEM;
  }
  *c =
      (dm_chunk_t){.raw_base = raw, .raw_bytes = bytes, .base = base, .bytes = end - base, .next = p->chunks};
  p->chunks = c;
  s->by_addr.k1 = base;
  s->size = c->bytes;
  s->chunk = c;
  free_seg_add(p, s);
  p->st.chunks_obtained++;
  p->st.chunks++;
  p->st.chunk_bytes += c->bytes;
  return DM_POOL_OK;
}

/* Release every entirely free chunk. Returns bytes released. */
static size_t trim_locked(dm_pool_t *p) {
  size_t released = 0;
  dm_chunk_t **link = &p->chunks;
  while (*link) {
    dm_chunk_t *c = *link;
    dm_tnode_t *n = dm_tree_find(&p->by_addr, c->base, 0);
    dm_seg_t *s = n ? DM_TREE_ENTRY(n, dm_seg_t, by_addr) : NULL;
    if (s && !s->used && s->size == c->bytes) {
      dm_tree_remove(&p->by_size, &s->by_size);
      dm_tree_remove(&p->by_addr, &s->by_addr);
      seg_put(p, s);
      *link = c->next;
      p->src.chunk_free(p->src.ctx, c->raw_base, c->raw_bytes);
      p->st.chunks_released++;
      p->st.chunks--;
      p->st.chunk_bytes -= c->bytes;
      p->st.free_segments--;
      released += c->raw_bytes;
      free(c);
    } else {
      link = &c->next;
    }
  }
  return released;
}

/* The first chunk: the configured size, or (auto) the largest the source
 * gives below avail() - reserve, trying sizes 1/8 smaller each time. */
static void first_chunk(dm_pool_t *p, uint64_t need) {
  size_t g = p->granule;
  size_t min = round_up_any(need, g);
  if (p->cfg.initial_bytes) {
    size_t sz = round_up_any(p->cfg.initial_bytes, g);
    if (sz < min) sz = min;
    add_chunk(p, sz);
    p->grow_bytes = p->cfg.grow_bytes ? p->cfg.grow_bytes : sz;
    return;
  }
  size_t avail = p->src.avail ? p->src.avail(p->src.ctx) : 0;
  size_t reserve = p->cfg.auto_reserve;
  if (!reserve) {
    reserve = avail / 32;
    if (reserve < DM_POOL_AUTO_MIN_RESERVE) reserve = DM_POOL_AUTO_MIN_RESERVE;
  }
  if (reserve > avail / 2) reserve = avail / 2;
  size_t sz = round_down_any(avail - reserve, g);
  size_t got = 0;
  for (int i = 0; i < DM_POOL_AUTO_TRIES && sz >= min && sz >= g; i++) {
    if (add_chunk(p, sz) == DM_POOL_OK) {
      got = sz;
      break;
    }
    sz = round_down_any(sz - sz / 8, g);
  }
  p->grow_bytes = p->cfg.grow_bytes ? p->cfg.grow_bytes : got / 8;
  if (p->grow_bytes < DM_POOL_AUTO_MIN_GROW) p->grow_bytes = DM_POOL_AUTO_MIN_GROW;
}

/* Grow until a free segment of `need` bytes exists; returns it or NULL. */
static dm_seg_t *grow_and_fit(dm_pool_t *p, uint64_t need) {
  dm_seg_t *s;
  if (!p->started) {
    p->started = 1;
    first_chunk(p, need);
    if ((s = best_fit(p, need))) return s;
  }
  size_t g = p->granule;
  size_t min = round_up_any(need, g);
  size_t sz = p->grow_bytes > min ? round_up_any(p->grow_bytes, g) : min;
  for (;;) {
    if (add_chunk(p, sz) == DM_POOL_OK && (s = best_fit(p, need))) return s;
    if (sz == min) return NULL;
    sz = round_up_any(sz / 2, g);
    if (sz < min) sz = min;
  }
}

/* Mark free segment `s` used for `need` bytes, splitting off the rest. */
static void take(dm_pool_t *p, dm_seg_t *s, uint64_t need, size_t req) {
  dm_tree_remove(&p->by_size, &s->by_size);
  p->st.free_segments--;
  if (s->size > need) {
    dm_seg_t *r = seg_new(p);
    if (r) { /* without host memory for the split, hand out all of s */
      r->by_addr.k1 = SEG_ADDR(s) + need;
      r->size = s->size - need;
      r->chunk = s->chunk;
      s->size = need;
      free_seg_add(p, r);
      p->st.splits++;
    }
  }
  s->used = 1;
  s->req = req;
  p->st.allocs++;
  p->st.used_segments++;
  p->st.used_bytes += s->size;
  p->st.requested_bytes += req;
  if (p->st.used_bytes > p->st.peak_used_bytes) p->st.peak_used_bytes = p->st.used_bytes;
}

/* ---- public API ------------------------------------------------------- */

int dm_pool_create(const dm_pool_config_t *cfg, const dm_pool_source_t *src, dm_pool_t **out) {
  if (!cfg || !src || !out || !src->chunk_alloc || !src->chunk_free) return DM_POOL_EINVAL;
  size_t align = cfg->alignment ? cfg->alignment : DM_POOL_MIN_ALIGN;
  size_t granule = cfg->granule ? cfg->granule : DM_POOL_DEFAULT_GRANULE;
  if (!is_pow2(align) || align < DM_POOL_MIN_ALIGN || granule % align) return DM_POOL_EINVAL;
  /* Sizes are rounded up to the granule: one that would wrap is refused. */
  if (cfg->initial_bytes > SIZE_MAX - granule || cfg->grow_bytes > SIZE_MAX - granule) return DM_POOL_EINVAL;
  dm_pool_t *p = calloc(1, sizeof *p);
  if (!p) return DM_POOL_ENOMEM;
  if (pthread_mutex_init(&p->lock, NULL) != 0) {
    free(p);
    return DM_POOL_ENOMEM;
  }
  p->cfg = *cfg;
  p->src = *src;
  p->align = align;
  p->granule = granule;
  dm_tree_init(&p->by_addr);
  dm_tree_init(&p->by_size);
  *out = p;
  return DM_POOL_OK;
}

void dm_pool_fork_lock(dm_pool_t *p, int take) {
  if (take > 0)
    pthread_mutex_lock(&p->lock);
  else if (take == 0)
    pthread_mutex_unlock(&p->lock);
  else
    pthread_mutex_init(&p->lock, NULL);
}

void dm_pool_destroy(dm_pool_t *p) {
  if (!p) return;
  while (p->chunks) {
    dm_chunk_t *c = p->chunks;
    p->chunks = c->next;
    p->src.chunk_free(p->src.ctx, c->raw_base, c->raw_bytes);
    free(c);
  }
  while (p->blocks) {
    seg_block_t *b = p->blocks;
    p->blocks = b->next;
    free(b);
  }
  pthread_mutex_destroy(&p->lock);
  free(p);
}

int dm_pool_alloc(dm_pool_t *p, size_t bytes, uint64_t *addr) {
  if (!p || !addr || bytes == 0) return DM_POOL_EINVAL;
  if (bytes > (SIZE_MAX >> 2)) return DM_POOL_ENOMEM;
  uint64_t need = round_up(bytes, p->align);
  pthread_mutex_lock(&p->lock);
  dm_seg_t *s = best_fit(p, need);
  if (!s) s = grow_and_fit(p, need);
  if (!s && trim_locked(p) > 0) s = grow_and_fit(p, need);
  if (!s) {
    p->st.failed_allocs++;
    pthread_mutex_unlock(&p->lock);
    return DM_POOL_ENOMEM;
  }
  take(p, s, need, bytes);
  *addr = SEG_ADDR(s);
  pthread_mutex_unlock(&p->lock);
  return DM_POOL_OK;
}

/* Segment holding `addr`, or NULL when it is in no chunk. */
static dm_seg_t *seg_at(dm_pool_t *p, uint64_t addr) {
  dm_tnode_t *n = dm_tree_floor(&p->by_addr, addr, 0);
  if (!n) return NULL;
  dm_seg_t *s = DM_TREE_ENTRY(n, dm_seg_t, by_addr);
  return addr - SEG_ADDR(s) < s->size ? s : NULL;
}

int dm_pool_free(dm_pool_t *p, uint64_t addr, size_t *bytes) {
  if (!p) return DM_POOL_EINVAL;
  char msg[200];
  pthread_mutex_lock(&p->lock);
  dm_seg_t *s = seg_at(p, addr);
  if (!s) {
    pthread_mutex_unlock(&p->lock);
    return DM_POOL_ENOTOURS;
  }
  if (!s->used || SEG_ADDR(s) != addr) {
    int dbl = !s->used;
    if (dbl)
      p->st.double_frees++;
    else
      p->st.invalid_frees++;
    snprintf(msg, sizeof msg,
             "devmalloc pool%s%s: %s 0x%" PRIx64 " (in %s segment 0x%" PRIx64 " of %" PRIu64
             " bytes); ignored",
             p->cfg.name ? " " : "", p->cfg.name ? p->cfg.name : "",
             dbl ? "double free of" : "free of a pointer inside an allocation,", addr, dbl ? "free" : "used",
             SEG_ADDR(s), s->size);
    pthread_mutex_unlock(&p->lock);
    report(p, msg);
    return dbl ? DM_POOL_EDOUBLE : DM_POOL_EINVAL;
  }
  if (bytes) *bytes = s->req;
  s->used = 0;
  p->st.frees++;
  p->st.used_segments--;
  p->st.used_bytes -= s->size;
  p->st.requested_bytes -= s->req;
  s->req = 0;
  p->st.free_segments++;
  dm_tnode_t *n = dm_tree_prev(&s->by_addr);
  dm_seg_t *o = n ? DM_TREE_ENTRY(n, dm_seg_t, by_addr) : NULL;
  if (o && !o->used && o->chunk == s->chunk) {
    dm_tree_remove(&p->by_size, &o->by_size);
    dm_tree_remove(&p->by_addr, &s->by_addr);
    o->size += s->size;
    seg_put(p, s);
    s = o;
    p->st.merges++;
    p->st.free_segments--;
  }
  n = dm_tree_next(&s->by_addr);
  o = n ? DM_TREE_ENTRY(n, dm_seg_t, by_addr) : NULL;
  if (o && !o->used && o->chunk == s->chunk) {
    dm_tree_remove(&p->by_size, &o->by_size);
    dm_tree_remove(&p->by_addr, &o->by_addr);
    s->size += o->size;
    seg_put(p, o);
    p->st.merges++;
    p->st.free_segments--;
  }
  size_tree_insert(p, s);
  pthread_mutex_unlock(&p->lock);
  return DM_POOL_OK;
}

int dm_pool_contains(dm_pool_t *p, uint64_t addr) {
  pthread_mutex_lock(&p->lock);
  int r = seg_at(p, addr) != NULL;
  pthread_mutex_unlock(&p->lock);
  return r;
}

size_t dm_pool_free_bytes(dm_pool_t *p) {
  pthread_mutex_lock(&p->lock);
  size_t r = p->st.chunk_bytes - p->st.used_bytes;
  pthread_mutex_unlock(&p->lock);
  return r;
}

size_t dm_pool_trim(dm_pool_t *p) {
  pthread_mutex_lock(&p->lock);
  size_t r = trim_locked(p);
  pthread_mutex_unlock(&p->lock);
  return r;
}

size_t dm_pool_alignment(const dm_pool_t *p) { return p->align; }

void dm_pool_get_stats(dm_pool_t *p, dm_pool_stats_t *out) {
  pthread_mutex_lock(&p->lock);
  *out = p->st;
  dm_seg_t *s = NULL;
  dm_tnode_t *n = dm_tree_last(&p->by_size);
  if (n) s = DM_TREE_ENTRY(n, dm_seg_t, by_size);
  out->largest_free = s ? s->size : 0;
  pthread_mutex_unlock(&p->lock);
}

void dm_pool_walk(dm_pool_t *p,
                  void (*fn)(void *arg, uint64_t addr, uint64_t size, int used, uint64_t chunk_base),
                  void *arg) {
  pthread_mutex_lock(&p->lock);
  for (dm_tnode_t *n = dm_tree_first(&p->by_addr); n; n = dm_tree_next(n)) {
    dm_seg_t *s = DM_TREE_ENTRY(n, dm_seg_t, by_addr);
    fn(arg, SEG_ADDR(s), s->size, s->used, s->chunk->base);
  }
  pthread_mutex_unlock(&p->lock);
}

int dm_pool_check(dm_pool_t *p, const char **why) {
  const char *dummy;
  if (!why) why = &dummy;
  *why = NULL;
  int rc = DM_POOL_OK;
  pthread_mutex_lock(&p->lock);
  if (dm_tree_check(&p->by_addr, why) || dm_tree_check(&p->by_size, why)) {
    rc = DM_POOL_EINVAL;
    goto out;
  }
  uint64_t nseg = 0, nfree = 0, nused = 0, used = 0, req = 0, cbytes = 0, nch = 0;
  for (dm_chunk_t *c = p->chunks; c; c = c->next) {
    nch++;
    cbytes += c->bytes;
    if (c->base % p->align || c->bytes % p->align) {
      *why = "chunk alignment";
      rc = DM_POOL_EINVAL;
      goto out;
    }
    dm_tnode_t *n = dm_tree_find(&p->by_addr, c->base, 0);
    uint64_t at = c->base;
    int prev_free = 0;
    while (n) {
      dm_seg_t *s = DM_TREE_ENTRY(n, dm_seg_t, by_addr);
      if (s->chunk != c) break;
      if (SEG_ADDR(s) != at) {
        *why = "segments do not tile the chunk";
        rc = DM_POOL_EINVAL;
        goto out;
      }
      if (s->size == 0 || s->size % p->align) {
        *why = "segment size alignment";
        rc = DM_POOL_EINVAL;
        goto out;
      }
      int in_size = dm_tree_find(&p->by_size, s->size, SEG_ADDR(s)) == &s->by_size;
      if (s->used == in_size) {
        *why = "free tree membership";
        rc = DM_POOL_EINVAL;
        goto out;
      }
      if (!s->used && prev_free) {
        *why = "adjacent free segments not merged";
        rc = DM_POOL_EINVAL;
        goto out;
      }
      if (s->used) {
        nused++;
        used += s->size;
        req += s->req;
        if (s->req > s->size || s->req == 0) {
          *why = "requested size";
          rc = DM_POOL_EINVAL;
          goto out;
        }
      } else
        nfree++;
      prev_free = !s->used;
      nseg++;
      at += s->size;
      n = dm_tree_next(n);
    }
    if (at != c->base + c->bytes) {
      *why = "chunk not covered";
      rc = DM_POOL_EINVAL;
      goto out;
    }
  }
  if (nseg != p->by_addr.count) {
    *why = "segments outside chunks";
    rc = DM_POOL_EINVAL;
    goto out;
  }
  if (nfree != p->by_size.count || nfree != p->st.free_segments) {
    *why = "free segment count";
    rc = DM_POOL_EINVAL;
    goto out;
  }
  if (nused != p->st.used_segments || used != p->st.used_bytes || req != p->st.requested_bytes) {
    *why = "used gauges";
    rc = DM_POOL_EINVAL;
    goto out;
  }
  if (nch != p->st.chunks || cbytes != p->st.chunk_bytes) {
    *why = "chunk gauges";
    rc = DM_POOL_EINVAL;
    goto out;
  }
out:
  pthread_mutex_unlock(&p->lock);
  return rc;
}

void dm_pool_stats_print(const dm_pool_stats_t *s, FILE *f, const char *title) {
  if (!f) f = stderr;
  fprintf(f, "%s:\n", title ? title : "devmalloc pool");
#define DM_POOL_PRINT(name, doc) fprintf(f, "  %-18s %14" PRIu64 "   # %s\n", #name, s->name, doc);
  DM_POOL_COUNTERS(DM_POOL_PRINT)
  DM_POOL_GAUGES(DM_POOL_PRINT)
#undef DM_POOL_PRINT
}

const char *dm_pool_strerror(int err) {
  switch (err) {
  case DM_POOL_OK: return "success";
  case DM_POOL_EINVAL: return "invalid argument or pointer";
  case DM_POOL_ENOMEM: return "out of memory";
  case DM_POOL_ENOTOURS: return "address not in the pool";
  case DM_POOL_EDOUBLE: return "double free";
  default: return "unknown error";
  }
}
