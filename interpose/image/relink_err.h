/*
 * relink_err.h — the one error convention of the load-time re-link modules
 * (fatbin, decompress, cubin_elf, ptx_scan, jit_link, cache, relink).
 *
 * Every function that can fail returns an int: 0 (or a documented positive
 * value such as "found"/"hit") on success, a negative errno value on failure:
 *   -EINVAL  malformed or corrupt input (bad magic, size out of bounds, ...)
 *   -ENOTSUP well-formed input this code does not handle (unknown kind/codec)
 *   -ENOENT  nothing usable found (no PTX entry, cache miss where an error)
 *   -ENOMEM  allocation failed or a declared size exceeds DM_IMAGE_MAX
 *   -EPERM   refused for safety (cache directory owner/mode)
 *   -EIO     an I/O or driver call failed
 * and, when the caller passes a non-NULL `why` buffer, writes one line (no
 * trailing newline) saying what went wrong. Nothing here prints, except the
 * cache's one-time warning and relink.c's verbose lines.
 *
 * Locking: none (stateless helpers).
 */
#ifndef DM_RELINK_ERR_H
#define DM_RELINK_ERR_H
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/* Largest device image (compressed or not) the reader accepts: bounds every
 * allocation a corrupt header could ask for. */
#ifndef DM_IMAGE_MAX
#define DM_IMAGE_MAX ((size_t)1 << 30)
#endif

/* What one compressed fatbin entry may expand to: at most DM_INFLATE_MAX
 * bytes and at most DM_INFLATE_RATIO times its compressed size. A small frame
 * declaring a huge PTX is refused before any memory is taken for it. */
#define DM_INFLATE_CAP ((size_t)256 << 20)
#ifndef DM_INFLATE_MAX
#define DM_INFLATE_MAX (DM_IMAGE_MAX < DM_INFLATE_CAP ? DM_IMAGE_MAX : DM_INFLATE_CAP)
#endif
#define DM_INFLATE_RATIO 1024u

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static inline int
dm_fail(int err, char *why, size_t whylen, const char *fmt, ...) {
  if (why && whylen) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, whylen, fmt, ap);
    va_end(ap);
  }
  return err;
}

#endif
