/*
 * test_options.c — the options table: every parser on good and malformed
 * values (one size syntax: 1.5G, no wrap near 2^64; fractions from 0.001
 * to 1 as plain decimals; byte counts where fractions mean nothing; the
 * block size's bound refused when parsed), table parsing with a
 * fake environment (malformed -> one warning naming the valid forms and the
 * default; a heap below the minimum raised with a warning), the "did you
 * mean" suggestion for unknown names, dm_options() from the real
 * environment, and docs/options.md documenting every variable.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "devmalloc.h"

#include "options.h"

static void t_bytes(void **st) {
  uint64_t v;
  assert_int_equal(dm_parse_bytes("4096", &v), 0);
  assert_int_equal(v, 4096);
  assert_int_equal(dm_parse_bytes("64M", &v), 0);
  assert_int_equal(v, 64ull << 20);
  assert_int_equal(dm_parse_bytes(" 2g ", &v), 0);
  assert_int_equal(v, 2ull << 30);
  assert_int_equal(dm_parse_bytes("512KiB", &v), 0);
  assert_int_equal(v, 512ull << 10);
  assert_int_equal(dm_parse_bytes("1MB", &v), 0);
  assert_int_equal(v, 1ull << 20);
  assert_int_equal(dm_parse_bytes("1T", &v), 0);
  assert_int_equal(v, 1ull << 40);
  assert_int_equal(dm_parse_bytes("1.5G", &v), 0);
  assert_int_equal(v, 3ull << 29);
  assert_int_equal(dm_parse_bytes("0.5k", &v), 0);
  assert_int_equal(v, 512);
  assert_int_equal(dm_parse_bytes("1P", &v), 0);
  assert_int_equal(v, 1ull << 50);
  const char *bad[] = {"",
                       "0",
                       "-5",
                       "abc",
                       "12Q",
                       "1.5",
                       "1.G",
                       "0.0M",
                       "M",
                       "10 M",
                       "99999999999999999999",
                       "18446744073709551615",
                       "18446744073709551616",
                       "16777216G",
                       "1.5P",
                       "20000000000T",
                       "1e3",
                       "1.5e3G",
                       "1.e3G",
                       "0x10M",
                       NULL};
  for (int i = 0; bad[i]; i++) {
    v = 7;
    assert_int_equal(dm_parse_bytes(bad[i], &v), -1);
    assert_int_equal(v, 7);
  }
}

/* Fractions of free memory are plain decimals from 0.001 to 1: a value that
 * would resolve to no memory, or that strtod alone would read (exponents,
 * hex, inf, nan), is refused when parsed. */
static void t_fraction_bounds(void **st) {
  dm_opt_size_t s;
  assert_int_equal(dm_parse_size("0.001", &s), 0);
  assert_int_equal(s.kind, DM_SIZE_FRACTION);
  assert_int_equal(dm_parse_size("0.1%", &s), 0);
  assert_int_equal(dm_parse_size(".5", &s), 0);
  assert_true(s.fraction == 0.5);
  assert_int_equal(dm_parse_size("12.5%", &s), 0);
  assert_true(s.fraction == 0.125);
  const char *bad[] = {"1e-300%", "0.0000001", "0.0009", "0.09%", "1e-1",   "5e1%",   "0x0.8",
                       "inf%",    "nan",       "+0.5",   "0.5.1", "1.0001", "100.5%", NULL};
  for (int i = 0; bad[i]; i++)
    if (dm_parse_size(bad[i], &s) == 0) fail_msg("size \"%s\" accepted", bad[i]);
  /* the smallest fraction of a small device still resolves to a heap */
  dm_opt_size_t f = {DM_SIZE_FRACTION, 0, 0.001};
  assert_int_equal(dm_size_resolve(&f, 100ull << 20), 1ull << 20);
}

