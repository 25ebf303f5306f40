/*
 * options.h — devmalloc's options, read once from the environment.
 *
 * The table is interpose/options.def; dm_options() parses it on first call
 * (pthread_once) and returns the same immutable struct forever after. A
 * malformed value gives one warning (through dm_log) and the default.
 * Never call dm_options() before libc is initialized (i.e. from an ELF
 * constructor that runs before libc's): it uses getenv.
 *
 * Error convention: parsers return 0 on success, -1 on a malformed value
 * (output untouched).
 *
 * Thread safety: dm_options() is safe from any thread; the returned struct is
 * never modified after initialization.
 */
#ifndef DM_OPTIONS_H
#define DM_OPTIONS_H
#include <stddef.h>
#include <stdint.h>

typedef enum { DM_SIZE_UNSET = 0, DM_SIZE_BYTES, DM_SIZE_FRACTION } dm_size_kind_t;
typedef struct { dm_size_kind_t kind; uint64_t bytes; double fraction; } dm_opt_size_t;
typedef int dm_opt_bool_t;
typedef int dm_opt_level_t;
typedef const char *dm_opt_path_t;          /* NULL when unset */
typedef enum { DM_JIT_AUTO = 0, DM_JIT_OFF, DM_JIT_FORCE } dm_opt_jit_t;
typedef enum { DM_OPT_POOL_OFF = 0, DM_OPT_POOL_AUTO, DM_OPT_POOL_BYTES } dm_opt_pool_mode_t;
typedef struct { dm_opt_pool_mode_t mode; uint64_t bytes; } dm_opt_pool_t;
/* Observability option types (parsers in options_obs.c). */
typedef enum { DM_STATS_OFF = 0, DM_STATS_TEXT, DM_STATS_JSON, DM_STATS_CSV } dm_opt_statsfmt_t;
typedef unsigned dm_opt_ms_t;               /* milliseconds, 0 .. 60000 */

typedef struct dm_options {
#define DM_OPTION(type, field, env, def, doc) dm_opt_##type##_t field;
#include "options.def"
#undef DM_OPTION
} dm_options_t;

/* The process's options (parsed on first call). */
const dm_options_t *dm_options(void);

/* One row of the table, for docs/help/tests. */
typedef struct { const char *env, *def, *doc; } dm_option_info_t;
extern const dm_option_info_t dm_option_table[];
extern const size_t dm_option_count;

/* Parsers (exposed for tests and for the other helpers). */
int dm_parse_size(const char *s, dm_opt_size_t *out);
int dm_parse_bytes(const char *s, uint64_t *out);  /* "64M" -> 67108864 */
int dm_parse_bool(const char *s, dm_opt_bool_t *out);
int dm_parse_level(const char *s, dm_opt_level_t *out);
int dm_parse_path(const char *s, dm_opt_path_t *out);
int dm_parse_jit(const char *s, dm_opt_jit_t *out);
int dm_parse_pool(const char *s, dm_opt_pool_t *out);
int dm_parse_statsfmt(const char *s, dm_opt_statsfmt_t *out); /* 0/1/off/on/text/json/csv */
int dm_parse_ms(const char *s, dm_opt_ms_t *out);

/* Parse the table with a caller's getenv; each malformed value calls
 * warn(env, value) once and keeps the default. Used by dm_options() and tests. */
void dm_options_parse(dm_options_t *o, const char *(*get)(const char *name),
                      void (*warn)(const char *env, const char *value));

/* Heap bytes for a size option given the free device memory (0 if unset). */
uint64_t dm_size_resolve(const dm_opt_size_t *s, uint64_t free_bytes);

#endif
