/*
 * shim_fake.h — fakes of the shim's other parts (parts.c: the host runtime
 * dm_heap_ops, the re-link dm_relink_ops, the host pool dm_pool_ops) and fake
 * driver entry points (dm_drv) for the shim's host tests. By default nothing
 * is re-linked and the pool is off; a test fakes a re-link by defining
 * FK_RELINK_SIZED to its own function before including this file. Counters let tests check how
 * often the shim created heaps and bound modules.
 */
#ifndef SHIM_FAKE_H
#define SHIM_FAKE_H
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "shim.h"

static atomic_int fk_creates, fk_binds_mod, fk_binds_lib, fk_destroys;
static size_t fk_last_bytes;
static int fk_create_fails;
static int fk_stats_fails;      /* the heap's counters can no longer be read */
static uint64_t fk_allocs = 42; /* what the next read reports */

struct devmalloc_heap {
  CUcontext ctx;
  size_t bytes;
};
/* A heap of a context that is gone is forgotten, not freed (its memory went
 * with the context): the fake keeps every heap reachable for LeakSanitizer. */
devmalloc_heap_t *fk_made[256];
static atomic_int fk_nmade;

static devmalloc_status_t fk_create(CUcontext c, size_t b, devmalloc_heap_t **out) {
  atomic_fetch_add(&fk_creates, 1);
  fk_last_bytes = b;
  if (fk_create_fails) return DEVMALLOC_ENOMEM;
  devmalloc_heap_t *h = malloc(sizeof *h);
  fk_made[atomic_fetch_add(&fk_nmade, 1) & 255] = h;
  h->ctx = c;
  h->bytes = b;
  *out = h;
  return DEVMALLOC_OK;
}
static devmalloc_status_t fk_bind_mod(devmalloc_heap_t *h, CUmodule m) {
  atomic_fetch_add(&fk_binds_mod, 1);
  return DEVMALLOC_OK;
}
static devmalloc_status_t fk_bind_lib(devmalloc_heap_t *h, CUlibrary l) {
  atomic_fetch_add(&fk_binds_lib, 1);
  return DEVMALLOC_OK;
}
static devmalloc_status_t fk_stats(devmalloc_heap_t *h, devmalloc_stats_t *s) {
  if (fk_stats_fails) return DEVMALLOC_ECUDA;
  memset(s, 0, sizeof *s);
  s->heap_bytes = s->mapped_bytes = h->bytes;
  s->allocs = fk_allocs;
  s->bytes_in_use = fk_allocs * 16;
  for (int c = 0; c < DEVMALLOC_NUM_CLASSES; c++) s->class_size[c] = 16u << (c / 2);
  s->class_allocs[0] = fk_allocs;
  return DEVMALLOC_OK;
}
static devmalloc_status_t fk_destroy(devmalloc_heap_t *h) {
  atomic_fetch_add(&fk_destroys, 1);
  free(h);
  return DEVMALLOC_OK;
}
static const char *fk_str(devmalloc_status_t s) { return s ? "fake failure" : "success"; }
static void fk_print(const devmalloc_stats_t *s, void *f, const char *t) {}

static size_t fk_min_block; /* last value given to set_min_block */
static devmalloc_status_t fk_set_min_block(devmalloc_heap_t *h, size_t b) {
  (void)h;
  fk_min_block = b;
  return DEVMALLOC_OK;
}
static int fk_check; /* last value given to set_check */
static devmalloc_status_t fk_set_check(devmalloc_heap_t *h, int on) {
  (void)h;
  fk_check = on;
  return DEVMALLOC_OK;
}
static int fk_dense; /* last value given to set_dense */
static devmalloc_status_t fk_set_dense(devmalloc_heap_t *h, int on) {
  (void)h;
  fk_dense = on;
  return DEVMALLOC_OK;
}
/* Heaps that grow: the fake makes a fixed heap of the fallback size (the
 * size a fixed heap would have had), so the shim's sizing rules read the
 * same through either path; fk_grow_cfg keeps the last configuration. */
static devmalloc_grow_config_t fk_grow_cfg;
static devmalloc_status_t fk_create_growing(CUcontext c, const devmalloc_grow_config_t *g,
                                            devmalloc_heap_t **out, const char **notice) {
  fk_grow_cfg = *g;
  if (notice) *notice = NULL;
  return fk_create(c, g->fallback, out);
}
static devmalloc_status_t fk_trim(devmalloc_heap_t *h, size_t keep) { return DEVMALLOC_OK; }
static int fk_grows(const devmalloc_heap_t *h) { return 0; }
static atomic_int fk_abandons;
static void fk_abandon(devmalloc_heap_t *h) {
  atomic_fetch_add(&fk_abandons, 1);
  free(h);
}
static const dm_heap_ops_t fk_ops = {
    fk_create,        fk_bind_mod,  fk_bind_lib,  fk_stats,          fk_destroy, fk_str,   fk_print,
    fk_set_min_block, fk_set_check, fk_set_dense, fk_create_growing, fk_trim,    fk_grows, fk_abandon};
const dm_heap_ops_t *dm_heap_ops = &fk_ops;

#ifdef FK_RELINK_SIZED
static int FK_RELINK_SIZED(const void *image, const void *body, size_t len, const void **out,
                           size_t *out_size, char *why, size_t whylen);
#else
static int fk_relink_sized(const void *image, const void *body, size_t len, const void **out,
                           size_t *out_size, char *why, size_t whylen) {
  if (why && whylen) snprintf(why, whylen, "load-time re-link not built into this shim");
  return 0;
}
#define FK_RELINK_SIZED fk_relink_sized
#endif
static int fk_relink_file(const char *path, const void **out, size_t *out_size, char *why, size_t whylen) {
  if (why && whylen) snprintf(why, whylen, "load-time re-link not built into this shim");
  return 0;
}
static void fk_relink_free(const void *image) {}
#ifdef FK_RELINK_READ_AHEAD
static int FK_RELINK_READ_AHEAD(const void *body, size_t len, int dev, char *why, size_t whylen);
#else
static int fk_relink_read_ahead(const void *body, size_t len, int dev, char *why, size_t whylen) {
  if (why && whylen) snprintf(why, whylen, "load-time re-link not built into this shim");
  return 0;
}
#define FK_RELINK_READ_AHEAD fk_relink_read_ahead
#endif
static const dm_relink_ops_t fk_relink_ops = {FK_RELINK_SIZED, fk_relink_file, fk_relink_free,
                                              FK_RELINK_READ_AHEAD};
const dm_relink_ops_t *dm_relink_ops = &fk_relink_ops;

static int fk_pool_enabled(void) { return 0; }
static void fk_pool_print(void *file) {}
static void fk_pool_forget(CUcontext ctx) {}
static const dm_pool_ops_t fk_pool_ops = {fk_pool_enabled, NULL,          NULL, NULL, NULL,
                                          fk_pool_print,   fk_pool_forget};
const dm_pool_ops_t *dm_pool_ops = &fk_pool_ops;

void dm_parts_connect(void *libcuda, void *(*sym)(const char *), void *(*real)(dm_hook_id_t)) {}

__attribute__((unused)) static void fk_reset(void) {
  fk_creates = fk_binds_mod = fk_binds_lib = fk_destroys = 0;
  fk_create_fails = 0;
  fk_stats_fails = 0;
  fk_allocs = 42;
  fk_last_bytes = 0;
}
#endif
