/*
 * fatbin.h — bounds-checked reader for CUDA fat binaries and the registration
 * wrapper that points at them.
 *
 * Layout (verified on CUDA 13.0, see docs/jit.md):
 *   wrapper  : u32 magic 0x466243B1, u32 version, u64 pointer to the fatbin
 *   fatbin   : u32 magic 0xBA55ED50, u16 version (1), u16 header size (16),
 *              u64 size of the entries that follow the header
 *   entry    : u16 kind @0x00 (1 PTX, 2 ELF), u32 header size @0x04 (64 ELF,
 *              80 or more PTX), u64 padded payload size @0x08, u32 compressed
 *              size @0x10, u16 minor/major @0x18, u32 arch @0x1c, u64 flags
 *              @0x28 (0x2000 LZ4, 0x8000 zstd), u64 uncompressed size @0x38;
 *              payload follows the entry header.
 * Every read is checked against the buffer the caller gives; nothing is read
 * outside [buf, buf+len). dm_fatbin_from_wrapper() is the exception by nature:
 * the wrapper carries no size, so the size is taken from the fatbin header
 * (and capped at DM_IMAGE_MAX).
 *
 * Errors: relink_err.h. Locking: none; the reader keeps no state of its own.
 */
#ifndef DM_FATBIN_H
#define DM_FATBIN_H
#include <stddef.h>
#include <stdint.h>

#define DM_FATBIN_MAGIC 0xBA55ED50u
#define DM_FATBIN_WRAPPER_MAGIC 0x466243B1u
#define DM_FATBIN_HEADER_MIN 16u
#define DM_FB_ENTRY_HEADER_MIN 0x40u

enum { DM_FB_KIND_PTX = 1, DM_FB_KIND_ELF = 2 };

#define DM_FB_FLAG_64BIT 0x0001u
#define DM_FB_FLAG_DEBUG 0x0002u
#define DM_FB_FLAG_LINUX 0x0010u
#define DM_FB_FLAG_LZ4 0x2000u
#define DM_FB_FLAG_ZSTD 0x8000u

enum { DM_CODEC_NONE = 0, DM_CODEC_LZ4 = 1, DM_CODEC_ZSTD = 2 };

typedef struct {
  const uint8_t *data; /* first byte of the fatbin header */
  size_t size;         /* header + entries, as the header declares */
  unsigned version;
  unsigned header_size;
} dm_fatbin_t;

typedef struct {
  size_t offset; /* of the entry header in the fatbin */
  unsigned kind; /* DM_FB_KIND_* (others passed through) */
  unsigned header_size;
  unsigned arch; /* e.g. 90 for sm_90 / compute_90 */
  unsigned ver_major, ver_minor;
  uint64_t flags;
  const uint8_t *payload;
  uint64_t payload_size;      /* padded size in the fatbin */
  uint32_t compressed_size;   /* bytes of compressed data (codec != 0) */
  uint64_t uncompressed_size; /* size after decompression (codec != 0) */
  int codec;                  /* DM_CODEC_*, or -1: both flags set */
} dm_fb_entry_t;

typedef enum { DM_IMG_UNKNOWN = 0, DM_IMG_WRAPPER, DM_IMG_FATBIN, DM_IMG_ELF, DM_IMG_PTX } dm_image_kind_t;

/* What an image given to a load call is; reads at most 4 bytes (len < 4:
 * DM_IMG_UNKNOWN). */
dm_image_kind_t dm_image_kind(const void *p, size_t len);

/* Validate the fatbin header at buf (len readable bytes); fb->size may be
 * smaller than len (trailing bytes are not part of it). */
int dm_fatbin_open(const void *buf, size_t len, dm_fatbin_t *fb, char *why, size_t whylen);

/* Follow a registration wrapper to its fatbin; the size comes from the fatbin
 * header. */
int dm_fatbin_from_wrapper(const void *wrapper, dm_fatbin_t *fb, char *why, size_t whylen);

/* Iterate the entries: *cursor starts at 0. Returns 1 and fills *e, 0 at the
 * end, or a negative error for a malformed entry (iteration must stop). */
int dm_fatbin_next(const dm_fatbin_t *fb, size_t *cursor, dm_fb_entry_t *e, char *why, size_t whylen);

/* Iterate the fatbins packed in a host section (.nv_fatbin, __nv_relfatbin):
 * *offset starts at 0; padding between fatbins is skipped 8 bytes at a time.
 * Returns 1 with *fb, 0 at the end, negative on a malformed fatbin. */
int dm_fatbin_next_in_section(const void *sec, size_t len, size_t *offset, dm_fatbin_t *fb, char *why,
                              size_t whylen);

const char *dm_fb_kind_name(unsigned kind);
const char *dm_codec_name(int codec);

#endif
