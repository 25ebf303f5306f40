/*
 * crc32c.h — CRC-32C (Castagnoli) for the JIT cache's entry checksums.
 *
 * The checksum guards a cached image against a truncated or damaged file, not
 * against someone who can write the cache directory (private to its owner,
 * cache.h): a CRC is enough there, and the key stays SHA-256. On x86-64 CPUs
 * with SSE4.2 (CPUID leaf 1 ECX bit 20) the CRC32 instruction computes it,
 * chosen at run time on first use; elsewhere a table-driven C loop does.
 * Both give the same values (dm_crc32c("123456789") = 0xe3069283).
 * The CRC32 instruction checks an image about five times faster than SHA-256
 * (docs/decisions.md, "Cache entry checksums").
 *
 * dm_crc32c_portable() always uses the C loop, so tests can compare the two.
 *
 * Errors: none can occur. Locking: none; the one-time choice of
 * implementation is thread-safe and needs no lock.
 */
#ifndef DM_CRC32C_H
#define DM_CRC32C_H
#include <stddef.h>
#include <stdint.h>

uint32_t dm_crc32c(const void *data, size_t n);
uint32_t dm_crc32c_portable(const void *data, size_t n);
int dm_crc32c_accelerated(void);

#endif
