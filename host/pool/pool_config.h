/*
 * pool_config.h — parsing of the pool option value
 * (DEVMALLOC_HOST_POOL=<bytes>|auto|off).
 *
 * Pure functions, no state, no locking needed.
 * Error convention: 0 (DM_POOL_OK) or DM_POOL_EINVAL (pool.h).
 */
#ifndef DM_POOL_CONFIG_H
#define DM_POOL_CONFIG_H
#include <stddef.h>

typedef enum dm_pool_mode {
  DM_POOL_MODE_OFF = 0,
  DM_POOL_MODE_AUTO = 1, /* first chunk: the largest the device gives */
  DM_POOL_MODE_BYTES = 2 /* first chunk: a configured size */
} dm_pool_mode_t;

/* Parse `s`: NULL, "", "off", "no", "false", "0" -> off; "auto", "on",
 * "yes", "true" -> auto; otherwise a byte count with an optional binary
 * suffix K, M, G, T (also KB/KiB/..., any case), e.g. "1G", "512MiB",
 * "1073741824" -> bytes. Surrounding blanks are ignored. On error *mode and
 * *bytes are left unchanged. */
int dm_pool_parse_option(const char *s, dm_pool_mode_t *mode, size_t *bytes);

#endif
