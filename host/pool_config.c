/*
 * pool_config.c — parsing of DEVMALLOC_HOST_POOL values (see pool_config.h).
 */
#include "pool_config.h"

#include <ctype.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "pool.h"

static int word_is(const char *s, size_t n, const char *w) {
  return strlen(w) == n && strncasecmp(s, w, n) == 0;
}

int dm_pool_parse_option(const char *s, dm_pool_mode_t *mode, size_t *bytes) {
  if (!mode || !bytes) return DM_POOL_EINVAL;
  if (!s) s = "";
  while (isspace((unsigned char)*s)) s++;
  size_t n = strlen(s);
  while (n && isspace((unsigned char)s[n - 1])) n--;
  if (n == 0 || word_is(s, n, "off") || word_is(s, n, "no") ||
      word_is(s, n, "false") || word_is(s, n, "0")) {
    *mode = DM_POOL_MODE_OFF;
    return DM_POOL_OK;
  }
  if (word_is(s, n, "auto") || word_is(s, n, "on") || word_is(s, n, "yes") ||
      word_is(s, n, "true")) {
    *mode = DM_POOL_MODE_AUTO;
    return DM_POOL_OK;
  }
  size_t i = 0;
  uint64_t v = 0;
  if (!isdigit((unsigned char)s[0])) return DM_POOL_EINVAL;
  for (; i < n && isdigit((unsigned char)s[i]); i++) {
    if (v > (UINT64_MAX - 9) / 10) return DM_POOL_EINVAL;
    v = v * 10 + (uint64_t)(s[i] - '0');
  }
  const char *suf = s + i;
  size_t sn = n - i;
  unsigned shift = 0;
  if (sn) {
    switch (toupper((unsigned char)suf[0])) {
    case 'K': shift = 10; break;
    case 'M': shift = 20; break;
    case 'G': shift = 30; break;
    case 'T': shift = 40; break;
    case 'B': shift = 0; break;
    default: return DM_POOL_EINVAL;
    }
    const char *rest = suf + 1;
    size_t rn = sn - 1;
    if (toupper((unsigned char)suf[0]) == 'B') {
      if (rn) return DM_POOL_EINVAL;
    } else if (!(rn == 0 || word_is(rest, rn, "B") || word_is(rest, rn, "iB"))) {
      return DM_POOL_EINVAL;
    }
  }
  if (v == 0) {
    *mode = DM_POOL_MODE_OFF;
    return DM_POOL_OK;
  }
  if (shift && v > (UINT64_MAX >> shift)) return DM_POOL_EINVAL;
  v <<= shift;
  if (v > SIZE_MAX) return DM_POOL_EINVAL;
  *mode = DM_POOL_MODE_BYTES;
  *bytes = (size_t)v;
  return DM_POOL_OK;
}
