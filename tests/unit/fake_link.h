/*
 * fake_link.h — the fake JIT linker's state for the re-link tests: the link
 * inputs appended to one buffer, which cuLinkComplete hands back as the
 * linked image (fake_links counts the links; fake_fail_link makes them
 * fail). The includer defines f_link_create and f_link_add (keeping each
 * input with fake_link_append), then includes fake_jit.h.
 * Locking: none (the tests call the linker from one thread).
 */
#ifndef DM_FAKE_LINK_H
#define DM_FAKE_LINK_H
#include <cuda.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  char *buf;
  size_t len;
  int n; /* inputs added */
} fake_state_t;

static int fake_links, fake_fail_link;

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
#endif