/* amount: 0 or bytes; block: 0 .. 8192 bytes. */
static void t_amount_block(void **st) {
  dm_opt_amount_t a = 7;
  assert_int_equal(dm_parse_amount("0", &a), 0);
  assert_int_equal(a, 0);
  assert_int_equal(dm_parse_amount(" 00 ", &a), 0);
  assert_int_equal(a, 0);
  assert_int_equal(dm_parse_amount("128M", &a), 0);
  assert_int_equal(a, 128ull << 20);
  const char *bad_a[] = {"0.5", "50%", "-1", "", "x", "1e3", NULL};
  for (int i = 0; bad_a[i]; i++)
    if (dm_parse_amount(bad_a[i], &a) == 0) fail_msg("amount \"%s\" accepted", bad_a[i]);
  dm_opt_block_t b = 7;
  assert_int_equal(dm_parse_block("0", &b), 0);
  assert_int_equal(b, 0);
  assert_int_equal(dm_parse_block("128", &b), 0);
  assert_int_equal(b, 128);
  assert_int_equal(dm_parse_block("8K", &b), 0);
  assert_int_equal(b, 8192);
  const char *bad_b[] = {"8193", "16K", "0.5", "50%", "1G", NULL};
  for (int i = 0; bad_b[i]; i++)
    if (dm_parse_block(bad_b[i], &b) == 0) fail_msg("block \"%s\" accepted", bad_b[i]);
  int l;
  assert_int_equal(dm_parse_level("3", &l), -1); /* 0..2, as documented */
}

static void t_size(void **st) {
  dm_opt_size_t s;
  assert_int_equal(dm_parse_size("256M", &s), 0);
  assert_int_equal(s.kind, DM_SIZE_BYTES);
  assert_int_equal(s.bytes, 256ull << 20);
  assert_int_equal(dm_parse_size("0.5", &s), 0);
  assert_int_equal(s.kind, DM_SIZE_FRACTION);
  assert_true(s.fraction == 0.5);
  assert_int_equal(dm_parse_size("50%", &s), 0);
  assert_int_equal(s.kind, DM_SIZE_FRACTION);
  assert_true(s.fraction == 0.5);
  assert_int_equal(dm_parse_size("1.0", &s), 0);
  assert_int_equal(dm_parse_size("100%", &s), 0);
  assert_int_equal(dm_parse_size("1.5G", &s), 0);
  assert_int_equal(s.kind, DM_SIZE_BYTES);
  assert_int_equal(s.bytes, 3ull << 29);
  const char *bad[] = {
      "1.5", "0.0", "0%", "150%", "%", "x%", "-0.5", "0.5x", "", "abc", "18446744073709551615", NULL};
  for (int i = 0; bad[i]; i++) assert_int_equal(dm_parse_size(bad[i], &s), -1);
  dm_opt_size_t f = {DM_SIZE_FRACTION, 0, 0.5};
  assert_int_equal(dm_size_resolve(&f, 1000ull << 20), 500ull << 20);
  dm_opt_size_t u = {DM_SIZE_UNSET, 0, 0};
  assert_int_equal(dm_size_resolve(&u, 1ull << 30), 0);
}

static void t_small(void **st) {
  int b;
  assert_int_equal(dm_parse_bool("yes", &b), 0);
  assert_int_equal(b, 1);
  assert_int_equal(dm_parse_bool("OFF", &b), 0);
  assert_int_equal(b, 0);
  assert_int_equal(dm_parse_bool("1", &b), 0);
  assert_int_equal(b, 1);
  assert_int_equal(dm_parse_bool("2", &b), -1);
  assert_int_equal(dm_parse_bool("maybe", &b), -1);
  int l;
  assert_int_equal(dm_parse_level("2", &l), 0);
  assert_int_equal(l, 2);
  assert_int_equal(dm_parse_level("true", &l), 0);
  assert_int_equal(l, 1);
  assert_int_equal(dm_parse_level("9", &l), -1);
  assert_int_equal(dm_parse_level("2x", &l), -1);
  dm_opt_jit_t j;
  assert_int_equal(dm_parse_jit("auto", &j), 0);
  assert_int_equal(j, DM_JIT_AUTO);
  assert_int_equal(dm_parse_jit("Off", &j), 0);
  assert_int_equal(j, DM_JIT_OFF);
  assert_int_equal(dm_parse_jit("force", &j), 0);
  assert_int_equal(j, DM_JIT_FORCE);
  assert_int_equal(dm_parse_jit("no", &j), 0);
  assert_int_equal(j, DM_JIT_OFF);
  assert_int_equal(dm_parse_jit("0", &j), 0);
  assert_int_equal(j, DM_JIT_OFF);
  assert_int_equal(dm_parse_jit("yes", &j), 0);
  assert_int_equal(j, DM_JIT_AUTO);
  assert_int_equal(dm_parse_jit("sometimes", &j), -1);
  dm_opt_pool_t p;
  assert_int_equal(dm_parse_pool("off", &p), 0);
  assert_int_equal(p.mode, DM_OPT_POOL_OFF);
  assert_int_equal(dm_parse_pool("auto", &p), 0);
  assert_int_equal(p.mode, DM_OPT_POOL_AUTO);
  assert_int_equal(dm_parse_pool("1G", &p), 0);
  assert_int_equal(p.mode, DM_OPT_POOL_BYTES);
  assert_int_equal(p.bytes, 1ull << 30);
  assert_int_equal(dm_parse_pool("lots", &p), -1);
  const char *path = NULL;
  assert_int_equal(dm_parse_path("/tmp/x.log", &path), 0);
  assert_string_equal(path, "/tmp/x.log");
  assert_int_equal(dm_parse_path("", &path), 0);
  assert_null(path);
}

