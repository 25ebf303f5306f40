/*
 * fatbin.c — bounds-checked fatbin and registration-wrapper reader.
 * See fatbin.h for the layout. Locking: none (no state).
 */
#include "fatbin.h"
#include "relink_err.h"
#include "bytes.h"
#include <string.h>

dm_image_kind_t dm_image_kind(const void *p, size_t len) {
  if (!p || len < 4) return DM_IMG_UNKNOWN;
  const uint8_t *b = p;
  uint32_t m = rd32(b);
  if (m == DM_FATBIN_WRAPPER_MAGIC) return DM_IMG_WRAPPER;
  if (m == DM_FATBIN_MAGIC) return DM_IMG_FATBIN;
  if (b[0] == 0x7f && b[1] == 'E' && b[2] == 'L' && b[3] == 'F') return DM_IMG_ELF;
  /* PTX is text: starts with a comment, a directive or whitespace. */
  if (b[0] == '/' || b[0] == '.' || b[0] == '\n' || b[0] == ' ' || b[0] == '\t' || b[0] == '\r')
    return DM_IMG_PTX;
  return DM_IMG_UNKNOWN;
}

const char *dm_fb_kind_name(unsigned kind) {
  switch (kind) {
  case DM_FB_KIND_PTX: return "PTX";
  case DM_FB_KIND_ELF: return "ELF";
  default: return "unknown";
  }
}

const char *dm_codec_name(int codec) {
  switch (codec) {
  case DM_CODEC_NONE: return "none";
  case DM_CODEC_LZ4: return "lz4";
  case DM_CODEC_ZSTD: return "zstd";
  default: return "invalid";
  }
}

static int check_header(const uint8_t *b, size_t len, dm_fatbin_t *fb, char *why, size_t whylen) {
  if (len < DM_FATBIN_HEADER_MIN)
    return dm_fail(-EINVAL, why, whylen, "fatbin truncated: %zu bytes, header needs %u", len,
                   DM_FATBIN_HEADER_MIN);
  if (rd32(b) != DM_FATBIN_MAGIC) return dm_fail(-EINVAL, why, whylen, "bad fatbin magic 0x%08x", rd32(b));
  unsigned ver = rd16(b + 4), hs = rd16(b + 6);
  uint64_t body = rd64(b + 8);
  if (ver != 1) return dm_fail(-ENOTSUP, why, whylen, "unknown fatbin version %u", ver);
  if (hs < DM_FATBIN_HEADER_MIN || hs > len)
    return dm_fail(-EINVAL, why, whylen, "fatbin header size %u out of bounds", hs);
  if (body > len - hs)
    return dm_fail(-EINVAL, why, whylen, "fatbin truncated: header declares %llu bytes, %zu present",
                   (unsigned long long)body, len - hs);
  fb->data = b;
  fb->size = hs + (size_t)body;
  fb->version = ver;
  fb->header_size = hs;
  return 0;
}

int dm_fatbin_open(const void *buf, size_t len, dm_fatbin_t *fb, char *why, size_t whylen) {
  if (!buf) return dm_fail(-EINVAL, why, whylen, "no fatbin");
  return check_header(buf, len, fb, why, whylen);
}

int dm_fatbin_from_wrapper(const void *wrapper, dm_fatbin_t *fb, char *why, size_t whylen) {
  const uint8_t *w = wrapper;
  if (!w || rd32(w) != DM_FATBIN_WRAPPER_MAGIC)
    return dm_fail(-EINVAL, why, whylen, "not a registration wrapper");
  unsigned ver = rd32(w + 4);
  if (ver != 1 && ver != 2) return dm_fail(-ENOTSUP, why, whylen, "unknown wrapper version %u", ver);
  const uint8_t *p;
  memcpy(&p, w + 8, sizeof p);
  if (!p) return dm_fail(-EINVAL, why, whylen, "wrapper has no fatbin");
  /* No size is known: read the fixed header, then trust its size (capped). */
  uint64_t body = rd64(p + 8);
  unsigned hs = rd16(p + 6);
  if (rd32(p) != DM_FATBIN_MAGIC)
    return dm_fail(-EINVAL, why, whylen, "wrapper points to bad fatbin magic 0x%08x", rd32(p));
  if (body > DM_IMAGE_MAX || hs > 4096)
    return dm_fail(-EINVAL, why, whylen, "fatbin size %llu implausible", (unsigned long long)body);
  return check_header(p, hs + (size_t)body, fb, why, whylen);
}

