/*
 * test_ptx_inline.c — free's common path written into an application's PTX
 * (ptx_inline.h), on nvcc's own PTX and devmalloc's embedded PTX: every call
 * of free becomes a block of that body and no call of it is left, other
 * calls (malloc, new/delete, aligned malloc) stay calls, the result compiles
 * (ptxas) and links with devmalloc's SASS (nvlink: what the body calls is
 * exported); a function's calls past the limit stay calls; a call
 * block of another shape is left a call; an application below devmalloc's
 * target, or
 * that names devmalloc's symbols itself, is refused with a reason; a module
 * without calls is left as it is.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "devmalloc_code.h"
#include "ptx_inline.h"
#include "relink_test_util.h"

static char *read_text(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  rewind(f);
  char *p = malloc((size_t)len + 1);
  assert_non_null(p);
  assert_int_equal(fread(p, 1, (size_t)len, f), (size_t)len);
  p[len] = 0;
  fclose(f);
  *n = (size_t)len;
  return p;
}

/* Calls of `name` in a PTX text (the target follows `call...` and its
 * result list). */
static int calls_of(const char *ptx, const char *name) {
  int n = 0;
  size_t k = strlen(name);
  for (const char *s = ptx; (s = strstr(s, "call")) != NULL; s += 4) {
    const char *p = s + 4;
    if (strncmp(p, ".uni", 4) == 0) p += 4;
    while (*p == ' ' || *p == '\t' || *p == '\n') p++;
    if (*p == '(') {
      p = strchr(p, ')');
      if (!p) break;
      p++;
      while (*p == ',' || *p == ' ' || *p == '\t' || *p == '\n') p++;
    }
    if (strncmp(p, name, k) == 0 && (p[k] == ',' || p[k] == ' ' || p[k] == '\n' || p[k] == ';')) n++;
  }
  return n;
}

/* The text without its inlined blocks (what they call is not the
 * application's call). */
static char *without_inlined(const char *ptx) {
  char *out = strdup(ptx), *w = out;
  assert_non_null(out);
  for (const char *s = ptx; *s;) {
    if (strncmp(s, "{ // devmalloc: free inlined", 28) == 0) {
      int depth = 0;
      do {
        if (*s == '{') depth++;
        if (*s == '}') depth--;
        s++;
      } while (*s && depth > 0);
      continue;
    }
    *w++ = *s++;
  }
  *w = 0;
  return out;
}
static int app_calls_of(const char *ptx, const char *name) {
  char *t = without_inlined(ptx);
  int n = calls_of(t, name);
  free(t);
  return n;
}

static int count(const char *s, const char *what) {
  int n = 0;
  for (; (s = strstr(s, what)) != NULL; s += strlen(what)) n++;
  return n;
}

static void write_text(const char *path, const char *s, size_t n) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(s, 1, n, f), n);
  fclose(f);
}

static void test_every_call_inlined(void **st) {
  (void)st;
  size_t n, on;
  char *app = read_text(FIXTURE_DIR "/malloc.ptx", &n), *out, why[256] = "";
  int mallocs = calls_of(app, "malloc"), frees = calls_of(app, "free");
  assert_true(mallocs >= 1 && frees >= 2);
  int r = dm_ptx_inline(app, n, dm_devmalloc_ptx_text(), &out, &on, why, sizeof why);
  assert_int_equal(r, frees);
  assert_non_null(out);
  assert_int_equal(strlen(out), on);
  assert_int_equal(app_calls_of(out, "malloc"), mallocs);
  assert_int_equal(app_calls_of(out, "free"), 0);
  assert_int_equal(count(out, "// devmalloc: free inlined"), frees);
  /* the other allocation calls stay calls, resolved by the link as before */
  assert_int_equal(calls_of(out, "__nv_aligned_device_malloc_impl"),
                   calls_of(app, "__nv_aligned_device_malloc_impl"));
  assert_int_equal(calls_of(out, "_Znam"), calls_of(app, "_Znam"));
  assert_non_null(strstr(out, ".extern .global .align 8 .u64 devmalloc_heap_desc;"));

  /* it compiles, and links with devmalloc's SASS (which exports what the
   * bodies call) */
  char dir[] = "/tmp/dm_ptx_inline_XXXXXX", cmd[1024];
  assert_non_null(mkdtemp(dir));
  char ptx[128], obj[128], img[128];
  snprintf(ptx, sizeof ptx, "%s/app.ptx", dir);
  snprintf(obj, sizeof obj, "%s/app.o", dir);
  snprintf(img, sizeof img, "%s/app.cubin", dir);
  write_text(ptx, out, on);
  snprintf(cmd, sizeof cmd, "%s -arch=sm_90 -c %s -o %s", PTXAS, ptx, obj);
  assert_int_equal(system(cmd), 0);
  snprintf(cmd, sizeof cmd, "%s -arch=sm_90 %s %s -o %s", NVLINK, obj, DEVICE_SASS, img);
  assert_int_equal(system(cmd), 0);
  unlink(ptx);
  unlink(obj);
  unlink(img);
  rmdir(dir);
  free(out);
  free(app);
}

