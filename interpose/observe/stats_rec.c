/*
 * stats_rec.c — JSON and CSV forms of a context's counters (stats_rec.h).
 * The field list is written once (FIELDS below) and used by both forms, so
 * the JSON keys and the CSV columns cannot drift apart.
 *
 * Locking: none (pure functions).
 */
#include "stats_rec.h"

#include <stdarg.h>
#include <stdio.h>

/* Scalar counters, in output order: X(name, expression of r). */
#define FIELDS(X)                          \
  X(heap_bytes, r->s.heap_bytes)           \
  X(pool_bytes, r->s.pool_bytes)           \
  X(mapped_bytes, r->s.mapped_bytes)       \
  X(growth_events, r->s.growth_events)     \
  X(grows, r->s.grows)                     \
  X(max_bytes, r->s.max_bytes)             \
  X(mapped_peak, r->s.mapped_peak)         \
  X(grow_waits, r->s.grow_waits)           \
  X(grow_timeouts, r->s.grow_timeouts)     \
  X(trims, r->s.trims)                     \
  X(trimmed_bytes, r->s.trimmed_bytes)     \
  X(allocs, r->s.allocs)                   \
  X(frees, r->s.frees)                     \
  X(failures, r->s.failures)               \
  X(double_frees, r->s.double_frees)       \
  X(foreign_frees, r->s.foreign_frees)     \
  X(bytes_in_use, r->s.bytes_in_use)       \
  X(footprint_bytes, r->s.footprint_bytes) \
  X(peak_bytes, r->s.peak_bytes)           \
  X(large_allocs, r->s.large_allocs)       \
  X(check_failures, r->s.check_failures)   \
  X(check_first_bad, r->s.check_first_bad) \
  X(relinked_modules, r->relinked_modules)

typedef struct {
  char *p;
  size_t n, len;
  int over;
} out_t;

static void put(out_t *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(out_t *o, const char *fmt, ...) {
  if (o->over) return;
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(o->p + o->len, o->n - o->len, fmt, ap);
  va_end(ap);
  if (k < 0 || (size_t)k >= o->n - o->len)
    o->over = 1;
  else
    o->len += (size_t)k;
}

static int done(const out_t *o) { return o->over ? -1 : (int)o->len; }

const char *dm_rec_status_name(dm_rec_status_t st) {
  switch (st) {
  case DM_REC_LIVE: return "live";
  case DM_REC_DESTROYED: return "destroyed";
  default: return "context_lost";
  }
}

const char *dm_rec_counters_name(dm_rec_counters_t c) {
  switch (c) {
  case DM_REC_EXACT: return "exact";
  case DM_REC_LAST_KNOWN: return "last_known";
  default: return "none";
  }
}

int dm_rec_json(char *buf, size_t n, const dm_stats_rec_t *r, const char *extra) {
  out_t o = {buf, n, 0, n == 0};
  put(&o, "{%s%s\"context\":%llu,\"device\":%d,\"status\":\"%s\",\"counters\":\"%s\"", extra ? extra : "",
      extra && *extra ? "," : "", r->ctx_id, r->device, dm_rec_status_name(r->status),
      dm_rec_counters_name(r->counters));
#define J(name, v) put(&o, ",\"" #name "\":%llu", (unsigned long long)(v));
  FIELDS(J)
#undef J
  put(&o, ",\"classes\":[");
  for (int c = 0; c < DEVMALLOC_NUM_CLASSES; c++)
    put(&o, "%s{\"size\":%llu,\"allocs\":%llu}", c ? "," : "", (unsigned long long)r->s.class_size[c],
        (unsigned long long)r->s.class_allocs[c]);
  put(&o, "]}");
  return done(&o);
}

int dm_rec_csv_header(char *buf, size_t n) {
  out_t o = {buf, n, 0, n == 0};
  put(&o, "context,device,status,counters");
#define H(name, v) put(&o, "," #name);
  FIELDS(H)
#undef H
  for (int c = 0; c < DEVMALLOC_NUM_CLASSES; c++) put(&o, ",class%d_size,class%d_allocs", c, c);
  return done(&o);
}

int dm_rec_csv_row(char *buf, size_t n, const dm_stats_rec_t *r) {
  out_t o = {buf, n, 0, n == 0};
  put(&o, "%llu,%d,%s,%s", r->ctx_id, r->device, dm_rec_status_name(r->status),
      dm_rec_counters_name(r->counters));
#define C(name, v) put(&o, ",%llu", (unsigned long long)(v));
  FIELDS(C)
#undef C
  for (int c = 0; c < DEVMALLOC_NUM_CLASSES; c++)
    put(&o, ",%llu,%llu", (unsigned long long)r->s.class_size[c], (unsigned long long)r->s.class_allocs[c]);
  return done(&o);
}
