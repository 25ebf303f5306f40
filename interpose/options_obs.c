/*
 * options_obs.c — parsers of the observability option types of the table
 * (options.def): the stats format and a millisecond interval.
 *
 * Locking: none; pure functions (error convention of options.h).
 */
#include "options.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Copy s without leading/trailing blanks into buf; -1 if empty or too long. */
static int trim_copy(const char *s, char *buf, size_t n) {
  while (*s && isspace((unsigned char)*s)) s++;
  size_t len = strlen(s);
  while (len && isspace((unsigned char)s[len - 1])) len--;
  if (len == 0 || len >= n) return -1;
  memcpy(buf, s, len);
  buf[len] = 0;
  return 0;
}

int dm_parse_statsfmt(const char *s, dm_opt_statsfmt_t *out) {
  char b[16];
  dm_opt_bool_t yn;
  if (!s || trim_copy(s, b, sizeof b)) return -1;
  if (!strcasecmp(b, "text")) *out = DM_STATS_TEXT;
  else if (!strcasecmp(b, "json")) *out = DM_STATS_JSON;
  else if (!strcasecmp(b, "csv")) *out = DM_STATS_CSV;
  else if (!dm_parse_bool(b, &yn)) *out = yn ? DM_STATS_TEXT : DM_STATS_OFF;
  else return -1;
  return 0;
}

int dm_parse_ms(const char *s, dm_opt_ms_t *out) {
  char b[16], *end;
  if (!s || trim_copy(s, b, sizeof b) || !isdigit((unsigned char)b[0])) return -1;
  unsigned long v = strtoul(b, &end, 10);
  if (!strcasecmp(end, "ms")) end += 2;
  if (*end || v > 60000) return -1;
  *out = (dm_opt_ms_t)v;
  return 0;
}
