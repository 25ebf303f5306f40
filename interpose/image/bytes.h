/*
 * bytes.h — little-endian fields of device images and cache entries, read
 * and written through memcpy (any alignment). Every reader of image bytes
 * (fatbin.c, image_bound.c, image_scan.c) and the re-link cache use these.
 *
 * Locking: none (pure functions).
 */
#ifndef DM_IMAGE_BYTES_H
#define DM_IMAGE_BYTES_H
#include <stdint.h>
#include <string.h>

static inline uint16_t rd16(const void *p) {
  uint16_t v;
  memcpy(&v, p, 2);
  return v;
}
static inline uint32_t rd32(const void *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}
static inline uint64_t rd64(const void *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}
static inline void wr32(void *p, uint32_t v) { memcpy(p, &v, 4); }
static inline void wr64(void *p, uint64_t v) { memcpy(p, &v, 8); }
#endif
