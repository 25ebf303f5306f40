/*
 * cache.c — private per-user on-disk cache of JIT-linked images.
 * See cache.h for the format and rules. Locking: none inside; a dm_cache_t
 * is read-only after dm_cache_open().
 */
#include "cache.h"
#include "crc32c.h"
#include "image/bytes.h"
#include "image/relink_err.h"
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <sys/mman.h>
#include <unistd.h>

struct dm_cache {
  int dirfd;
  char path[PATH_MAX];
};

#define DM_CACHE_TMP ".tmp."

#ifdef DM_TESTING
static size_t fail_after = SIZE_MAX;

void dm_cache_test_fail_writes_after(size_t bytes) { fail_after = bytes; }
#endif

/* ---- keys ---- */

void dm_cache_key_init(dm_cache_keyer_t *k, const char *purpose) {
  dm_sha256_init(&k->h);
  dm_cache_key_add_str(k, purpose);
}

void dm_cache_key_add(dm_cache_keyer_t *k, const void *data, size_t n) {
  uint64_t len = n;
  dm_sha256_update(&k->h, &len, sizeof len);
  dm_sha256_update(&k->h, data, n);
}

void dm_cache_key_add_str(dm_cache_keyer_t *k, const char *s) {
  dm_cache_key_add(k, s ? s : "", s ? strlen(s) : 0);
}

void dm_cache_key_add_u64(dm_cache_keyer_t *k, uint64_t v) { dm_cache_key_add(k, &v, sizeof v); }

void dm_cache_key_final(dm_cache_keyer_t *k, dm_cache_key_t *out) { dm_sha256_final(&k->h, out->b); }

void dm_cache_key_hex(const dm_cache_key_t *k, char out[65]) {
  static const char hx[] = "0123456789abcdef";
  for (int i = 0; i < 32; i++) {
    out[2 * i] = hx[k->b[i] >> 4];
    out[2 * i + 1] = hx[k->b[i] & 15];
  }
  out[64] = 0;
}

/* ---- directory ---- */

int dm_cache_default_dir(char *buf, size_t len, char *why, size_t whylen) {
  const char *x = secure_getenv("XDG_CACHE_HOME");
  int n;
  if (x && x[0] == '/') {
    n = snprintf(buf, len, "%s/devmalloc", x);
  } else {
    const char *home = secure_getenv("HOME");
    if (!home || home[0] != '/')
      return dm_fail(-ENOENT, why, whylen, "no XDG_CACHE_HOME or HOME for the JIT cache");
    n = snprintf(buf, len, "%s/.cache/devmalloc", home);
  }
  if (n < 0 || (size_t)n >= len) return dm_fail(-ENAMETOOLONG, why, whylen, "cache path too long");
  return 0;
}