int dm_fatbin_next(const dm_fatbin_t *fb, size_t *cursor, dm_fb_entry_t *e, char *why, size_t whylen) {
  size_t pos = *cursor ? *cursor : fb->header_size;
  if (pos == fb->size) return 0;
  if (pos > fb->size) return dm_fail(-EINVAL, why, whylen, "fatbin cursor past end");
  size_t left = fb->size - pos;
  const uint8_t *h = fb->data + pos;
  if (left < DM_FB_ENTRY_HEADER_MIN)
    return dm_fail(-EINVAL, why, whylen, "fatbin entry at %zu truncated (%zu bytes)", pos, left);
  memset(e, 0, sizeof *e);
  e->offset = pos;
  e->kind = rd16(h + 0x00);
  e->header_size = rd32(h + 0x04);
  e->payload_size = rd64(h + 0x08);
  e->compressed_size = rd32(h + 0x10);
  e->ver_minor = rd16(h + 0x18);
  e->ver_major = rd16(h + 0x1a);
  e->arch = rd32(h + 0x1c);
  e->flags = rd64(h + 0x28);
  e->uncompressed_size = rd64(h + 0x38);
  if (e->header_size < DM_FB_ENTRY_HEADER_MIN || e->header_size > left)
    return dm_fail(-EINVAL, why, whylen, "fatbin entry at %zu: header size %u out of bounds", pos,
                   e->header_size);
  if (e->payload_size > left - e->header_size)
    return dm_fail(-EINVAL, why, whylen, "fatbin entry at %zu: payload %llu bytes exceeds the %zu left", pos,
                   (unsigned long long)e->payload_size, left - e->header_size);
  e->payload = h + e->header_size;
  int lz4 = !!(e->flags & DM_FB_FLAG_LZ4), zstd = !!(e->flags & DM_FB_FLAG_ZSTD);
  e->codec = lz4 && zstd ? -1 : lz4 ? DM_CODEC_LZ4 : zstd ? DM_CODEC_ZSTD : DM_CODEC_NONE;
  if (e->codec != DM_CODEC_NONE) {
    if (e->compressed_size == 0 || e->compressed_size > e->payload_size)
      return dm_fail(-EINVAL, why, whylen, "fatbin entry at %zu: compressed size %u outside payload %llu",
                     pos, e->compressed_size, (unsigned long long)e->payload_size);
    if (e->uncompressed_size == 0 || e->uncompressed_size > DM_IMAGE_MAX)
      return dm_fail(-EINVAL, why, whylen, "fatbin entry at %zu: uncompressed size %llu implausible", pos,
                     (unsigned long long)e->uncompressed_size);
  }
  *cursor = pos + e->header_size + (size_t)e->payload_size;
  return 1;
}

int dm_fatbin_next_in_section(const void *sec, size_t len, size_t *offset, dm_fatbin_t *fb, char *why,
                              size_t whylen) {
  const uint8_t *b = sec;
  size_t q = *offset;
  while (q < len && len - q >= DM_FATBIN_HEADER_MIN) {
    if (rd32(b + q) == DM_FATBIN_MAGIC) {
      int rc = check_header(b + q, len - q, fb, why, whylen);
      if (rc < 0) return rc;
      q += fb->size;
      q = (q + 7) & ~(size_t)7;
      *offset = q < len ? q : len;
      return 1;
    }
    q += 8; /* padding between fatbins */
  }
  *offset = len;
  return 0;
}
