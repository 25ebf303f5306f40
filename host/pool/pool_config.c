/*
 * pool_config.c — parsing of DEVMALLOC_HOST_POOL values (see pool_config.h),
 * with the option parser shared by every part (host/options/opt_parse.h).
 * Locking: none (pure).
 */
#include "pool_config.h"

#include <ctype.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "pool.h"
#include "options/opt_parse.h"

/* The shared option syntax (host/options/opt_parse.h): off/no/false/0, auto/
 * on/yes/true/1, or a byte count (4G, 1.5G); an empty value is off. */
int dm_pool_parse_option(const char *s, dm_pool_mode_t *mode, size_t *bytes) {
  if (!mode || !bytes) return DM_POOL_EINVAL;
  const char *p = s ? s : "";
  while (isspace((unsigned char)*p)) p++;
  if (!*p) {
    *mode = DM_POOL_MODE_OFF;
    return DM_POOL_OK;
  }
  dm_opt_pool_t v;
  if (dm_parse_pool(p, &v) || v.bytes > SIZE_MAX) return DM_POOL_EINVAL;
  *mode = v.mode == DM_OPT_POOL_OFF    ? DM_POOL_MODE_OFF
          : v.mode == DM_OPT_POOL_AUTO ? DM_POOL_MODE_AUTO
                                       : DM_POOL_MODE_BYTES;
  if (v.mode == DM_OPT_POOL_BYTES) *bytes = (size_t)v.bytes;
  return DM_POOL_OK;
}