/* Remove temp files ("<DM_CACHE_TMP>*") of writers that died long ago. */
static void sweep_stale(int dirfd) {
  int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *d = fd < 0 ? NULL : fdopendir(fd);
  if (!d) {
    if (fd >= 0) close(fd);
    return;
  }
  time_t now = time(NULL);
  struct dirent *e;
  while ((e = readdir(d))) {
    struct stat st;
    if (strncmp(e->d_name, DM_CACHE_TMP, sizeof DM_CACHE_TMP - 1) ||
        fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
      continue;
    if (S_ISREG(st.st_mode) && st.st_uid == geteuid() && now - st.st_mtime > DM_CACHE_STALE_S)
      unlinkat(dirfd, e->d_name, 0);
  }
  closedir(d);
}

int dm_cache_open(const char *dir, dm_cache_t **out, char *why, size_t whylen) {
  *out = NULL;
  if (!dir || !*dir) return dm_fail(-EINVAL, why, whylen, "empty cache directory");
  int fd = dm_cache_dir_open(dir, why, whylen);
  if (fd < 0) return fd;
  dm_cache_t *c = calloc(1, sizeof *c);
  if (!c) {
    close(fd);
    return dm_fail(-ENOMEM, why, whylen, "out of memory");
  }
  sweep_stale(fd);
  c->dirfd = fd;
  snprintf(c->path, sizeof c->path, "%s", dir);
  *out = c;
  return 0;
}

void dm_cache_close(dm_cache_t *c) {
  if (!c) return;
  close(c->dirfd);
  free(c);
}

const char *dm_cache_path(const dm_cache_t *c) { return c ? c->path : ""; }

/* ---- entries ---- */

static void entry_name(const dm_cache_key_t *k, char name[80]) {
  char hex[65];
  dm_cache_key_hex(k, hex);
  snprintf(name, 80, "%s.cubin", hex);
}

/* Header: magic[8] format u32 hdrsize u32 size u64 pad[8] key[32] sum[32]
 * (sum: the payload's CRC-32C in its first 4 bytes, zeros after). */
static void make_header(uint8_t h[DM_CACHE_HDR], const dm_cache_key_t *k, const void *data, size_t size) {
  memset(h, 0, DM_CACHE_HDR);
  memcpy(h, DM_CACHE_MAGIC, 8);
  wr32(h + 8, DM_CACHE_FORMAT);
  wr32(h + 12, DM_CACHE_HDR);
  wr64(h + 16, size);
  memcpy(h + 32, k->b, 32);
  wr32(h + 64, dm_crc32c(data, size));
}

/* Map the whole pages of a fresh buffer in one call before a read fills it:
 * an image of 350 KB took 86 page faults inside read(), which were most of a
 * cache hit's time in a new process. Nothing when the kernel has no
 * MADV_POPULATE_WRITE (before 5.14): the read then faults them in. */
static void prefault(void *buf, size_t n) {
#ifdef MADV_POPULATE_WRITE
  uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE), a = ((uintptr_t)buf + pg - 1) & ~(pg - 1),
            b = ((uintptr_t)buf + n) & ~(pg - 1);
  if (b > a) (void)madvise((void *)a, b - a, MADV_POPULATE_WRITE);
#else
  (void)buf;
  (void)n;
#endif
}

static int read_all(int fd, void *buf, size_t n) {
  uint8_t *p = buf;
  while (n) {
    ssize_t r = read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return r < 0 ? -errno : -EIO;
    p += r;
    n -= (size_t)r;
  }
  return 0;
}

static int write_all(int fd, const void *buf, size_t n, size_t *written) {
  const uint8_t *p = buf;
  while (n) {
    size_t chunk = n;
#ifdef DM_TESTING
    if (fail_after != SIZE_MAX) {
      if (*written >= fail_after) return -ENOSPC;
      if (chunk > fail_after - *written) chunk = fail_after - *written;
    }
#endif
    ssize_t r = write(fd, p, chunk);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return r < 0 ? -errno : -EIO;
    p += r;
    n -= (size_t)r;
    *written += (size_t)r;
  }
  return 0;
}

/* A bad entry is a miss; it is removed when the name still refers to the
 * file judged (`st`): a writer may have renamed a good entry into place. The
 * message says what happened on disk. */
static int bad_entry(dm_cache_t *c, const char *name, const struct stat *st, char *why, size_t whylen,
                     const char *what) {
  struct stat now;
  const char *done = "removed";
  if (fstatat(c->dirfd, name, &now, AT_SYMLINK_NOFOLLOW) != 0 || now.st_ino != st->st_ino ||
      now.st_dev != st->st_dev)
    done = "replaced meanwhile: kept";
  else if (unlinkat(c->dirfd, name, S_ISDIR(st->st_mode) ? AT_REMOVEDIR : 0) != 0)
    done = "cannot be removed";
  dm_fail(0, why, whylen, "cache entry %s %s: %s", name, what, done);
  return 0;
}

