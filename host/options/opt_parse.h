/*
 * opt_parse.h — the one parser of devmalloc's option values, shared by the
 * shim's table (options.c), the re-link library's stand-alone fallback
 * (relink.c), the host pool's option (host/pool/pool_config.c) and the benchmark
 * (bench/ab_bench.cu). Header-only (static functions, C and C++), so every
 * part gets the same syntax without linking another library.
 *
 * Syntax (docs/options.md):
 *   bytes   a number with an optional binary suffix K, M, G, T (also KB/KiB,
 *           any case; B = bytes); a fraction is allowed with a suffix
 *           (1.5G = 1610612736, rounded down to whole bytes); at least 1
 *           byte and at most DM_OPT_BYTES_MAX (1 PiB): larger values, such as
 *           2^64-1, are refused, never wrapped.
 *   size    bytes, or a fraction of free device memory from 0.001 to 1:
 *           0.5 or 50% (plain decimals: no sign, exponent, inf or nan).
 *   amount  bytes, or 0.
 *   block   0 (off) or bytes up to 8192 (DM_OPT_BLOCK_MAX).
 *   bool    1/0, yes/no, true/false, on/off (any case).
 *   level   0..2, or a bool (yes = 1).
 *   jit     auto (also on/yes/true/1), off (also no/false/0), force.
 *   pool    off (also no/false/0), auto (also on/yes/true/1), or bytes.
 * Values are trimmed; an empty value counts as unset. Parsers return 0 on
 * success and -1 on a malformed value (output untouched).
 *
 * Locking: pure functions, no state.
 */
#ifndef DM_OPT_PARSE_H
#define DM_OPT_PARSE_H
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define DM_OPT_UNUSED __attribute__((unused))
#define DM_OPT_BYTES_MAX ((uint64_t)1 << 50)
/* The smallest fraction of free memory a size may be (0.1%): smaller ones
 * would resolve to no memory at all. */
#define DM_OPT_FRACTION_MIN 0.001
/* The largest block size (the slab's largest class). */
#define DM_OPT_BLOCK_MAX 8192u

/* The valid forms of each kind, for warnings and --help. */
#define DM_OPT_FORMS_bytes "a byte count with optional K/M/G/T suffix (4096, 512M, 1.5G; at most 1P)"
#define DM_OPT_FORMS_size                                                                                 \
  "a byte count with optional K/M/G/T suffix (512M, 1.5G; at most 1P) or a fraction of free memory from " \
  "0.001 to 1 (0.5, 50%)"
#define DM_OPT_FORMS_amount "0 or a byte count with optional K/M/G/T suffix (4096, 64M, 1.5G; at most 1P)"
#define DM_OPT_FORMS_block "0 (off) or a byte count up to 8192 (128, 1K, 8K)"
#define DM_OPT_FORMS_bool "1/0, yes/no, true/false, on/off"
#define DM_OPT_FORMS_level "0, 1 or 2 (yes/no = 1/0)"
#define DM_OPT_FORMS_path "a path"
#define DM_OPT_FORMS_jit "auto, off or force (yes/no = auto/off)"
#define DM_OPT_FORMS_pool "off, auto, or a byte count with optional K/M/G/T suffix (4G)"
#define DM_OPT_FORMS_statsfmt "0/1, text, json or csv (yes/no = text/off)"
#define DM_OPT_FORMS_ms "milliseconds, 0 to 60000 (10, 10ms)"

