/*
 * options_help.c — print the environment-variable section of `devmalloc
 * --help` from the options table (host/options/options.def): name, default,
 * valid forms and the one-line doc. Run at build time; its output replaces
 * the @OPTIONS_HELP@ line of tools/devmalloc in the built CLI.
 * Locking: none (a build tool).
 */
#include <stdio.h>

#include "opt_parse.h"

int main(void) {
  printf("environment (read by the shim; docs/options.md has the details):\n");
#define DM_OPTION(type, field, env, def, doc)                                                   \
  printf("  %s  (default: %s)\n      %s\n      values: %s\n", env, def[0] ? def : "unset", doc, \
         DM_OPT_FORMS_##type);
#include "options.def"
#undef DM_OPTION
  return 0;
}
