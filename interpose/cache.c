/*
 * cache.c — private per-user on-disk cache of JIT-linked images.
 * See cache.h for the format and rules. Locking: none inside; a dm_cache_t
 * is read-only after dm_cache_open().
 */
#include "cache.h"
#include "relink_err.h"
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

struct dm_cache {
    int  dirfd;
    char path[PATH_MAX];
};

static size_t fail_after = SIZE_MAX;

void dm_cache_test_fail_writes_after(size_t bytes) { fail_after = bytes; }

/* ---- keys ---- */

void dm_cache_key_init(dm_cache_keyer_t *k, const char *purpose)
{
    dm_sha256_init(&k->h);
    dm_cache_key_add_str(k, purpose);
}

void dm_cache_key_add(dm_cache_keyer_t *k, const void *data, size_t n)
{
    uint64_t len = n;
    dm_sha256_update(&k->h, &len, sizeof len);
    dm_sha256_update(&k->h, data, n);
}

void dm_cache_key_add_str(dm_cache_keyer_t *k, const char *s)
{
    dm_cache_key_add(k, s ? s : "", s ? strlen(s) : 0);
}

void dm_cache_key_add_u64(dm_cache_keyer_t *k, uint64_t v)
{
    dm_cache_key_add(k, &v, sizeof v);
}

void dm_cache_key_final(dm_cache_keyer_t *k, dm_cache_key_t *out)
{
    dm_sha256_final(&k->h, out->b);
}

void dm_cache_key_hex(const dm_cache_key_t *k, char out[65])
{
    static const char hx[] = "0123456789abcdef";
    for (int i = 0; i < 32; i++) {
        out[2 * i] = hx[k->b[i] >> 4];
        out[2 * i + 1] = hx[k->b[i] & 15];
    }
    out[64] = 0;
}

/* ---- directory ---- */

int dm_cache_default_dir(char *buf, size_t len, char *why, size_t whylen)
{
    const char *x = getenv("XDG_CACHE_HOME");
    int n;
    if (x && x[0] == '/') {
        n = snprintf(buf, len, "%s/devmalloc", x);
    } else {
        const char *home = getenv("HOME");
        if (!home || home[0] != '/')
            return dm_fail(-ENOENT, why, whylen, "no XDG_CACHE_HOME or HOME for the JIT cache");
        n = snprintf(buf, len, "%s/.cache/devmalloc", home);
    }
    if (n < 0 || (size_t)n >= len)
        return dm_fail(-ENAMETOOLONG, why, whylen, "cache path too long");
    return 0;
}

/* mkdir -p with 0700 for what we create; existing parents are left alone. */
static int make_dirs(const char *path)
{
    char tmp[PATH_MAX];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof tmp)
        return -ENAMETOOLONG;
    memcpy(tmp, path, n + 1);
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        if (mkdir(tmp, 0700) != 0 && errno != EEXIST)
            return -errno;
        *p = '/';
    }
    if (mkdir(tmp, 0700) != 0 && errno != EEXIST)
        return -errno;
    return 0;
}

int dm_cache_open(const char *dir, dm_cache_t **out, char *why, size_t whylen)
{
    *out = NULL;
    if (!dir || !*dir)
        return dm_fail(-EINVAL, why, whylen, "empty cache directory");
    int rc = make_dirs(dir);
    if (rc < 0)
        return dm_fail(rc, why, whylen, "cannot create cache directory %s: %s", dir, strerror(-rc));
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        struct stat lst;
        if (lstat(dir, &lst) == 0 && S_ISLNK(lst.st_mode))
            return dm_fail(-EPERM, why, whylen,
                           "cache directory %s is a symbolic link: not used", dir);
        return dm_fail(-e, why, whylen, "cannot open cache directory %s: %s", dir, strerror(e));
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        rc = -errno;
        close(fd);
        return dm_fail(rc, why, whylen, "cannot stat cache directory %s", dir);
    }
    if (st.st_uid != geteuid()) {
        close(fd);
        return dm_fail(-EPERM, why, whylen,
                       "cache directory %s is owned by uid %u, not %u: not used",
                       dir, (unsigned)st.st_uid, (unsigned)geteuid());
    }
    if (st.st_mode & 077) {
        close(fd);
        return dm_fail(-EPERM, why, whylen,
                       "cache directory %s has mode %04o (must be 0700): not used",
                       dir, (unsigned)(st.st_mode & 07777));
    }
    dm_cache_t *c = calloc(1, sizeof *c);
    if (!c) {
        close(fd);
        return dm_fail(-ENOMEM, why, whylen, "out of memory");
    }
    c->dirfd = fd;
    snprintf(c->path, sizeof c->path, "%s", dir);
    *out = c;
    return 0;
}

void dm_cache_close(dm_cache_t *c)
{
    if (!c)
        return;
    close(c->dirfd);
    free(c);
}

const char *dm_cache_path(const dm_cache_t *c) { return c ? c->path : ""; }

/* ---- entries ---- */