int dm_cache_get(dm_cache_t *c, const dm_cache_key_t *k, void **data, size_t *size, char *why,
                 size_t whylen) {
  char name[80];
  entry_name(k, name);
  struct stat st;
  int fd = openat(c->dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return dm_fail(0, why, whylen, "cache miss");
    if (fstatat(c->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode))
      return bad_entry(c, name, &st, why, whylen, "is not a regular file");
    return dm_fail(0, why, whylen, "cache entry %s unreadable: %s", name, strerror(errno));
  }
  uint8_t h[DM_CACHE_HDR];
  int rc = 0;
  if (fstat(fd, &st) != 0) {
    close(fd);
    return dm_fail(0, why, whylen, "cache entry %s cannot be read", name);
  }
  if (!S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
    close(fd);
    return bad_entry(c, name, &st, why, whylen, "is not a regular file of ours");
  }
  if ((uint64_t)st.st_size < DM_CACHE_HDR || (uint64_t)st.st_size > DM_IMAGE_MAX + DM_CACHE_HDR ||
      read_all(fd, h, DM_CACHE_HDR) != 0) {
    close(fd);
    return bad_entry(c, name, &st, why, whylen, "is truncated");
  }
  uint64_t n = rd64(h + 16);
  if (memcmp(h, DM_CACHE_MAGIC, 8) || rd32(h + 8) != DM_CACHE_FORMAT || rd32(h + 12) != DM_CACHE_HDR ||
      memcmp(h + 32, k->b, 32) || n != (uint64_t)st.st_size - DM_CACHE_HDR) {
    close(fd);
    return bad_entry(c, name, &st, why, whylen, "has a bad header");
  }
  void *buf = malloc(n ? n : 1);
  if (!buf) {
    close(fd);
    return dm_fail(-ENOMEM, why, whylen, "out of memory");
  }
  prefault(buf, n);
  rc = read_all(fd, buf, n);
  close(fd);
  uint8_t sum[32] = {0};
  if (rc == 0) wr32(sum, dm_crc32c(buf, n));
  if (rc != 0 || memcmp(sum, h + 64, 32)) {
    free(buf);
    return bad_entry(c, name, &st, why, whylen, rc ? "is truncated" : "fails its checksum");
  }
  *data = buf;
  *size = n;
  return 1;
}

int dm_cache_put(dm_cache_t *c, const dm_cache_key_t *k, const void *data, size_t size, char *why,
                 size_t whylen) {
  char name[80], tmp[128];
  entry_name(k, name);
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  struct rlimit fsz;
  if (getrlimit(RLIMIT_FSIZE, &fsz) == 0 && fsz.rlim_cur != RLIM_INFINITY &&
      (uint64_t)size + DM_CACHE_HDR > (uint64_t)fsz.rlim_cur)
    return dm_fail(-EFBIG, why, whylen,
                   "cache: %s not written: %zu bytes exceed the file "
                   "size limit (%llu)",
                   name, size + DM_CACHE_HDR, (unsigned long long)fsz.rlim_cur);
  snprintf(tmp, sizeof tmp, DM_CACHE_TMP "%ld.%lx.%lx", (long)getpid(), (unsigned long)pthread_self(),
           (unsigned long)ts.tv_nsec);
  int fd = openat(c->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return dm_fail(-errno, why, whylen, "cache: cannot create %s: %s", tmp, strerror(errno));
  uint8_t h[DM_CACHE_HDR];
  make_header(h, k, data, size);
  size_t written = 0;
  int rc = write_all(fd, h, sizeof h, &written);
  if (rc == 0) rc = write_all(fd, data, size, &written);
  if (rc == 0 && fsync(fd) != 0) rc = -errno;
  if (close(fd) != 0 && rc == 0) rc = -errno;
  if (rc == 0 && renameat(c->dirfd, tmp, c->dirfd, name) != 0) rc = -errno;
  if (rc != 0) {
    unlinkat(c->dirfd, tmp, 0);
    return dm_fail(rc, why, whylen, "cache: writing %s failed: %s", name, strerror(-rc));
  }
  return 0;
}
