/*
 * check_env.c — devmalloc-check-env: the environment's DEVMALLOC_* options
 * checked up front with the shim's own parser (host/options/), so that
 * a bad value is seen before the program runs, even in a process that would
 * never reach CUDA. Each malformed value and each DEVMALLOC_* name that is
 * no option is one line on stderr (the shim's warning text); a value raised
 * to a minimum is one line too but accepted. `devmalloc run` runs this
 * before the program (--no-check-env skips it); `devmalloc check-env` alone.
 *
 *   devmalloc-check-env [--quiet]
 * Exit: 0 every value valid, 1 some refused, 2 usage.
 * Locking: none (a program).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

extern char **environ;

static const char *env_get(const char *name) { return getenv(name); }

static void warn(const char *env, const char *value, const char *what) {
  fprintf(stderr, "devmalloc: %s=\"%.64s\" %s\n", env, value ? value : "", what);
}

static void unknown(const char *name, const char *s) {
  fprintf(stderr, "devmalloc: unknown option %s%s%s\n", name,
          s ? "; did you mean " : " (docs/options.md lists them)", s ? s : "");
}

int main(int argc, char **argv) {
  int quiet = argc == 2 && !strcmp(argv[1], "--quiet");
  if (argc > 2 || (argc == 2 && !quiet)) {
    fprintf(stderr, "usage: devmalloc-check-env [--quiet]\n");
    return 2;
  }
  dm_options_t o;
  int bad = dm_options_parse(&o, env_get, warn) + dm_options_unknown(environ, unknown);
  if (bad) return 1;
  if (!quiet) {
    unsigned set = 0;
    for (size_t i = 0; i < dm_option_count; i++) {
      const char *v = getenv(dm_option_table[i].env);
      set += v && *v;
    }
    printf("devmalloc: %u DEVMALLOC_* option(s) set, all valid\n", set);
  }
  return 0;
}
