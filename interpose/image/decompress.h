/*
 * decompress.h — turn a fatbin entry into a private, NUL-terminated copy of
 * its image, decompressing LZ4 (flag 0x2000, older toolkits and
 * `-compress-mode=speed`) or zstd (flag 0x8000, CUDA 13 default).
 *
 * Exactly `compressed_size` bytes are fed to the codec (not the padded
 * payload size) and the result must be exactly `uncompressed_size` bytes.
 * zstd and lz4 are linked statically and hidden in the shim (docs/jit.md:
 * the driver's own zstd would otherwise interpose).
 *
 * Errors: relink_err.h. Locking: none (each call uses its own codec state).
 */
#ifndef DM_DECOMPRESS_H
#define DM_DECOMPRESS_H
#include "fatbin.h"
#include <stddef.h>

/* Decompress src[0..srclen) into dst, which must come out exactly dstlen. */
int dm_decompress(int codec, const void *src, size_t srclen, void *dst, size_t dstlen, char *why,
                  size_t whylen);

/* A malloc'd copy of the entry's image, decompressed, with one NUL byte
 * appended (not counted in *size). For PTX entries *size stops at the first
 * NUL (the text). Free with free(). */
int dm_fb_entry_load(const dm_fb_entry_t *e, unsigned char **out, size_t *size, char *why, size_t whylen);

#endif
