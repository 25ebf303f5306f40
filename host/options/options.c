/*
 * options.c — the options table (options.def): its rows, parsing it with the
 * parsers of opt_parse.h (malformed values and values raised to a minimum
 * reported through the caller's callback), and the closest option name for a
 * DEVMALLOC_* name that is none. The process's own options are process.c's.
 *
 * Locking: none; pure functions over the table.
 */
#include "options.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const dm_option_info_t dm_option_table[] = {
#define DM_OPTION(type, field, env, def, doc) {env, def, doc, DM_OPT_FORMS_##type},
#include "options.def"
#undef DM_OPTION
};
const size_t dm_option_count = sizeof dm_option_table / sizeof dm_option_table[0];

uint64_t dm_size_resolve(const dm_opt_size_t *s, uint64_t free_bytes) {
  switch (s->kind) {
  case DM_SIZE_BYTES: return s->bytes;
  case DM_SIZE_FRACTION: {
    uint64_t v = (uint64_t)floor((double)free_bytes * s->fraction);
    v &= ~(uint64_t)0xfffff; /* whole MiB, never none */
    return v < DM_MIN_HEAP_BYTES ? DM_MIN_HEAP_BYTES : v;
  }
  default: return 0;
  }
}

/* Options whose value has a floor: raised, with a warning. */
static void check_minimum(dm_options_t *o, const char *(*get)(const char *),
                          void (*warn)(const char *, const char *, const char *)) {
  if (o->heap_size.kind == DM_SIZE_BYTES && o->heap_size.bytes < DM_MIN_HEAP_BYTES) {
    o->heap_size.bytes = DM_MIN_HEAP_BYTES;
    if (warn)
      warn("DEVMALLOC_HEAP_SIZE", get("DEVMALLOC_HEAP_SIZE"),
           "is below the minimum heap; using 1M (1048576 bytes)");
  }
  if (o->heap_initial < DM_MIN_HEAP_BYTES) {
    o->heap_initial = DM_MIN_HEAP_BYTES;
    if (warn)
      warn("DEVMALLOC_HEAP_INITIAL", get("DEVMALLOC_HEAP_INITIAL"),
           "is below the minimum heap; using 1M (1048576 bytes)");
  }
}

int dm_options_parse(dm_options_t *o, const char *(*get)(const char *name),
                     void (*warn)(const char *env, const char *value, const char *what)) {
  char what[320];
  int bad = 0;
  memset(o, 0, sizeof *o);
#define DM_OPTION(type, field, env, def, doc)                                                               \
  do {                                                                                                      \
    if (def[0]) (void)dm_parse_##type(def, &o->field);                                                      \
    const char *v_ = get(env);                                                                              \
    if (v_ && *v_ && dm_parse_##type(v_, &o->field)) {                                                      \
      bad++;                                                                                                \
      snprintf(what, sizeof what, "is not valid: expected %s; using the default (%s)", DM_OPT_FORMS_##type, \
               def[0] ? def : "unset");                                                                     \
      if (warn) warn(env, v_, what);                                                                        \
    }                                                                                                       \
  } while (0);
#include "options.def"
#undef DM_OPTION
  check_minimum(o, get, warn);
  return bad;
}

/* Edit distance of two short names (capped at 8 per row: names are short). */
static unsigned distance(const char *a, const char *b) {
  unsigned row[64], n = (unsigned)strlen(b);
  if (n >= 64 || strlen(a) >= 64) return 99;
  for (unsigned j = 0; j <= n; j++) row[j] = j;
  for (unsigned i = 1; a[i - 1]; i++) {
    unsigned diag = row[0];
    row[0] = i;
    for (unsigned j = 1; j <= n; j++) {
      unsigned up = row[j];
      unsigned best = diag + (a[i - 1] != b[j - 1]);
      if (up + 1 < best) best = up + 1;
      if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
      row[j] = best;
      diag = up;
    }
  }
  return row[n];
}

const char *dm_option_suggest(const char *name) {
  const char *best = NULL;
  unsigned bestd = 4; /* farther than 3 edits: no suggestion */
  for (size_t i = 0; i < dm_option_count; i++) {
    unsigned d = distance(name, dm_option_table[i].env);
    if (d < bestd) {
      bestd = d;
      best = dm_option_table[i].env;
    }
  }
  return best;
}

/* DEVMALLOC_* names the tools use that are not shim options. */
static const char *const g_known_other[] = {"DEVMALLOC_PRELOAD", NULL};

int dm_options_unknown(char *const *env, void (*unknown)(const char *name, const char *suggest)) {
  int n = 0;
  for (char *const *e = env; e && *e; e++) {
    if (strncmp(*e, "DEVMALLOC_", 10)) continue;
    const char *eq = strchr(*e, '=');
    size_t len = eq ? (size_t)(eq - *e) : strlen(*e);
    if (dm_option_known(*e, len) || len >= 64) continue;
    char name[64];
    memcpy(name, *e, len);
    name[len] = 0;
    n++;
    if (unknown) unknown(name, dm_option_suggest(name));
  }
  return n;
}

int dm_option_known(const char *name, size_t len) {
  for (size_t i = 0; i < dm_option_count; i++)
    if (strlen(dm_option_table[i].env) == len && !strncmp(dm_option_table[i].env, name, len)) return 1;
  for (int i = 0; g_known_other[i]; i++)
    if (strlen(g_known_other[i]) == len && !strncmp(g_known_other[i], name, len)) return 1;
  return 0;
}
