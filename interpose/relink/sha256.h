/*
 * sha256.h — SHA-256 (FIPS 180-4) for the JIT cache: entry keys and entry
 * checksums. Small and dependency-free so the shim needs no crypto library.
 *
 * Speed: on x86-64 CPUs with the SHA extensions (CPUID leaf 7 EBX bit 29,
 * with SSSE3) the blocks are hashed with SHA-NI instructions, chosen at run
 * time on first use; elsewhere, and on other architectures, a portable C
 * implementation runs. Both give the same digests.
 *
 * In test builds (-DDM_TESTING) dm_sha256_portable() always uses the portable
 * implementation, so tests can compare the two paths; dm_sha256_accelerated()
 * tells which one the other functions use (1: SHA-NI, 0: portable).
 *
 * Errors: none can occur. Locking: none (the context is the caller's); the
 * one-time choice of implementation is thread-safe and needs no lock.
 */
#ifndef DM_SHA256_H
#define DM_SHA256_H
#include <stddef.h>
#include <stdint.h>

typedef struct {
  uint32_t h[8];
  uint64_t len;
  uint8_t buf[64];
  size_t fill;
} dm_sha256_t;

void dm_sha256_init(dm_sha256_t *c);
void dm_sha256_update(dm_sha256_t *c, const void *data, size_t n);
void dm_sha256_final(dm_sha256_t *c, uint8_t out[32]);
void dm_sha256(const void *data, size_t n, uint8_t out[32]);

#ifdef DM_TESTING
/* The portable implementation alone, and which one runs. */
void dm_sha256_portable(const void *data, size_t n, uint8_t out[32]);
int dm_sha256_accelerated(void);
#endif

#endif