typedef enum { DM_SIZE_UNSET = 0, DM_SIZE_BYTES, DM_SIZE_FRACTION } dm_size_kind_t;
typedef struct {
  dm_size_kind_t kind;
  uint64_t bytes;
  double fraction;
} dm_opt_size_t;
typedef uint64_t dm_opt_bytes_t;
typedef uint64_t dm_opt_amount_t;
typedef unsigned dm_opt_block_t;
typedef int dm_opt_bool_t;
typedef int dm_opt_level_t;
typedef const char *dm_opt_path_t; /* NULL when unset */
typedef enum { DM_JIT_AUTO = 0, DM_JIT_OFF, DM_JIT_FORCE } dm_opt_jit_t;
typedef enum { DM_OPT_POOL_OFF = 0, DM_OPT_POOL_AUTO, DM_OPT_POOL_BYTES } dm_opt_pool_mode_t;
typedef struct {
  dm_opt_pool_mode_t mode;
  uint64_t bytes;
} dm_opt_pool_t;
/* Observability option types (parsers in options_obs.c). */
typedef enum { DM_STATS_OFF = 0, DM_STATS_TEXT, DM_STATS_JSON, DM_STATS_CSV } dm_opt_statsfmt_t;
typedef unsigned dm_opt_ms_t;                                 /* milliseconds, 0 .. 60000 */
int dm_parse_statsfmt(const char *s, dm_opt_statsfmt_t *out); /* 0/1/off/on/text/json/csv */
int dm_parse_ms(const char *s, dm_opt_ms_t *out);

/* Copy s without leading/trailing blanks into buf; -1 if empty or too long. */
static DM_OPT_UNUSED int dm_opt_trim(const char *s, char *buf, size_t n) {
  while (*s && isspace((unsigned char)*s)) s++;
  size_t len = strlen(s);
  while (len && isspace((unsigned char)s[len - 1])) len--;
  if (len == 0 || len >= n) return -1;
  memcpy(buf, s, len);
  buf[len] = 0;
  return 0;
}

static DM_OPT_UNUSED int dm_opt_word(const char *b, const char *const *words) {
  for (int i = 0; words[i]; i++)
    if (!strcasecmp(b, words[i])) return 1;
  return 0;
}

/* A plain decimal, digits with an optional fraction (12, 0.5, .5): no sign,
 * exponent, hex, inf or nan. -1 if b is anything else. */
static DM_OPT_UNUSED int dm_opt_decimal(const char *b, double *out) {
  const char *p = b;
  int digits = 0;
  while (isdigit((unsigned char)*p)) p++, digits++;
  if (*p == '.')
    for (p++; isdigit((unsigned char)*p); p++) digits++;
  if (*p || !digits) return -1;
  *out = strtod(b, NULL);
  return 0;
}

/* 1 yes-word, 0 no-word, -1 neither (b already trimmed). */
static DM_OPT_UNUSED int dm_opt_yes_no(const char *b) {
  static const char *const yes[] = {"1", "yes", "true", "on", NULL};
  static const char *const no[] = {"0", "no", "false", "off", NULL};
  return dm_opt_word(b, yes) ? 1 : dm_opt_word(b, no) ? 0 : -1;
}

static DM_OPT_UNUSED int dm_parse_bytes(const char *s, uint64_t *out) {
  char b[64], *end;
  if (!s || dm_opt_trim(s, b, sizeof b)) return -1;
  if (!isdigit((unsigned char)b[0])) return -1;
  errno = 0;
  unsigned long long whole = strtoull(b, &end, 10);
  if (errno) return -1;
  double frac = 0.0;
  int has_frac = 0;
  if (*end == '.') { /* 1.5G */
    char *fe = end + 1;
    while (isdigit((unsigned char)*fe)) fe++;
    if (fe == end + 1) return -1; /* "1." */
    frac = strtod(end, NULL);     /* digits only: no exponent */
    end = fe;
    has_frac = 1;
  }
  unsigned shift = 0;
  if (*end) {
    switch (toupper((unsigned char)*end)) {
    case 'K': shift = 10; break;
    case 'M': shift = 20; break;
    case 'G': shift = 30; break;
    case 'T': shift = 40; break;
    case 'P': shift = 50; break;
    case 'B': shift = 0; break;
    default: return -1;
    }
    end++;
    if (shift && (*end == 'i' || *end == 'I')) end++; /* KiB, MiB */
    if (shift && (*end == 'b' || *end == 'B')) end++; /* KB, MiB */
    if (*end) return -1;
  }
  if (has_frac && !shift) return -1; /* "1.5" is not a byte count */
  if (whole > (DM_OPT_BYTES_MAX >> shift)) return -1;
  uint64_t v = (uint64_t)whole << shift;
  v += (uint64_t)floor(frac * (double)((uint64_t)1 << shift));
  if (v == 0 || v > DM_OPT_BYTES_MAX) return -1;
  *out = v;
  return 0;
}

