/*
 * options_obs.c — parsers of the observability option types of the table
 * (options.def): the stats format and a millisecond interval.
 *
 * Locking: none; pure functions (error convention of options.h).
 */
#include "options.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The one word of s (blanks around it allowed) into buf; -1 if none, more
 * than one, or too long. */
static int one_word(const char *s, char buf[16]) {
  char extra;
  return sscanf(s, " %15s %c", buf, &extra) == 1 && strlen(s) < 64 ? 0 : -1;
}

int dm_parse_statsfmt(const char *s, dm_opt_statsfmt_t *out) {
  char b[16];
  dm_opt_bool_t yn;
  if (!s || one_word(s, b)) return -1;
  if (!strcasecmp(b, "text"))
    *out = DM_STATS_TEXT;
  else if (!strcasecmp(b, "json"))
    *out = DM_STATS_JSON;
  else if (!strcasecmp(b, "csv"))
    *out = DM_STATS_CSV;
  else if (!dm_parse_bool(b, &yn))
    *out = yn ? DM_STATS_TEXT : DM_STATS_OFF;
  else
    return -1;
  return 0;
}

int dm_parse_ms(const char *s, dm_opt_ms_t *out) {
  char b[16], *end;
  if (!s || one_word(s, b) || !isdigit((unsigned char)b[0])) return -1;
  unsigned long v = strtoul(b, &end, 10);
  if (!strcasecmp(end, "ms")) end += 2;
  if (*end || v > 60000) return -1;
  *out = (dm_opt_ms_t)v;
  return 0;
}
