/*
 * fuzz_cache_entry.c — libFuzzer target for the JIT cache entry reader
 * (interpose/relink/cache.c): the input is written as the entry file of a fixed
 * key (with that key patched into its header, so the fuzzer gets past the
 * key check) and read back with dm_cache_get(). A hit must return exactly
 * the payload the file holds. Dictionary: cache.dict.
 */
#include "cache.h"
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static dm_cache_t *cache;
static dm_cache_key_t key;
static char path[512];

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  static char dir[] = "/tmp/dm-fuzz-cache-XXXXXX";
  char why[300], hex[65];
  if (!mkdtemp(dir) || dm_cache_open(dir, &cache, why, sizeof why) != 0) abort();
  dm_cache_keyer_t k;
  dm_cache_key_init(&k, "fuzz");
  dm_cache_key_final(&k, &key);
  dm_cache_key_hex(&key, hex);
  snprintf(path, sizeof path, "%s/%s.cubin", dir, hex);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) abort();
  unsigned char *buf = malloc(size ? size : 1);
  memcpy(buf, data, size);
  if (size >= 64) memcpy(buf + 32, key.b, 32);
  if (write(fd, buf, size) != (ssize_t)size) abort();
  close(fd);
  void *out = NULL;
  size_t n;
  char why[300];
  if (dm_cache_get(cache, &key, &out, &n, why, sizeof why) == 1) {
    if (size < DM_CACHE_HDR || n != size - DM_CACHE_HDR || memcmp(out, buf + DM_CACHE_HDR, n)) abort();
    free(out);
  }
  free(buf);
  return 0;
}
