/*
 * options.c — parse the options table (options.def) once.
 *
 * Locking: dm_options() initializes under pthread_once; afterwards the struct
 * is read-only. The parsers are pure functions.
 */
#include "options.h"
#include "shim.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const dm_option_info_t dm_option_table[] = {
#define DM_OPTION(type, field, env, def, doc) {env, def, doc},
#include "options.def"
#undef DM_OPTION
};
const size_t dm_option_count = sizeof dm_option_table / sizeof dm_option_table[0];

/* Skip leading and compare trailing blanks: values are trimmed. */
static int trimmed(const char *s, char *buf, size_t n) {
  while (*s && isspace((unsigned char)*s)) s++;
  size_t len = strlen(s);
  while (len && isspace((unsigned char)s[len - 1])) len--;
  if (len == 0 || len >= n) return -1;
  memcpy(buf, s, len);
  buf[len] = 0;
  return 0;
}

int dm_parse_bytes(const char *s, uint64_t *out) {
  char b[64], *end;
  if (!s || trimmed(s, b, sizeof b)) return -1;
  if (!isdigit((unsigned char)b[0])) return -1;
  errno = 0;
  unsigned long long v = strtoull(b, &end, 10);
  if (errno) return -1;
  unsigned shift = 0;
  if (*end) {
    switch (toupper((unsigned char)*end)) {
    case 'K': shift = 10; break;
    case 'M': shift = 20; break;
    case 'G': shift = 30; break;
    case 'T': shift = 40; break;
    case 'B': shift = 0; break;
    default: return -1;
    }
    end++;
    if (shift && (*end == 'i' || *end == 'I')) end++;   /* KiB, MiB */
    if (shift && (*end == 'b' || *end == 'B')) end++;   /* KB, MiB */
    if (*end) return -1;
  }
  if (v == 0) return -1;
  if (shift && v > (UINT64_MAX >> shift)) return -1;
  *out = (uint64_t)v << shift;
  return 0;
}

int dm_parse_size(const char *s, dm_opt_size_t *out) {
  char b[64], *end;
  if (!s || trimmed(s, b, sizeof b)) return -1;
  size_t len = strlen(b);
  if (b[len - 1] == '%') {                      /* "50%" */
    b[len - 1] = 0;
    errno = 0;
    double pct = strtod(b, &end);
    if (errno || end == b || *end || !(pct > 0.0 && pct <= 100.0)) return -1;
    *out = (dm_opt_size_t){DM_SIZE_FRACTION, 0, pct / 100.0};
    return 0;
  }
  if (strchr(b, '.')) {                          /* "0.5" */
    errno = 0;
    double f = strtod(b, &end);
    if (errno || end == b || *end || !(f > 0.0 && f <= 1.0)) return -1;
    *out = (dm_opt_size_t){DM_SIZE_FRACTION, 0, f};
    return 0;
  }
  uint64_t v;
  if (dm_parse_bytes(b, &v)) return -1;
  *out = (dm_opt_size_t){DM_SIZE_BYTES, v, 0.0};
  return 0;
}

static int word(const char *b, const char *const *words) {
  for (int i = 0; words[i]; i++)
    if (!strcasecmp(b, words[i])) return 1;
  return 0;
}

int dm_parse_bool(const char *s, dm_opt_bool_t *out) {
  static const char *const yes[] = {"1", "yes", "true", "on", NULL};
  static const char *const no[] = {"0", "no", "false", "off", NULL};
  char b[16];
  if (!s || trimmed(s, b, sizeof b)) return -1;
  if (word(b, yes)) { *out = 1; return 0; }
  if (word(b, no)) { *out = 0; return 0; }
  return -1;
}

