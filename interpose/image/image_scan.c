/*
 * image_scan.c — cheap, load-time answer to "does this module image hold
 * devmalloc?" (does it contain the descriptor symbol devmalloc_heap_desc),
 * without loading anything and without libelf: a bounded byte search over the
 * uncompressed parts of the image.
 *
 *   yes      the name occurs in an uncompressed cubin/PTX entry
 *   no       every entry was searched and none has it
 *   unknown  compressed entries, or a shape we do not recognize or that is
 *            malformed: the launch path probes the loaded module instead
 *            (cuModuleGetGlobal), and the driver judges the image itself
 *
 * The image is first bounded by image_bound.c (unwrapped, sized from its own
 * headers with every sum overflow-checked, capped, probed readable); the scan
 * below then reads only inside [image, image + len) and checks each entry's
 * sizes against what is left, never by adding them first.
 *
 * Formats (see docs/jit.md): fatbin (magic 0xBA55ED50, u16 header size @6, u64
 * payload size @8; entries: header size u32 @4, payload u64 @8, flags u64
 * @0x28 with 0x2000 LZ4 / 0x8000 zstd compression), ELF, PTX text.
 *
 * Locking: none (pure functions over the caller's image).
 */
#include "image.h"
#include "bytes.h"
#include "devmalloc.h"

#include <string.h>

#define FATBIN_MAGIC 0xBA55ED50u
#define ENTRY_COMPRESSED (0x2000u | 0x8000u)
#define ENTRY_FIELDS 0x30u /* an entry header reaches at least past its flags */

static int has_name(const void *p, size_t n) {
  return memmem(p, n, DEVMALLOC_DESC_SYMBOL, sizeof DEVMALLOC_DESC_SYMBOL - 1) != NULL;
}

static dm_has_t scan_fatbin(const unsigned char *p, size_t total) {
  size_t off = rd16(p + 6);
  int compressed = 0;
  while (off <= total && total - off >= ENTRY_FIELDS) {
    const unsigned char *e = p + off;
    size_t left = total - off;
    uint32_t ehdr = rd32(e + 4);
    uint64_t payload = rd64(e + 8), flags = rd64(e + 0x28);
    if (ehdr < ENTRY_FIELDS || ehdr > left || payload > left - ehdr) return DM_HAS_UNKNOWN;
    if (flags & ENTRY_COMPRESSED)
      compressed = 1;
    else if (has_name(e + ehdr, (size_t)payload))
      return DM_HAS_YES;
    off += ehdr + (size_t)payload;
  }
  return compressed ? DM_HAS_UNKNOWN : DM_HAS_NO;
}

dm_has_t dm_image_scan(const void *image, size_t len) {
  const unsigned char *p = image;
  if (!p || len < 4) return DM_HAS_UNKNOWN;
  if (rd32(p) == FATBIN_MAGIC) return len < 16 ? DM_HAS_UNKNOWN : scan_fatbin(p, len);
  return has_name(p, len) ? DM_HAS_YES : DM_HAS_NO;
}

dm_has_t dm_image_has_devmalloc(const void *image) {
  size_t n;
  const void *p = dm_image_bound(image, &n);
  return p ? dm_image_scan(p, n) : DM_HAS_UNKNOWN;
}

size_t dm_image_size(const void *image) {
  size_t n;
  return dm_image_bound(image, &n) ? n : 0;
}
