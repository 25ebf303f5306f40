/*
 * test_stock_notice.c — no silent fallback at load time: a module that calls
 * the stock device malloc and cannot be re-linked (the re-link's reason is
 * about its PTX) is named in one warning at the default verbosity, with the
 * reason; later ones stay quiet at that level; a module that never calls
 * malloc, or that could not be read, gets no such warning. The re-link is
 * faked (FK_RELINK_SIZED, shim_fake.h's re-link table); messages
 * go to a DEVMALLOC_LOG file.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#define FK_RELINK_SIZED fake_relink_sized
#include "shim_fake.h"

static const char *g_why; /* what the fake re-link answers */

static int fake_relink_sized(const void *image, const void *body, size_t len, const void **out,
                             size_t *out_size, char *why, size_t whylen) {
  snprintf(why, whylen, "%s", g_why);
  return 0;
}

static CUresult f_load(CUmodule *m, const void *image) {
  static uintptr_t next = 0x7100;
  *m = (CUmodule)++next;
  return CUDA_SUCCESS;
}

static char g_log[64];

static char *log_text(void) {
  static char text[8192];
  FILE *f = fopen(g_log, "r");
  assert_non_null(f);
  size_t n = fread(text, 1, sizeof text - 1, f);
  text[n] = 0;
  fclose(f);
  return text;
}

static int count(const char *text, const char *what) {
  int n = 0;
  for (const char *p = text; (p = strstr(p, what)); p++) n++;
  return n;
}

static void load(const char *why) {
  static const char plain[64] = ".version 9.0"; /* PTX-like: the load hook's bounding takes it */
  CUmodule m = NULL;
  g_why = why;
  assert_int_equal(dm_h_module_load_data(f_load, &m, plain), CUDA_SUCCESS);
  assert_non_null(m);
}

static void t_one_warning(void **st) {
  strcpy(g_log, "/tmp/dm_stock_notice_XXXXXX");
  int fd = mkstemp(g_log);
  assert_true(fd >= 0);
  close(fd);
  setenv("DEVMALLOC_LOG", g_log, 1);
  unsetenv("DEVMALLOC_VERBOSE");
  load("image: does not call device malloc/free (PTX)");
  load("image: unknown image format");
  load("image: already linked with devmalloc");
  assert_int_equal(count(log_text(), "stock device malloc"), 0);
  load("image: no PTX in the fatbin (SASS only cannot be re-linked)");
  load("image: PTX targets sm_100, device is sm_90");
  char *t = log_text();
  unlink(g_log);
  assert_int_equal(count(t, "stock device malloc"), 1);
  assert_non_null(strstr(t, "devmalloc: warning: module 0x"));
  assert_null(strstr(t, "PTX targets sm_100")); /* the second one: verbose 1 only */
  assert_non_null(strstr(t, "runs on CUDA's stock device malloc, not devmalloc: it cannot be "
                            "re-linked (image: no PTX in the fatbin (SASS only cannot be re-linked))"));
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(t_one_warning)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