int dm_parse_level(const char *s, dm_opt_level_t *out) {
  char b[16], *end;
  if (!s || trimmed(s, b, sizeof b)) return -1;
  dm_opt_bool_t yn;
  if (!isdigit((unsigned char)b[0])) {
    if (dm_parse_bool(b, &yn)) return -1;
    *out = yn;
    return 0;
  }
  long v = strtol(b, &end, 10);
  if (*end || v < 0 || v > 3) return -1;
  *out = (int)v;
  return 0;
}

int dm_parse_path(const char *s, dm_opt_path_t *out) {
  if (!s) return -1;
  if (!*s) { *out = NULL; return 0; }
  char *d = strdup(s);
  if (!d) return -1;
  *out = d;          /* kept for the life of the process */
  return 0;
}

int dm_parse_jit(const char *s, dm_opt_jit_t *out) {
  char b[16];
  if (!s || trimmed(s, b, sizeof b)) return -1;
  if (!strcasecmp(b, "auto")) *out = DM_JIT_AUTO;
  else if (!strcasecmp(b, "off") || !strcmp(b, "0")) *out = DM_JIT_OFF;
  else if (!strcasecmp(b, "force")) *out = DM_JIT_FORCE;
  else return -1;
  return 0;
}

int dm_parse_pool(const char *s, dm_opt_pool_t *out) {
  char b[64];
  uint64_t v;
  if (!s || trimmed(s, b, sizeof b)) return -1;
  dm_opt_bool_t yn;
  if (!strcasecmp(b, "auto")) *out = (dm_opt_pool_t){DM_OPT_POOL_AUTO, 0};
  else if (!strcmp(b, "0") || (!dm_parse_bool(b, &yn) && !yn))
    *out = (dm_opt_pool_t){DM_OPT_POOL_OFF, 0};
  else if (!strcmp(b, "1") || (!dm_parse_bool(b, &yn) && yn))
    *out = (dm_opt_pool_t){DM_OPT_POOL_AUTO, 0};
  else if (!dm_parse_bytes(b, &v)) *out = (dm_opt_pool_t){DM_OPT_POOL_BYTES, v};
  else return -1;
  return 0;
}

uint64_t dm_size_resolve(const dm_opt_size_t *s, uint64_t free_bytes) {
  switch (s->kind) {
  case DM_SIZE_BYTES: return s->bytes;
  case DM_SIZE_FRACTION: {
    uint64_t v = (uint64_t)floor((double)free_bytes * s->fraction);
    return v & ~(uint64_t)0xfffff;   /* whole MiB */
  }
  default: return 0;
  }
}

void dm_options_parse(dm_options_t *o, const char *(*get)(const char *name),
                      void (*warn)(const char *env, const char *value)) {
  memset(o, 0, sizeof *o);
#define DM_OPTION(type, field, env, def, doc)                       \
  do {                                                              \
    if (def[0]) (void)dm_parse_##type(def, &o->field);              \
    const char *v_ = get(env);                                      \
    if (v_ && *v_ && dm_parse_##type(v_, &o->field) && warn)        \
      warn(env, v_);                                                \
  } while (0);
#include "options.def"
#undef DM_OPTION
}

/* --- the process's options ---------------------------------------------- */

static dm_options_t g_opts;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static char g_warn[1024];
static size_t g_warn_len;

static const char *env_get(const char *name) { return secure_getenv(name); }

static void collect_warning(const char *env, const char *value) {
  int n = snprintf(g_warn + g_warn_len, sizeof g_warn - g_warn_len,
                   "devmalloc: warning: ignoring malformed %s=\"%.64s\", using the default\n",
                   env, value);
  if (n > 0 && g_warn_len + (size_t)n < sizeof g_warn) g_warn_len += (size_t)n;
}

static void init_options(void) {
  dm_options_parse(&g_opts, env_get, collect_warning);
  dm_log_open(&g_opts);
  if (g_warn_len) dm_log_write(g_warn, g_warn_len);
}

const dm_options_t *dm_options(void) {
  pthread_once(&g_once, init_options);
  return &g_opts;
}
