/*
 * guarded.h — for fuzz targets of readers that get a pointer without a size:
 * the input is copied to the very end of a mapping followed by an
 * inaccessible page, so a read past it is a SIGSEGV the fuzzer reports (the
 * mapping is not AddressSanitizer's, whose redzones would hide nothing here).
 */
#ifndef DM_FUZZ_GUARDED_H
#define DM_FUZZ_GUARDED_H
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define GUARDED_MAX ((size_t)1 << 20)

static unsigned char *guarded_base, *guarded_end;

/* The input's copy, ending at the guard page; NULL if it is too long. */
static unsigned char *guarded_copy(const uint8_t *data, size_t size) {
  if (!guarded_base) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    guarded_base = mmap(NULL, GUARDED_MAX + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (guarded_base == MAP_FAILED || mprotect(guarded_base + GUARDED_MAX, page, PROT_NONE)) abort();
    guarded_end = guarded_base + GUARDED_MAX;
  }
  if (size > GUARDED_MAX) return NULL;
  unsigned char *p = guarded_end - size;
  memcpy(p, data, size);
  return p;
}

/* [p, p + n) must lie in the mapping. */
static void guarded_check(const void *p, size_t n) {
  const unsigned char *b = p;
  if (b && (b < guarded_base || b > guarded_end || n > (size_t)(guarded_end - b))) abort();
}

/* The input as an unsized image, delimited by the pre-scan: the bounded
 * image and *n (checked to lie in the copy), or NULL; *copy is the copy.
 * Inputs that start like a registration wrapper are not placed: the pointer
 * inside would be wild, and ASan's instrumentation faults on memory the
 * probe rightly finds readable (ASan's own shadow ranges); fuzz_wrapper
 * covers wrappers with a pointer that stays in range. Needs shim.h. */
static const void *guarded_bound(const uint8_t *data, size_t size, unsigned char **copy, size_t *n) {
  uint32_t magic = 0;
  memcpy(&magic, data, size < 4 ? size : 4);
  *copy = magic == 0x466243B1u || !size ? NULL : guarded_copy(data, size);
  const void *img = *copy ? dm_image_bound(*copy, n) : NULL;
  if (img) guarded_check(img, *n);
  return img;
}

#endif
