/*
 * cache.h — on-disk cache of JIT-linked images, so a second start pays no JIT.
 *
 * Directory: DEVMALLOC_CACHE_DIR, else $XDG_CACHE_HOME/devmalloc, else
 * $HOME/.cache/devmalloc; an absolute path. Opened by cache_dir.c: missing
 * directories are created 0700 only inside directories the effective user
 * owns, symbolic links are followed only where root or that user put them,
 * and the final one must be a real directory owned by the effective user
 * with no group/other permission bits; otherwise dm_cache_open() refuses and
 * the caller runs uncached. All file operations go through the directory's
 * fd (openat/renameat), so the checked directory is the one used. Temp files
 * of writers that died (older than DM_CACHE_STALE_S) are removed at open.
 *
 * Entry "<64 hex key>.cubin": a 96-byte header (magic "DMJITC01", format
 * version, header size, payload size, the key, the payload's CRC-32C in a
 * 32-byte field) followed by the payload. Format 1 held the payload's
 * SHA-256 there; its entries fail the header check, are removed, and are
 * written again by the next link (one JIT per module). dm_cache_get()
 * verifies all of it (and that the file is a regular file of ours with the
 * exact size; opened O_NONBLOCK, so a FIFO cannot block) and treats any
 * mismatch as a miss, removing the bad entry if it is still the file it
 * judged (a writer may have renamed a good one into place meanwhile).
 * dm_cache_put() writes a temp file (O_EXCL, 0600) and renames it into
 * place: readers see the old entry, the new one, or none, never a partial
 * one; an entry larger than RLIMIT_FSIZE allows is not written (no SIGXFSZ).
 *
 * Keys: SHA-256 over tagged inputs, built with dm_cache_key_*().
 *
 * Errors: relink_err.h. Locking: a dm_cache_t is immutable after open and may
 * be used from any thread at once; concurrent writers of the same key (even
 * across processes) are safe, the last rename wins.
 */
#ifndef DM_CACHE_H
#define DM_CACHE_H
#include "sha256.h"
#include <stddef.h>
#include <stdint.h>

#define DM_CACHE_MAGIC "DMJITC01"
#define DM_CACHE_FORMAT 2u
#define DM_CACHE_HDR 96u

typedef struct {
  uint8_t b[32];
} dm_cache_key_t;
typedef struct dm_cache dm_cache_t;

/* Key building: each part is added with its length, so parts cannot run
 * into each other. */
typedef struct {
  dm_sha256_t h;
} dm_cache_keyer_t;
void dm_cache_key_init(dm_cache_keyer_t *k, const char *purpose);
void dm_cache_key_add(dm_cache_keyer_t *k, const void *data, size_t n);
void dm_cache_key_add_str(dm_cache_keyer_t *k, const char *s);
void dm_cache_key_add_u64(dm_cache_keyer_t *k, uint64_t v);
void dm_cache_key_final(dm_cache_keyer_t *k, dm_cache_key_t *out);
void dm_cache_key_hex(const dm_cache_key_t *k, char out[65]);

/* The default directory (see above) into buf. -ENOENT when no HOME. */
int dm_cache_default_dir(char *buf, size_t len, char *why, size_t whylen);

/* Temp files older than this (seconds) are left-overs of dead writers. */
#define DM_CACHE_STALE_S 3600

/* Open the directory by the rules above (cache_dir.c): its fd, or a negative
 * errno with `why` filled. */
int dm_cache_dir_open(const char *path, char *why, size_t whylen);

/* Open and check the directory (creating it as above). */
int dm_cache_open(const char *dir, dm_cache_t **out, char *why, size_t whylen);
void dm_cache_close(dm_cache_t *c);
const char *dm_cache_path(const dm_cache_t *c);

/* 1: hit, *data (malloc'd) and *size set. 0: miss (absent, or a bad entry
 * that was removed; why says which). Negative: I/O error. */
int dm_cache_get(dm_cache_t *c, const dm_cache_key_t *k, void **data, size_t *size, char *why, size_t whylen);
int dm_cache_put(dm_cache_t *c, const dm_cache_key_t *k, const void *data, size_t size, char *why,
                 size_t whylen);

#ifdef DM_TESTING
/* Test builds only (-DDM_TESTING): make the next writes fail after `bytes`
 * bytes of the temp file (SIZE_MAX: off). Not thread-safe. */
void dm_cache_test_fail_writes_after(size_t bytes);
#endif

#endif