static void entry_name(const dm_cache_key_t *k, char name[80])
{
    char hex[65];
    dm_cache_key_hex(k, hex);
    snprintf(name, 80, "%s.cubin", hex);
}

static void put_u32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put_u64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }
static uint32_t get_u32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t get_u64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }

/* Header: magic[8] format u32 hdrsize u32 size u64 pad[8] key[32] sum[32]. */
static void make_header(uint8_t h[DM_CACHE_HDR], const dm_cache_key_t *k,
                        const void *data, size_t size)
{
    memset(h, 0, DM_CACHE_HDR);
    memcpy(h, DM_CACHE_MAGIC, 8);
    put_u32(h + 8, DM_CACHE_FORMAT);
    put_u32(h + 12, DM_CACHE_HDR);
    put_u64(h + 16, size);
    memcpy(h + 32, k->b, 32);
    dm_sha256(data, size, h + 64);
}

static int read_all(int fd, void *buf, size_t n)
{
    uint8_t *p = buf;
    while (n) {
        ssize_t r = read(fd, p, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return r < 0 ? -errno : -EIO;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

static int write_all(int fd, const void *buf, size_t n, size_t *written)
{
    const uint8_t *p = buf;
    while (n) {
        size_t chunk = n;
        if (fail_after != SIZE_MAX) {
            if (*written >= fail_after)
                return -ENOSPC;
            if (chunk > fail_after - *written)
                chunk = fail_after - *written;
        }
        ssize_t r = write(fd, p, chunk);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return r < 0 ? -errno : -EIO;
        p += r;
        n -= (size_t)r;
        *written += (size_t)r;
    }
    return 0;
}

static int bad_entry(dm_cache_t *c, const char *name, char *why, size_t whylen,
                     const char *what)
{
    unlinkat(c->dirfd, name, 0);
    dm_fail(0, why, whylen, "cache entry %s %s: removed", name, what);
    return 0;
}

int dm_cache_get(dm_cache_t *c, const dm_cache_key_t *k, void **data,
                 size_t *size, char *why, size_t whylen)
{
    char name[80];
    entry_name(k, name);
    int fd = openat(c->dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            return dm_fail(0, why, whylen, "cache miss");
        return dm_fail(0, why, whylen, "cache entry %s unreadable: %s", name, strerror(errno));
    }
    struct stat st;
    uint8_t h[DM_CACHE_HDR];
    int rc = 0;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
        close(fd);
        return bad_entry(c, name, why, whylen, "is not a regular file of ours");
    }
    if ((uint64_t)st.st_size < DM_CACHE_HDR || (uint64_t)st.st_size > DM_IMAGE_MAX + DM_CACHE_HDR ||
        read_all(fd, h, DM_CACHE_HDR) != 0) {
        close(fd);
        return bad_entry(c, name, why, whylen, "is truncated");
    }
    uint64_t n = get_u64(h + 16);
    if (memcmp(h, DM_CACHE_MAGIC, 8) || get_u32(h + 8) != DM_CACHE_FORMAT ||
        get_u32(h + 12) != DM_CACHE_HDR || memcmp(h + 32, k->b, 32) ||
        n != (uint64_t)st.st_size - DM_CACHE_HDR) {
        close(fd);
        return bad_entry(c, name, why, whylen, "has a bad header");
    }
    void *buf = malloc(n ? n : 1);
    if (!buf) {
        close(fd);
        return dm_fail(-ENOMEM, why, whylen, "out of memory");
    }
    rc = read_all(fd, buf, n);
    close(fd);
    uint8_t sum[32];
    if (rc == 0)
        dm_sha256(buf, n, sum);
    if (rc != 0 || memcmp(sum, h + 64, 32)) {
        free(buf);
        return bad_entry(c, name, why, whylen, rc ? "is truncated" : "fails its checksum");
    }
    *data = buf;
    *size = n;
    return 1;
}

int dm_cache_put(dm_cache_t *c, const dm_cache_key_t *k, const void *data,
                 size_t size, char *why, size_t whylen)
{
    char name[80], tmp[128];
    entry_name(k, name);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    snprintf(tmp, sizeof tmp, ".tmp.%ld.%lx.%lx", (long)getpid(),
             (unsigned long)pthread_self(), (unsigned long)ts.tv_nsec);
    int fd = openat(c->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return dm_fail(-errno, why, whylen, "cache: cannot create %s: %s", tmp, strerror(errno));
    uint8_t h[DM_CACHE_HDR];
    make_header(h, k, data, size);
    size_t written = 0;
    int rc = write_all(fd, h, sizeof h, &written);
    if (rc == 0)
        rc = write_all(fd, data, size, &written);
    if (rc == 0 && fsync(fd) != 0)
        rc = -errno;
    if (close(fd) != 0 && rc == 0)
        rc = -errno;
    if (rc == 0 && renameat(c->dirfd, tmp, c->dirfd, name) != 0)
        rc = -errno;
    if (rc != 0) {
        unlinkat(c->dirfd, tmp, 0);
        return dm_fail(rc, why, whylen, "cache: writing %s failed: %s", name, strerror(-rc));
    }
    return 0;
}
