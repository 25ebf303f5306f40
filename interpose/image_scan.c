/*
 * image_scan.c — cheap, load-time answer to "does this module image hold
 * devmalloc?" (does it contain the descriptor symbol devmalloc_heap_desc),
 * without loading anything and without libelf: a bounded byte search over the
 * uncompressed parts of the image.
 *
 *   yes      the name occurs in an uncompressed cubin/PTX entry
 *   no       every entry was searched and none has it
 *   unknown  compressed entries, or a shape we do not recognize: the launch
 *            path probes the loaded module instead (cuModuleGetGlobal)
 *
 * Formats (see DESIGN.md): registration wrapper (magic 0x466243B1, fatbin
 * pointer at +8), fatbin (magic 0xBA55ED50, u16 header size @6, u64 payload
 * size @8; entries: header size u32 @4, payload u64 @8, flags u64 @0x28 with
 * 0x2000 LZ4 / 0x8000 zstd compression), ELF, PTX text.
 *
 * Locking: none (pure functions over the caller's image).
 */
#include "shim.h"

#include <string.h>

#define WRAPPER_MAGIC 0x466243B1u
#define FATBIN_MAGIC 0xBA55ED50u
#define ENTRY_COMPRESSED (0x2000u | 0x8000u)
#define MAX_TEXT ((size_t)1 << 30)

static uint32_t rd32(const unsigned char *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t rd64(const unsigned char *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static uint16_t rd16(const unsigned char *p) { uint16_t v; memcpy(&v, p, 2); return v; }

static int has_name(const void *p, size_t n) {
  return memmem(p, n, DEVMALLOC_DESC_SYMBOL, sizeof DEVMALLOC_DESC_SYMBOL - 1) != NULL;
}

static size_t elf_size(const unsigned char *p) {
  if (p[4] != 2) return 0;                       /* ELFCLASS64 only */
  uint64_t shoff = rd64(p + 0x28);
  uint16_t shentsize = rd16(p + 0x3a), shnum = rd16(p + 0x3c);
  uint64_t end = shoff + (uint64_t)shentsize * shnum;
  /* section contents may follow the header table */
  for (uint16_t i = 0; i < shnum; i++) {
    const unsigned char *sh = p + shoff + (uint64_t)i * shentsize;
    uint32_t type = rd32(sh + 4);
    uint64_t off = rd64(sh + 0x18), size = rd64(sh + 0x20);
    /* SHT_NOBITS, and CUDA's own NOBITS type (SHT_LOPROC + 7, .nv.global) */
    if (type != 8 && type != 0x70000007u && off + size > end) end = off + size;
  }
  return end > MAX_TEXT ? 0 : (size_t)end;
}

static const unsigned char *unwrap(const unsigned char *p) {
  if (p && rd32(p) == WRAPPER_MAGIC) {
    const void *inner;
    memcpy(&inner, p + 8, sizeof inner);
    return inner;
  }
  return p;
}

static int is_elf(const unsigned char *p) { return !memcmp(p, "\177ELF", 4); }

size_t dm_image_size(const void *image) {
  const unsigned char *p = unwrap(image);
  if (!p) return 0;
  if (rd32(p) == FATBIN_MAGIC) return (size_t)rd16(p + 6) + (size_t)rd64(p + 8);
  if (is_elf(p)) return elf_size(p);
  size_t n = strnlen((const char *)p, MAX_TEXT);
  return n < MAX_TEXT ? n + 1 : 0;
}

static dm_has_t scan_fatbin(const unsigned char *p) {
  size_t hdr = rd16(p + 6), total = hdr + (size_t)rd64(p + 8);
  size_t off = hdr;
  int compressed = 0;
  while (off + 0x30 <= total) {
    const unsigned char *e = p + off;
    uint32_t ehdr = rd32(e + 4);
    uint64_t payload = rd64(e + 8), flags = rd64(e + 0x28);
    if (ehdr < 0x30 || off + ehdr + payload > total) return DM_HAS_UNKNOWN;
    if (flags & ENTRY_COMPRESSED) compressed = 1;
    else if (has_name(e + ehdr, (size_t)payload)) return DM_HAS_YES;
    off += ehdr + payload;
  }
  return compressed ? DM_HAS_UNKNOWN : DM_HAS_NO;
}

dm_has_t dm_image_has_devmalloc(const void *image) {
  const unsigned char *p = unwrap(image);
  if (!p) return DM_HAS_UNKNOWN;
  if (rd32(p) == FATBIN_MAGIC) return scan_fatbin(p);
  if (is_elf(p)) {
    size_t n = elf_size(p);
    if (!n) return DM_HAS_UNKNOWN;
    return has_name(p, n) ? DM_HAS_YES : DM_HAS_NO;
  }
  /* PTX: printable text starting with a directive or a comment */
  if (p[0] == '.' || p[0] == '/' || p[0] == '\n' || p[0] == ' ' || p[0] == '\t') {
    size_t n = strnlen((const char *)p, MAX_TEXT);
    if (n == MAX_TEXT) return DM_HAS_UNKNOWN;
    return has_name(p, n) ? DM_HAS_YES : DM_HAS_NO;
  }
  return DM_HAS_UNKNOWN;
}