/* Fake environment. */
static const char *const *g_env;
static const char *fake_get(const char *name) {
  for (int i = 0; g_env[i]; i += 2)
    if (!strcmp(g_env[i], name)) return g_env[i + 1];
  return NULL;
}
static int g_warns;
static char g_warned[2048];
static void fake_warn(const char *env, const char *value, const char *what) {
  g_warns++;
  snprintf(g_warned + strlen(g_warned), sizeof g_warned - strlen(g_warned), "%s=%s %s\n", env, value, what);
}

/* Parse the table over a fake environment; counters and warnings reset. */
static int parse(const char *const *env, dm_options_t *o) {
  g_env = env;
  g_warns = 0;
  g_warned[0] = 0;
  return dm_options_parse(o, fake_get, fake_warn);
}

static void t_defaults(void **st) {
  static const char *const env[] = {NULL};
  dm_options_t o;
  parse(env, &o);
  assert_int_equal(g_warns, 0);
  assert_int_equal(o.heap_size.kind, DM_SIZE_UNSET);
  assert_int_equal(o.verbose, 0);
  assert_null(o.log);
  assert_int_equal(o.stats, 0);
  assert_int_equal(o.disable, 0);
  assert_int_equal(o.jit, DM_JIT_AUTO);
  assert_null(o.cache_dir);
  assert_int_equal(o.host_pool.mode, DM_OPT_POOL_OFF);
  assert_int_equal(o.host_pool_sync, 1);
}

static void t_good_env(void **st) {
  static const char *const env[] = {"DEVMALLOC_HEAP_SIZE",
                                    "1G",
                                    "DEVMALLOC_VERBOSE",
                                    "2",
                                    "DEVMALLOC_LOG",
                                    "/tmp/dm.log",
                                    "DEVMALLOC_STATS",
                                    "1",
                                    "DEVMALLOC_DISABLE",
                                    "yes",
                                    "DEVMALLOC_JIT",
                                    "force",
                                    "DEVMALLOC_CACHE_DIR",
                                    "/tmp/dmcache",
                                    "DEVMALLOC_HOST_POOL",
                                    "auto",
                                    NULL};
  dm_options_t o;
  parse(env, &o);
  assert_int_equal(g_warns, 0);
  assert_int_equal(o.heap_size.kind, DM_SIZE_BYTES);
  assert_int_equal(o.heap_size.bytes, 1ull << 30);
  assert_int_equal(o.verbose, 2);
  assert_string_equal(o.log, "/tmp/dm.log");
  assert_int_equal(o.stats, 1);
  assert_int_equal(o.disable, 1);
  assert_int_equal(o.jit, DM_JIT_FORCE);
  assert_string_equal(o.cache_dir, "/tmp/dmcache");
  assert_int_equal(o.host_pool.mode, DM_OPT_POOL_AUTO);
}

