/*
 * image.h — the load-time pre-scan of device images (image_bound.c,
 * image_scan.c): pure functions over bytes, the fuzzed surface. They read
 * only the bytes they are given (the mapped-memory probe excepted) and call
 * nothing but libc and the readers of this folder.
 *
 * Locking: none.
 */
#ifndef DM_IMAGE_H
#define DM_IMAGE_H
#include <stddef.h>
#include <stdint.h>

/* ---- image_bound.c : the extent of an image passed without a size -------- */
/* The image to read (a registration wrapper is followed to its fatbin) and in
 * *len its size as its own headers declare it, overflow-checked, at most
 * DM_IMAGE_MAX and readable; NULL (and *len 0) when malformed or unreadable. */
const void *dm_image_bound(const void *image, size_t *len);
/* How many bytes from p on (up to n) are mapped readable, by page. */
size_t dm_readable_prefix(const void *p, size_t n);

/* ---- image_scan.c : does an image hold devmalloc? ---------------------- */
typedef enum { DM_HAS_UNKNOWN = 0, DM_HAS_YES = 1, DM_HAS_NO = 2 } dm_has_t;
/* Classify a bounded image (fatbin, cubin ELF, PTX; dm_image_bound's result). */
dm_has_t dm_image_scan(const void *image, size_t len);
/* Classify an unsized module image (wrapper, fatbin, cubin, PTX). */
dm_has_t dm_image_has_devmalloc(const void *image);
/* Size of an image in memory (dm_image_bound), 0 if unknown. */
size_t dm_image_size(const void *image);

/* ---- exe_fatbins.c : the program's own fatbins -------------------------- */
/* The fatbins the executable registers with the CUDA runtime (the pointers
 * the runtime will load), at most max, in out[]; returns how many (0: none,
 * or the executable could not be read). */
size_t dm_exe_fatbins(const void **out, size_t max);

#endif
