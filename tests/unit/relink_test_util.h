/*
 * relink_test_util.h — helpers shared by the relink host tests: read a
 * generated fixture into an exactly-sized heap buffer (so ASan catches any
 * read past its end), and a test group's scratch directory holding the
 * re-link cache. FIXTURE_DIR is set by mk/interpose_image_relink.mk.
 * Locking: none (a group's setup and teardown run alone).
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

/* A test group's scratch directory, made from the mkdtemp template `tmpl`
 * into root (DM_FX_ROOT bytes), whose cache/ is the re-link cache
 * (DEVMALLOC_CACHE_DIR); the re-link's messages on, DEVMALLOC_JIT unset.
 * Returns 0, -1 when the directory cannot be made. */
#define DM_FX_ROOT 256
static inline int fx_scratch_make(char *root, const char *tmpl) {
  snprintf(root, DM_FX_ROOT, "%s", tmpl);
  if (!mkdtemp(root)) return -1;
  char dir[DM_FX_ROOT + 16];
  snprintf(dir, sizeof dir, "%s/cache", root);
  setenv("DEVMALLOC_CACHE_DIR", dir, 1);
  setenv("DEVMALLOC_VERBOSE", "1", 1);
  unsetenv("DEVMALLOC_JIT");
  return 0;
}

/* Remove the scratch directory and everything in it: 0, or -1. */
static inline int fx_scratch_remove(const char *root) {
  char cmd[DM_FX_ROOT + 16];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
  return system(cmd) == 0 ? 0 : -1;
}

#endif
