/*
 * stats_rec.h — one context's counters as a record, and its machine-readable
 * forms (docs/stats.md): a JSON object (DEVMALLOC_STATS=json, trace lines)
 * and a CSV row with a fixed header (DEVMALLOC_STATS=csv).
 *
 * Locking: none; the formatters are pure functions writing into the
 * caller's buffer.
 */
#ifndef DM_STATS_REC_H
#define DM_STATS_REC_H
#include <stddef.h>
#include <stdint.h>
#include "devmalloc.h"

typedef enum {
  DM_REC_LIVE = 0,  /* context alive, counters read at the end */
  DM_REC_DESTROYED, /* heap torn down with its context before the end */
  DM_REC_LOST       /* counters could no longer be read (device fault, context gone) */
} dm_rec_status_t;

typedef enum {
  DM_REC_EXACT = 0,  /* read at the moment the record describes */
  DM_REC_LAST_KNOWN, /* the last successful read (a sync sample or a snapshot) */
  DM_REC_NONE        /* never read: counters are zero, heap_bytes is the size asked for */
} dm_rec_counters_t;

typedef struct dm_stats_rec {
  unsigned long long ctx_id; /* cuCtxGetId */
  int device;
  dm_rec_status_t status;
  dm_rec_counters_t counters;
  uint64_t relinked_modules; /* modules re-linked at load time in the process */
  devmalloc_stats_t s;
} dm_stats_rec_t;

const char *dm_rec_status_name(dm_rec_status_t st);
const char *dm_rec_counters_name(dm_rec_counters_t c);

/* JSON object of r on one line (no newline), preceded inside the braces by
 * `extra` (already JSON members, no trailing comma; may be NULL). Returns the
 * length, or -1 when buf is too small (then buf holds nothing useful). */
int dm_rec_json(char *buf, size_t n, const dm_stats_rec_t *r, const char *extra);
/* CSV header line and one row (no newline); same return convention. */
int dm_rec_csv_header(char *buf, size_t n);
int dm_rec_csv_row(char *buf, size_t n, const dm_stats_rec_t *r);

/* A buffer big enough for any record. */
#define DM_REC_MAX 4096
#endif
