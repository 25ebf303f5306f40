/*
 * sha256.h — SHA-256 (FIPS 180-4) for the JIT cache: entry keys and entry
 * checksums. Small and dependency-free so the shim needs no crypto library.
 *
 * Errors: none can occur. Locking: none (the context is the caller's).
 */
#ifndef DM_SHA256_H
#define DM_SHA256_H
#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint32_t h[8];
    uint64_t len;
    uint8_t  buf[64];
    size_t   fill;
} dm_sha256_t;

void dm_sha256_init(dm_sha256_t *c);
void dm_sha256_update(dm_sha256_t *c, const void *data, size_t n);
void dm_sha256_final(dm_sha256_t *c, uint8_t out[32]);
void dm_sha256(const void *data, size_t n, uint8_t out[32]);

#endif
