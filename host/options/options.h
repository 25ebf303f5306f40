/*
 * options.h — devmalloc's options, read once from the environment.
 *
 * The table is options.def (options.c); dm_options() (process.c) parses it on first call
 * (pthread_once) and returns the same immutable struct forever after. A
 * malformed value gives one warning naming the valid forms and the value used
 * (the default); a DEVMALLOC_* variable that is no option gives one warning
 * with the closest option name. The value syntax is opt_parse.h's.
 * Never call dm_options() before libc is initialized (i.e. from an ELF
 * constructor that runs before libc's): it uses getenv.
 *
 * Thread safety: dm_options() is safe from any thread; the returned struct is
 * never modified after initialization.
 */
#ifndef DM_OPTIONS_H
#define DM_OPTIONS_H
#include <stddef.h>
#include <stdint.h>

#include "opt_parse.h" /* value types and parsers */

typedef struct dm_options {
#define DM_OPTION(type, field, env, def, doc) dm_opt_##type##_t field;
#include "options.def"
#undef DM_OPTION
} dm_options_t;

/* The process's options (parsed on first call). */
const dm_options_t *dm_options(void);

/* One row of the table, for docs/help/tests: forms = the valid values. */
typedef struct {
  const char *env, *def, *doc, *forms;
} dm_option_info_t;
extern const dm_option_info_t dm_option_table[];
extern const size_t dm_option_count;

/* Parse the table with a caller's getenv. Each value that is malformed, or
 * that is raised to a minimum, calls warn(env, value, what) once, `what`
 * saying the valid forms and the value used instead. Returns the number of
 * malformed values (refused: the default is used); values raised to a
 * minimum are accepted. Used by dm_options(), the CLI's environment check
 * (tools/check_env.c) and tests. */
int dm_options_parse(dm_options_t *o, const char *(*get)(const char *name),
                     void (*warn)(const char *env, const char *value, const char *what));

/* The DEVMALLOC_* names of env (a NULL-ended "NAME=value" array) that are no
 * option: unknown(name, closest option or NULL) for each; returns how many. */
int dm_options_unknown(char *const *env, void (*unknown)(const char *name, const char *suggest));

/* A DEVMALLOC_* name that is not an option: the closest option name (for
 * "did you mean"), or NULL when nothing is close. `name` is just the name. */
const char *dm_option_suggest(const char *name);
/* 1 when name[0..len) is an option, or a DEVMALLOC_* name the tools use. */
int dm_option_known(const char *name, size_t len);

/* The heap size option's floor, and the heap size when nothing sets one. */
#define DM_MIN_HEAP_BYTES ((size_t)1 << 20)
#define DM_DEFAULT_HEAP_BYTES ((size_t)256 << 20)
/* Heap bytes for a size option given the free device memory (0 if unset). */
uint64_t dm_size_resolve(const dm_opt_size_t *s, uint64_t free_bytes);

#endif