/* The first call block of free in a PTX text: its `{` and length. */
static const char *first_free_block(const char *ptx, size_t *len) {
  const char *c = strstr(ptx, "free,");
  assert_non_null(c);
  const char *open = c, *close = strchr(c, '}');
  while (open > ptx && *open != '{') open--;
  assert_true(*open == '{' && close);
  *len = (size_t)(close - open) + 1;
  return open;
}

/* A function's first DM_INLINE_PER_FUNC calls are inlined, the rest stay
 * calls (each inlined call lengthens the driver's compile of its function). */
static void test_calls_per_function_bounded(void **st) {
  (void)st;
  size_t n, on, blen;
  char *app = read_text(FIXTURE_DIR "/malloc.ptx", &n), *out, why[256] = "";
  int frees = calls_of(app, "free");
  const char *b = first_free_block(app, &blen);
  size_t at = (size_t)(b - app) + blen, extra = 5;
  char *more = malloc(n + extra * (blen + 1) + 1);
  memcpy(more, app, at);
  size_t k = at;
  for (size_t i = 0; i < extra; i++) {
    more[k++] = '\n';
    memcpy(more + k, b, blen);
    k += blen;
  }
  memcpy(more + k, app + at, n - at + 1);
  assert_int_equal(calls_of(more, "free"), frees + (int)extra);
  /* the calls of the function that holds the copies: up to the next kernel */
  const char *next = strstr(more + at, ".entry");
  assert_non_null(next);
  char *head = strndup(more, (size_t)(next - more));
  const char *first = strstr(head, ".entry");
  assert_non_null(first);
  int in_func = calls_of(first, "free");
  assert_true(in_func > 4);
  int r = dm_ptx_inline(more, strlen(more), dm_devmalloc_ptx_text(), &out, &on, why, sizeof why);
  /* 4 of that function's calls inlined, the rest calls; every other one inlined */
  assert_int_equal(r, frees + (int)extra - (in_func - 4));
  assert_int_equal(app_calls_of(out, "free"), in_func - 4);
  free(head);
  free(out);
  free(more);
  free(app);
}

/* A call block with anything more than the call's parameters is not
 * rewritten: it stays a call. */
static void test_other_call_shapes_stay_calls(void **st) {
  (void)st;
  size_t n, on;
  char *app = read_text(FIXTURE_DIR "/malloc.ptx", &n), *out, why[256] = "";
  int all = calls_of(app, "free");
  /* an extra statement in the first call block of free */
  char *c = strstr(app, "free,");
  assert_non_null(c);
  while (c > app && *c != '{') c--;
  assert_true(*c == '{');
  size_t at = (size_t)(c - app) + 1;
  const char *extra = "\n\tmembar.gl;";
  char *mod = malloc(n + strlen(extra) + 1);
  memcpy(mod, app, at);
  memcpy(mod + at, extra, strlen(extra));
  memcpy(mod + at + strlen(extra), app + at, n - at + 1);
  int r = dm_ptx_inline(mod, strlen(mod), dm_devmalloc_ptx_text(), &out, &on, why, sizeof why);
  assert_int_equal(r, all - 1);
  assert_int_equal(app_calls_of(out, "free"), 1);
  free(out);
  free(mod);
  free(app);
}

static void test_refusals(void **st) {
  (void)st;
  size_t n, on;
  char *out = (char *)1, why[256] = "";
  /* below devmalloc's target (its warp reductions need sm_80) */
  char *old = read_text(FIXTURE_DIR "/malloc_sm75.ptx", &n);
  assert_true(dm_ptx_inline(old, n, dm_devmalloc_ptx_text(), &out, &on, why, sizeof why) < 0);
  assert_null(out);
  assert_non_null(strstr(why, "target"));
  free(old);
  /* the application names devmalloc's descriptor itself */
  char *app = read_text(FIXTURE_DIR "/malloc.ptx", &n);
  const char *decl = "\n.global .align 8 .u64 devmalloc_heap_desc;\n";
  char *named = malloc(n + strlen(decl) + 1);
  strcpy(named, app);
  strcat(named, decl);
  why[0] = 0;
  assert_true(dm_ptx_inline(named, strlen(named), dm_devmalloc_ptx_text(), &out, &on, why, sizeof why) < 0);
  assert_non_null(strstr(why, "devmalloc_heap_desc"));
  free(named);
  free(app);
  /* no calls: nothing to do */
  char *plain = read_text(FIXTURE_DIR "/plain.ptx", &n);
  out = (char *)1;
  assert_int_equal(dm_ptx_inline(plain, n, dm_devmalloc_ptx_text(), &out, &on, why, sizeof why), 0);
  assert_null(out);
  free(plain);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_call_inlined),
      cmocka_unit_test(test_calls_per_function_bounded),
      cmocka_unit_test(test_other_call_shapes_stay_calls),
      cmocka_unit_test(test_refusals),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
