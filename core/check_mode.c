/*
 * check_mode.c — check mode (DEVMALLOC_CHECK): blocks armed with canary
 * bytes when handed out and verified when freed, for the callers
 * (devmalloc.cu, single.c); heap.c's dm_heap_request_size makes room for
 * the canaries.
 *
 * Locking: none; a damaged block is counted with one atomic add, and the
 * first one's size and address are kept by whoever counted first.
 * Calls nothing in the core.
 */
#include "dm_internal.h"

/* A block of `bytes` handed out for a request of
 * `size` (size + DM_CHECK_TAIL <= bytes) carries 8 canary bytes right after
 * the requested ones, derived from its address, and in its last 8 bytes the
 * size with a tag. free() verifies both: a program that wrote past the end of
 * its block is counted, and the first such block is kept for the report. */
#define DM_CHECK_TAG 0xD7ull
static DM_INLINE uint8_t check_byte(const char *p, uint32_t i) {
  return (uint8_t)(0xA5u ^ (i * 0x3Bu) ^ (uint32_t)((uintptr_t)p >> 4));
}
DM_FN void dm_check_arm(char *p, uint64_t size, uint64_t bytes) {
  for (uint32_t i = 0; i < 8; i++) p[size + i] = (char)check_byte(p, i);
  *(uint64_t *)(p + bytes - 8) = (DM_CHECK_TAG << 56) | size;
}
DM_FN int dm_check_intact(const char *p, uint64_t bytes) {
  uint64_t tail = *(const uint64_t *)(p + bytes - 8);
  uint64_t size = tail & ((1ull << 56) - 1);
  if ((tail >> 56) != DM_CHECK_TAG || size + DM_CHECK_TAIL > bytes) return 0;
  for (uint32_t i = 0; i < 8; i++)
    if ((uint8_t)p[size + i] != check_byte(p, i)) return 0;
  return 1;
}
/* Verify the block at p (of `bytes`) being freed; counts a damaged one. */
DM_FN void dm_heap_check_free(dm_heap_t *h, const char *p, uint64_t bytes) {
  if (dm_check_intact(p, bytes)) return;
  uint64_t tail = *(const uint64_t *)(p + bytes - 8);
  if (dm_add64(&h->hstats->check_failures, 1) == 0) {
    dm_store64(&h->hstats->check_first_size,
               (tail >> 56) == DM_CHECK_TAG ? tail & ((1ull << 56) - 1) : bytes);
    dm_store64(&h->hstats->check_first_bad, (uint64_t)(uintptr_t)p);
  }
}