static DM_OPT_UNUSED int dm_parse_size(const char *s, dm_opt_size_t *out) {
  char b[64];
  if (!s || dm_opt_trim(s, b, sizeof b)) return -1;
  size_t len = strlen(b);
  double f;
  if (b[len - 1] == '%') { /* "50%" */
    b[len - 1] = 0;
    if (dm_opt_decimal(b, &f)) return -1;
    f /= 100.0;
  } else {
    uint64_t v;
    if (!dm_parse_bytes(b, &v)) {
      out->kind = DM_SIZE_BYTES;
      out->bytes = v;
      out->fraction = 0.0;
      return 0;
    }
    if (!strchr(b, '.') || dm_opt_decimal(b, &f)) return -1; /* "0.5" */
  }
  if (!(f >= DM_OPT_FRACTION_MIN && f <= 1.0)) return -1;
  out->kind = DM_SIZE_FRACTION;
  out->bytes = 0;
  out->fraction = f;
  return 0;
}

static DM_OPT_UNUSED int dm_parse_bool(const char *s, dm_opt_bool_t *out) {
  char b[16];
  if (!s || dm_opt_trim(s, b, sizeof b)) return -1;
  int yn = dm_opt_yes_no(b);
  if (yn < 0) return -1;
  *out = yn;
  return 0;
}

static DM_OPT_UNUSED int dm_parse_level(const char *s, dm_opt_level_t *out) {
  char b[16], *end;
  if (!s || dm_opt_trim(s, b, sizeof b)) return -1;
  if (!isdigit((unsigned char)b[0])) return dm_parse_bool(b, out);
  long v = strtol(b, &end, 10);
  if (*end || v < 0 || v > 2) return -1;
  *out = (int)v;
  return 0;
}

/* bytes, or 0. */
static DM_OPT_UNUSED int dm_parse_amount(const char *s, dm_opt_amount_t *out) {
  char b[64];
  if (!s || dm_opt_trim(s, b, sizeof b)) return -1;
  if (!b[strspn(b, "0")]) {
    *out = 0;
    return 0;
  }
  return dm_parse_bytes(b, out);
}

/* 0 (off), or bytes up to DM_OPT_BLOCK_MAX. */
static DM_OPT_UNUSED int dm_parse_block(const char *s, dm_opt_block_t *out) {
  dm_opt_amount_t v;
  if (dm_parse_amount(s, &v) || v > DM_OPT_BLOCK_MAX) return -1;
  *out = (dm_opt_block_t)v;
  return 0;
}

static DM_OPT_UNUSED int dm_parse_path(const char *s, dm_opt_path_t *out) {
  if (!s) return -1;
  if (!*s) {
    *out = NULL;
    return 0;
  }
  char *d = strdup(s);
  if (!d) return -1;
  *out = d; /* kept for the life of the process */
  return 0;
}

static DM_OPT_UNUSED int dm_parse_jit(const char *s, dm_opt_jit_t *out) {
  char b[16];
  if (!s || dm_opt_trim(s, b, sizeof b)) return -1;
  int yn = dm_opt_yes_no(b);
  if (!strcasecmp(b, "auto") || yn == 1)
    *out = DM_JIT_AUTO;
  else if (yn == 0)
    *out = DM_JIT_OFF;
  else if (!strcasecmp(b, "force"))
    *out = DM_JIT_FORCE;
  else
    return -1;
  return 0;
}

static DM_OPT_UNUSED int dm_parse_pool(const char *s, dm_opt_pool_t *out) {
  char b[64];
  uint64_t v;
  if (!s || dm_opt_trim(s, b, sizeof b)) return -1;
  int yn = dm_opt_yes_no(b);
  if (yn == 0) {
    out->mode = DM_OPT_POOL_OFF;
    out->bytes = 0;
  } else if (yn == 1 || !strcasecmp(b, "auto")) {
    out->mode = DM_OPT_POOL_AUTO;
    out->bytes = 0;
  } else if (!dm_parse_bytes(b, &v)) {
    out->mode = DM_OPT_POOL_BYTES;
    out->bytes = v;
  } else
    return -1;
  return 0;
}

#endif