static void t_malformed_env(void **st) {
  static const char *const env[] = {"DEVMALLOC_HEAP_SIZE",
                                    "lots",
                                    "DEVMALLOC_VERBOSE",
                                    "loud",
                                    "DEVMALLOC_STATS",
                                    "2",
                                    "DEVMALLOC_JIT",
                                    "sometimes",
                                    "DEVMALLOC_HOST_POOL",
                                    "12Q",
                                    "DEVMALLOC_DISABLE",
                                    "",
                                    NULL};
  dm_options_t o;
  parse(env, &o);
  assert_int_equal(g_warns, 5); /* empty DISABLE means unset, no warning */
  assert_non_null(strstr(g_warned, "DEVMALLOC_HEAP_SIZE"));
  assert_non_null(strstr(g_warned, "DEVMALLOC_HOST_POOL"));
  /* each warning names the valid forms and the value used */
  assert_non_null(strstr(g_warned, "DEVMALLOC_HEAP_SIZE=lots is not valid: expected a byte count"));
  assert_non_null(strstr(g_warned, "(0.5, 50%); using the default (unset)"));
  assert_non_null(strstr(g_warned, "DEVMALLOC_JIT=sometimes is not valid: expected auto, off or force"));
  assert_non_null(strstr(g_warned, "using the default (auto)"));
  assert_int_equal(o.heap_size.kind, DM_SIZE_UNSET);
  assert_int_equal(o.verbose, 0);
  assert_int_equal(o.stats, 0);
  assert_int_equal(o.jit, DM_JIT_AUTO);
  assert_int_equal(o.host_pool.mode, DM_OPT_POOL_OFF);
  assert_int_equal(o.disable, 0);
}

/* Every value of the growing heap's sizes and MIN_BLOCK is accepted as
 * documented or refused when the table is parsed (counted, one warning
 * each); fractions of memory are no byte counts there. */
static void t_refused_at_parse(void **st) {
  static const char *const env[] = {"DEVMALLOC_HEAP_INITIAL",
                                    "0.5",
                                    "DEVMALLOC_GROW_STEP",
                                    "25%",
                                    "DEVMALLOC_GROW_WATERMARK",
                                    "10%",
                                    "DEVMALLOC_MIN_BLOCK",
                                    "16384",
                                    "DEVMALLOC_HEAP_SIZE",
                                    "1e-300%",
                                    "DEVMALLOC_VERBOSE",
                                    "3",
                                    NULL};
  dm_options_t o;
  assert_int_equal(parse(env, &o), 6);
  assert_int_equal(g_warns, 6);
  assert_non_null(strstr(
      g_warned, "DEVMALLOC_MIN_BLOCK=16384 is not valid: expected 0 (off) or a byte count up to 8192"));
  assert_non_null(strstr(g_warned, "DEVMALLOC_HEAP_INITIAL=0.5 is not valid"));
  assert_int_equal(o.heap_initial, 64ull << 20);
  assert_int_equal(o.grow_step, 64ull << 20);
  assert_int_equal(o.grow_watermark, 0);
  assert_int_equal(o.min_block, 0);
  assert_int_equal(o.heap_size.kind, DM_SIZE_UNSET);
  static const char *const good[] = {"DEVMALLOC_HEAP_INITIAL",
                                     "256M",
                                     "DEVMALLOC_GROW_STEP",
                                     "2M",
                                     "DEVMALLOC_GROW_WATERMARK",
                                     "0",
                                     "DEVMALLOC_MIN_BLOCK",
                                     "128",
                                     "DEVMALLOC_HEAP_SIZE",
                                     "0.001",
                                     NULL};
  assert_int_equal(parse(good, &o), 0);
  assert_int_equal(g_warns, 0);
  assert_int_equal(o.heap_initial, 256ull << 20);
  assert_int_equal(o.grow_step, 2ull << 20);
  assert_int_equal(o.min_block, 128);
  static const char *const small[] = {"DEVMALLOC_HEAP_INITIAL", "4K", NULL};
  assert_int_equal(parse(small, &o), 0); /* raised, accepted */
  assert_int_equal(g_warns, 1);
  assert_non_null(strstr(g_warned, "DEVMALLOC_HEAP_INITIAL=4K is below the minimum heap; using 1M"));
  assert_int_equal(o.heap_initial, 1ull << 20);
}

/* Unknown DEVMALLOC_* names, counted for the CLI's check. */
static void t_unknown_names(void **st) {
  char *env[] = {"PATH=/bin",         "DEVMALLOC_HEAPSIZE=1G",      "DEVMALLOC_PRELOAD=/x.so",
                 "DEVMALLOC_JIT=off", "DEVMALLOC_ZZZZZZZZZZZZZZ=1", NULL};
  assert_int_equal(dm_options_unknown(env, NULL), 2);
}

