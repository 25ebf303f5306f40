/*
 * decompress.c — fatbin entry decompression (zstd, LZ4). See decompress.h.
 * Locking: none.
 */
#include "decompress.h"
#include "relink_err.h"
#include <lz4.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

int dm_decompress(int codec, const void *src, size_t srclen, void *dst, size_t dstlen, char *why,
                  size_t whylen) {
  switch (codec) {
  case DM_CODEC_ZSTD: {
    size_t r = ZSTD_decompress(dst, dstlen, src, srclen);
    if (ZSTD_isError(r)) return dm_fail(-EINVAL, why, whylen, "zstd: %s", ZSTD_getErrorName(r));
    if (r != dstlen) return dm_fail(-EINVAL, why, whylen, "zstd: %zu bytes out, header says %zu", r, dstlen);
    return 0;
  }
  case DM_CODEC_LZ4: {
    if (srclen > (size_t)LZ4_MAX_INPUT_SIZE || dstlen > (size_t)INT32_MAX)
      return dm_fail(-EINVAL, why, whylen, "lz4: sizes out of range");
    int r = LZ4_decompress_safe(src, dst, (int)srclen, (int)dstlen);
    if (r < 0) return dm_fail(-EINVAL, why, whylen, "lz4: corrupt block");
    if ((size_t)r != dstlen)
      return dm_fail(-EINVAL, why, whylen, "lz4: %d bytes out, header says %zu", r, dstlen);
    return 0;
  }
  case DM_CODEC_NONE:
    if (srclen != dstlen) return dm_fail(-EINVAL, why, whylen, "size mismatch");
    memcpy(dst, src, srclen);
    return 0;
  default: return dm_fail(-ENOTSUP, why, whylen, "unknown compression (flags name two codecs)");
  }
}

int dm_fb_entry_load(const dm_fb_entry_t *e, unsigned char **out, size_t *size, char *why, size_t whylen) {
  size_t n;
  const void *src = e->payload;
  size_t srclen;
  if (e->codec == DM_CODEC_NONE) {
    n = srclen = (size_t)e->payload_size;
  } else {
    n = (size_t)e->uncompressed_size;
    srclen = e->compressed_size;
  }
  if (n > DM_IMAGE_MAX) return dm_fail(-ENOMEM, why, whylen, "entry of %zu bytes too large", n);
  if (e->codec != DM_CODEC_NONE && (n > DM_INFLATE_MAX || n / DM_INFLATE_RATIO > srclen))
    return dm_fail(-ENOMEM, why, whylen,
                   "entry declares %zu bytes from %zu compressed "
                   "(limits: %zu bytes, ratio %u)",
                   n, srclen, (size_t)DM_INFLATE_MAX, DM_INFLATE_RATIO);
  unsigned char *buf = malloc(n + 1);
  if (!buf) return dm_fail(-ENOMEM, why, whylen, "out of memory (%zu bytes)", n + 1);
  int rc = dm_decompress(e->codec, src, srclen, buf, n, why, whylen);
  if (rc < 0) {
    free(buf);
    return rc;
  }
  buf[n] = 0;
  if (e->kind == DM_FB_KIND_PTX) n = strnlen((const char *)buf, n);
  *out = buf;
  *size = n;
  return 0;
}
