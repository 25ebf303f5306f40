/*
 * fake_link.h — the fake JIT linker's state for the re-link tests: the link
 * inputs appended to one buffer, which cuLinkComplete hands back as the
 * linked image (fake_links counts the links; fake_fail_link makes them
 * fail), and relink_fx, the re-link of a generated fixture through them.
 * The includer defines f_link_add (keeping each input with
 * fake_link_append) and f_link_create (fake_link_create, or a function that
 * calls it), then includes fake_jit.h.
 * Locking: none (the tests call the linker from one thread).
 */
#ifndef DM_FAKE_LINK_H
#define DM_FAKE_LINK_H
#include <cuda.h>
#include <stdlib.h>
#include <string.h>
#include "relink.h"
#include "relink_test_util.h"

typedef struct {
  char *buf;
  size_t len;
  int n; /* inputs added */
} fake_state_t;

static int fake_links, fake_fail_link;

/* A new link's state (its options ignored). */
static CUresult fake_link_create(unsigned n, CUjit_option *o, void **v, CUlinkState *ls) {
  (void)n;
  (void)o;
  (void)v;
  *ls = (CUlinkState)calloc(1, sizeof(fake_state_t));
  return CUDA_SUCCESS;
}
static void fake_link_append(fake_state_t *s, const void *data, size_t size) {
  s->buf = realloc(s->buf, s->len + size);
  memcpy(s->buf + s->len, data, size);
  s->len += size;
  s->n++;
}
static CUresult f_link_complete(CUlinkState ls, void **img, size_t *sz) {
  fake_state_t *s = (fake_state_t *)ls;
  if (fake_fail_link) return CUDA_ERROR_INVALID_PTX;
  fake_links++;
  *img = s->buf;
  *sz = s->len;
  return CUDA_SUCCESS;
}
static CUresult f_link_destroy(CUlinkState ls) {
  fake_state_t *s = (fake_state_t *)ls;
  free(s->buf);
  free(s);
  return CUDA_SUCCESS;
}
/* Re-link fixture `file` (FIXTURE_DIR) as a module image: dm_relink_image's
 * answer, why emptied first. */
static inline int relink_fx(const char *file, const void **out, size_t *sz, char *why, size_t wl) {
  size_t len;
  unsigned char *b = fx_read(file, &len);
  why[0] = 0;
  int r = dm_relink_image(b, out, sz, why, wl);
  free(b);
  return r;
}
#endif