static void t_heap_minimum(void **st) {
  static const char *const env[] = {"DEVMALLOC_HEAP_SIZE", "1", NULL};
  dm_options_t o;
  parse(env, &o);
  assert_int_equal(g_warns, 1);
  assert_non_null(strstr(g_warned, "DEVMALLOC_HEAP_SIZE=1 is below the minimum heap; using 1M"));
  assert_int_equal(o.heap_size.kind, DM_SIZE_BYTES);
  assert_int_equal(o.heap_size.bytes, 1ull << 20);
  static const char *const huge[] = {"DEVMALLOC_HEAP_SIZE", "18446744073709551615", NULL};
  parse(huge, &o);
  assert_int_equal(g_warns, 1);
  assert_int_equal(o.heap_size.kind, DM_SIZE_UNSET);
}

static void t_suggest(void **st) {
  assert_string_equal(dm_option_suggest("DEVMALLOC_HEAPSIZE"), "DEVMALLOC_HEAP_SIZE");
  assert_string_equal(dm_option_suggest("DEVMALLOC_VERBOS"), "DEVMALLOC_VERBOSE");
  assert_string_equal(dm_option_suggest("DEVMALLOC_HOST_POOL_SYNK"), "DEVMALLOC_HOST_POOL_SYNC");
  assert_null(dm_option_suggest("DEVMALLOC_SOMETHING_ELSE_ENTIRELY"));
}

static void t_process_options(void **st) {
  setenv("DEVMALLOC_HEAP_SIZE", "25%", 1);
  setenv("DEVMALLOC_VERBOSE", "1", 1);
  setenv("DEVMALLOC_STATS", "bogus", 1);   /* warning */
  setenv("DEVMALLOC_HEAPSIZE", "1G", 1);   /* unknown name, with a suggestion */
  setenv("DEVMALLOC_PRELOAD", "/x.so", 1); /* the CLI's own variable: no warning */
  char log[] = "/tmp/dm_test_options_XXXXXX";
  int fd = mkstemp(log);
  assert_true(fd >= 0);
  close(fd);
  setenv("DEVMALLOC_LOG", log, 1);
  const dm_options_t *o = dm_options();
  assert_int_equal(o->heap_size.kind, DM_SIZE_FRACTION);
  assert_true(o->heap_size.fraction == 0.25);
  assert_int_equal(o->verbose, 1);
  assert_int_equal(o->stats, 0);
  setenv("DEVMALLOC_VERBOSE", "0", 1);
  assert_ptr_equal(dm_options(), o); /* read once */
  assert_int_equal(dm_options()->verbose, 1);
  FILE *f = fopen(log, "r");
  assert_non_null(f);
  char text[4096];
  size_t n = fread(text, 1, sizeof text - 1, f);
  text[n] = 0;
  fclose(f);
  unlink(log);
  assert_non_null(strstr(text, "devmalloc: warning: DEVMALLOC_STATS=\"bogus\" is not valid: "
                               "expected 0/1, text, json or csv (yes/no = text/off); using the default (0)"));
  assert_non_null(strstr(text, "devmalloc: warning: unknown option DEVMALLOC_HEAPSIZE ignored; "
                               "did you mean DEVMALLOC_HEAP_SIZE"));
  assert_null(strstr(text, "DEVMALLOC_PRELOAD"));
  assert_non_null(strstr(text, "devmalloc: shim version " DEVMALLOC_VERSION_STRING));
}

static void t_documented(void **st) {
  FILE *f = fopen("docs/options.md", "r");
  assert_non_null(f);
  static char doc[1 << 16];
  size_t n = fread(doc, 1, sizeof doc - 1, f);
  doc[n] = 0;
  fclose(f);
  assert_true(dm_option_count >= 8);
  for (size_t i = 0; i < dm_option_count; i++) {
    if (!strstr(doc, dm_option_table[i].env)) fail_msg("%s not in docs/options.md", dm_option_table[i].env);
    assert_non_null(dm_option_table[i].doc);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(t_bytes),           cmocka_unit_test(t_size),
      cmocka_unit_test(t_small),           cmocka_unit_test(t_fraction_bounds),
      cmocka_unit_test(t_amount_block),    cmocka_unit_test(t_refused_at_parse),
      cmocka_unit_test(t_unknown_names),   cmocka_unit_test(t_defaults),
      cmocka_unit_test(t_good_env),        cmocka_unit_test(t_malformed_env),
      cmocka_unit_test(t_heap_minimum),    cmocka_unit_test(t_suggest),
      cmocka_unit_test(t_process_options), cmocka_unit_test(t_documented),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
