/*
 * relink_test_util.h — helpers shared by the relink host tests: read a
 * generated fixture into an exactly-sized heap buffer (so ASan catches any
 * read past its end). FIXTURE_DIR is set by mk/interpose_image_relink.mk.
 */
#ifndef DM_RELINK_TEST_UTIL_H
#define DM_RELINK_TEST_UTIL_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline unsigned char *fx_read(const char *name, size_t *len) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", FIXTURE_DIR, name);
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "fixture %s missing\n", path);
    abort();
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *b = malloc(n > 0 ? (size_t)n : 1);
  if (!b || fread(b, 1, (size_t)n, f) != (size_t)n) abort();
  fclose(f);
  *len = (size_t)n;
  return b;
}

/* An exact-size copy of the first n bytes. */
static inline unsigned char *fx_copy(const unsigned char *b, size_t n) {
  unsigned char *c = malloc(n ? n : 1);
  if (!c) abort();
  memcpy(c, b, n);
  return c;
}

#endif
