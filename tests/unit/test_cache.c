/*
 * test_cache.c — the JIT cache: directory creation and refusal (mode, owner,
 * symlink), round trips, corruption (flipped byte, truncation, wrong key,
 * foreign file types: all a miss, never used), atomic writes (failed write
 * leaves the old entry and no temp file; concurrent writers never expose a
 * partial entry), keys and the default location; SHA-256 and CRC-32C known
 * answers on both paths and the accelerated paths against the portable ones.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "cache.h"
#include "crc32c.h"
#include "sha256.h"

static char root[256];

static int setup(void **state) {
  (void)state;
  snprintf(root, sizeof root, "/tmp/dm-cache-test-XXXXXX");
  return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
  return system(cmd) == 0 ? 0 : -1;
}

static void path_of(char *buf, size_t n, const char *sub) { snprintf(buf, n, "%s/%s", root, sub); }

static dm_cache_key_t key_of(const char *s) {
  dm_cache_keyer_t k;
  dm_cache_key_t out;
  dm_cache_key_init(&k, "test");
  dm_cache_key_add_str(&k, s);
  dm_cache_key_final(&k, &out);
  return out;
}

static void entry_path(char *buf, size_t n, dm_cache_t *c, const dm_cache_key_t *k) {
  char hex[65];
  dm_cache_key_hex(k, hex);
  snprintf(buf, n, "%s/%s.cubin", dm_cache_path(c), hex);
}

static int count_files(const char *dir, const char *prefix) {
  DIR *d = opendir(dir);
  int n = 0;
  struct dirent *e;
  assert_non_null(d);
  while ((e = readdir(d)))
    if (e->d_name[0] != '.' || (prefix && !strncmp(e->d_name, prefix, strlen(prefix))))
      n += !prefix || !strncmp(e->d_name, prefix, strlen(prefix));
  closedir(d);
  return n;
}

/* Known answers (FIPS 180-4 examples), on the path in use and the portable one. */
static void test_sha256_vectors(void **state) {
  (void)state;
  static const struct {
    const char *msg;
    uint8_t h[32];
  } v[] = {
      {"", {0xe3, 0xb0, 0xc4, 0x42, 0x98, 0xfc, 0x1c, 0x14, 0x9a, 0xfb, 0xf4, 0xc8, 0x99, 0x6f, 0xb9, 0x24,
            0x27, 0xae, 0x41, 0xe4, 0x64, 0x9b, 0x93, 0x4c, 0xa4, 0x95, 0x99, 0x1b, 0x78, 0x52, 0xb8, 0x55}},
      {"abc",
       {0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea, 0x41, 0x41, 0x40, 0xde, 0x5d, 0xae, 0x22, 0x23,
        0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17, 0x7a, 0x9c, 0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00, 0x15, 0xad}},
      /* 56-byte message: padding spills into a second block */
      {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
       {0x24, 0x8d, 0x6a, 0x61, 0xd2, 0x06, 0x38, 0xb8, 0xe5, 0xc0, 0x26, 0x93, 0x0c, 0x3e, 0x60, 0x39,
        0xa3, 0x3c, 0xe4, 0x59, 0x64, 0xff, 0x21, 0x67, 0xf6, 0xec, 0xed, 0xd4, 0x19, 0xdb, 0x06, 0xc1}},
      /* NULL: a million 'a' (many whole blocks in one call) */
      {NULL,
       {0xcd, 0xc7, 0x6e, 0x5c, 0x99, 0x14, 0xfb, 0x92, 0x81, 0xa1, 0xc7, 0xe2, 0x84, 0xd7, 0x3e, 0x67,
        0xf1, 0x80, 0x9a, 0x48, 0xa4, 0x97, 0x20, 0x0e, 0x04, 0x6d, 0x39, 0xcc, 0xc7, 0x11, 0x2c, 0xd0}},
  };
  void (*const fns[2])(const void *, size_t, uint8_t[32]) = {dm_sha256, dm_sha256_portable};
  char *million = malloc(1000000);
  uint8_t h[32];
  assert_non_null(million);
  memset(million, 'a', 1000000);
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
    for (int f = 0; f < 2; f++) {
      if (v[i].msg)
        fns[f](v[i].msg, strlen(v[i].msg), h);
      else
        fns[f](million, 1000000, h);
      assert_memory_equal(h, v[i].h, 32);
    }
  free(million);
}

/* dm_sha256_update() fed in pieces of `piece` bytes (the last one shorter). */
static void sha256_pieces(const uint8_t *p, size_t n, size_t piece, uint8_t out[32]) {
  dm_sha256_t c;
  dm_sha256_init(&c);
  for (size_t off = 0; off < n; off += piece)
    dm_sha256_update(&c, p + off, n - off < piece ? n - off : piece);
  dm_sha256_final(&c, out);
}

/* The path in use (SHA-NI where the CPU has it) against the portable one on
 * random data: every length 0..300 and some long ones, in one call and in
 * pieces that start and end anywhere in a block. */
static void test_sha256_accelerated_matches_portable(void **state) {
  (void)state;
  static const size_t lens_long[] = {4096, 65536 + 1, 290 * 1024 + 5, (1u << 20) + 13};
  static const size_t pieces[] = {1, 7, 63, 64, 65, 1000};
  const size_t max = (1u << 20) + 13;
  uint8_t *buf = malloc(max + 1), want[32], got[32];
  uint64_t x = 0x9e3779b97f4a7c15u;
  assert_non_null(buf);
  for (size_t i = 0; i <= max; i++) { /* xorshift64 */
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    buf[i] = (uint8_t)(x >> 24);
  }
  print_message("sha256: %s path\n", dm_sha256_accelerated() ? "SHA-NI" : "portable (no SHA-NI)");
  size_t nlen = 301 + sizeof lens_long / sizeof lens_long[0];
  for (size_t li = 0; li < nlen; li++) {
    size_t n = li <= 300 ? li : lens_long[li - 301];
    /* an odd start too: whole blocks hashed in place need no alignment */
    const uint8_t *p = buf + (li & 1);
    dm_sha256_portable(p, n, want);
    dm_sha256(p, n, got);
    if (memcmp(want, got, 32)) fail_msg("one call differs from the portable path at length %zu", n);
    for (size_t pi = 0; pi < sizeof pieces / sizeof pieces[0]; pi++) {
      sha256_pieces(p, n, pieces[pi], got);
      if (memcmp(want, got, 32))
        fail_msg("pieces of %zu differ from the portable path at length %zu", pieces[pi], n);
    }
  }
  free(buf);
}

/* CRC-32C (the entries' checksum): the standard check value and an
 * iSCSI test vector on both paths, and the instruction path against the
 * table at every length 0..300, long lengths and odd starts. */
static void test_crc32c(void **state) {
  (void)state;
  static const uint8_t zeros[32];
  uint32_t (*const fns[2])(const void *, size_t) = {dm_crc32c, dm_crc32c_portable};
  for (int f = 0; f < 2; f++) {
    assert_int_equal(fns[f]("123456789", 9), 0xe3069283u);
    assert_int_equal(fns[f](zeros, 32), 0x8a9136aau); /* RFC 3720 B.4 */
    assert_int_equal(fns[f]("", 0), 0);
  }
  print_message("crc32c: %s path\n", dm_crc32c_accelerated() ? "SSE4.2" : "portable (no SSE4.2)");
  const size_t max = (1u << 20) + 13;
  uint8_t *buf = malloc(max + 1);
  assert_non_null(buf);
  uint64_t x = 0x2545f4914f6cdd1du;
  for (size_t i = 0; i <= max; i++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    buf[i] = (uint8_t)(x >> 24);
  }
  static const size_t lens_long[] = {4096, 65536 + 1, 348288, (1u << 20) + 13};
  for (size_t li = 0; li < 301 + 4; li++) {
    size_t n = li <= 300 ? li : lens_long[li - 301];
    const uint8_t *p = buf + (li & 1);
    if (dm_crc32c(p, n) != dm_crc32c_portable(p, n)) fail_msg("the two paths differ at length %zu", n);
  }
  free(buf);
}

static void test_keys(void **state) {
  (void)state;
  dm_cache_keyer_t k;
  dm_cache_key_t a, b;
  dm_cache_key_init(&k, "p");
  dm_cache_key_add_str(&k, "ab");
  dm_cache_key_add_str(&k, "c");
  dm_cache_key_final(&k, &a);
  dm_cache_key_init(&k, "p");
  dm_cache_key_add_str(&k, "a");
  dm_cache_key_add_str(&k, "bc");
  dm_cache_key_final(&k, &b);
  assert_memory_not_equal(a.b, b.b, 32);
  dm_cache_key_t c = key_of("x"), d = key_of("x");
  assert_memory_equal(c.b, d.b, 32);
  char hex[65];
  dm_cache_key_hex(&c, hex);
  assert_int_equal(strlen(hex), 64);
}

static void test_create_and_roundtrip(void **state) {
  (void)state;
  char dir[300];
  path_of(dir, sizeof dir, "a/b/devmalloc");
  dm_cache_t *c;
  char why[400];
  assert_int_equal(dm_cache_open(dir, &c, why, sizeof why), 0);
  struct stat st;
  assert_int_equal(stat(dir, &st), 0);
  assert_int_equal(st.st_mode & 0777, 0700);
  dm_cache_key_t k = key_of("one"), k2 = key_of("two");
  void *data;
  size_t n;
  assert_int_equal(dm_cache_get(c, &k, &data, &n, why, sizeof why), 0);
  assert_string_equal(why, "cache miss");
  const char payload[] = "a linked cubin, pretend";
  assert_int_equal(dm_cache_put(c, &k, payload, sizeof payload, why, sizeof why), 0);
  assert_int_equal(dm_cache_get(c, &k, &data, &n, why, sizeof why), 1);
  assert_int_equal(n, sizeof payload);
  assert_memory_equal(data, payload, n);
  free(data);
  assert_int_equal(dm_cache_get(c, &k2, &data, &n, why, sizeof why), 0);
  /* entries are private */
  char ep[400];
  entry_path(ep, sizeof ep, c, &k);
  assert_int_equal(stat(ep, &st), 0);
  assert_int_equal(st.st_mode & 0777, 0600);
  /* an empty payload round-trips too */
  assert_int_equal(dm_cache_put(c, &k2, "", 0, why, sizeof why), 0);
  assert_int_equal(dm_cache_get(c, &k2, &data, &n, why, sizeof why), 1);
  assert_int_equal(n, 0);
  free(data);
  dm_cache_close(c);
}

static void test_refuse_mode(void **state) {
  (void)state;
  char dir[300], why[400];
  path_of(dir, sizeof dir, "open");
  assert_int_equal(mkdir(dir, 0755), 0);
  assert_int_equal(chmod(dir, 0755), 0);
  dm_cache_t *c;
  assert_int_equal(dm_cache_open(dir, &c, why, sizeof why), -EPERM);
  assert_null(c);
  assert_non_null(strstr(why, "0755"));
  assert_int_equal(chmod(dir, 0710), 0);
  assert_int_equal(dm_cache_open(dir, &c, why, sizeof why), -EPERM);
  assert_int_equal(chmod(dir, 0700), 0);
  assert_int_equal(dm_cache_open(dir, &c, why, sizeof why), 0);
  dm_cache_close(c);
}

static void test_refuse_owner(void **state) {
  (void)state;
  char dir[300], why[400];
  dm_cache_t *c;
  if (geteuid() == 0) {
    path_of(dir, sizeof dir, "foreign");
    assert_int_equal(mkdir(dir, 0700), 0);
    assert_int_equal(chown(dir, 12345, 12345), 0);
  } else {
    snprintf(dir, sizeof dir, "/"); /* root's, not ours */
  }
  assert_int_equal(dm_cache_open(dir, &c, why, sizeof why), -EPERM);
  assert_non_null(strstr(why, "owned by"));
}

static void test_refuse_symlink(void **state) {
  (void)state;
  char dir[300], link[300], why[400];
  path_of(dir, sizeof dir, "real");
  path_of(link, sizeof link, "link");
  assert_int_equal(mkdir(dir, 0700), 0);
  assert_int_equal(symlink(dir, link), 0);
  dm_cache_t *c;
  assert_int_equal(dm_cache_open(link, &c, why, sizeof why), -EPERM);
  /* a regular file where the directory should be */
  char file[300];
  path_of(file, sizeof file, "file");
  int fd = open(file, O_CREAT | O_WRONLY, 0600);
  close(fd);
  assert_true(dm_cache_open(file, &c, why, sizeof why) < 0);
}

/* Damage an entry in several ways: each is a miss, and the entry is gone. */
static void test_corruption(void **state) {
  (void)state;
  char dir[300], why[400], ep[400];
  path_of(dir, sizeof dir, "corrupt");
  dm_cache_t *c;
  assert_int_equal(dm_cache_open(dir, &c, why, sizeof why), 0);
  dm_cache_key_t k = key_of("victim");
  char payload[1000];
  for (size_t i = 0; i < sizeof payload; i++) payload[i] = (char)(i * 7);
  entry_path(ep, sizeof ep, c, &k);
  void *data;
  size_t n;
  /* every byte of the header and a sample of the payload, flipped */
  for (size_t pos = 0; pos < DM_CACHE_HDR + sizeof payload; pos += pos < DM_CACHE_HDR ? 1 : 37) {
    assert_int_equal(dm_cache_put(c, &k, payload, sizeof payload, why, sizeof why), 0);
    int fd = open(ep, O_RDWR);
    unsigned char b;
    assert_int_equal(pread(fd, &b, 1, (off_t)pos), 1);
    b ^= 0x10;
    assert_int_equal(pwrite(fd, &b, 1, (off_t)pos), 1);
    close(fd);
    data = NULL;
    int r = dm_cache_get(c, &k, &data, &n, why, sizeof why);
    if (pos >= 24 && pos < 32) { /* reserved header bytes: not checked */
      assert_int_equal(r, 1);
      free(data);
      continue;
    }
    if (r != 0) fail_msg("flip at %zu was used", pos);
    assert_null(data);
    assert_int_equal(access(ep, F_OK), -1); /* removed */
  }
  /* truncated and extended files */
  for (int extra = -1; extra <= 1; extra += 2) {
    assert_int_equal(dm_cache_put(c, &k, payload, sizeof payload, why, sizeof why), 0);
    assert_int_equal(truncate(ep, (off_t)(DM_CACHE_HDR + sizeof payload) + extra), 0);
    assert_int_equal(dm_cache_get(c, &k, &data, &n, why, sizeof why), 0);
  }
  assert_int_equal(dm_cache_put(c, &k, payload, sizeof payload, why, sizeof why), 0);
  assert_int_equal(truncate(ep, 10), 0);
  assert_int_equal(dm_cache_get(c, &k, &data, &n, why, sizeof why), 0);
  assert_non_null(strstr(why, "truncated"));
  /* another key's entry renamed to this key's name */
  dm_cache_key_t other = key_of("other");
  char op[400];
  entry_path(op, sizeof op, c, &other);
  assert_int_equal(dm_cache_put(c, &other, payload, sizeof payload, why, sizeof why), 0);
  assert_int_equal(rename(op, ep), 0);
  assert_int_equal(dm_cache_get(c, &k, &data, &n, why, sizeof why), 0);
  /* a symlink to a valid entry, and a directory, under the entry's name */
  assert_int_equal(dm_cache_put(c, &other, payload, sizeof payload, why, sizeof why), 0);
  assert_int_equal(symlink(op, ep), 0);
  assert_int_equal(dm_cache_get(c, &k, &data, &n, why, sizeof why), 0);
  unlink(ep);
  assert_int_equal(mkdir(ep, 0700), 0);
  assert_int_equal(dm_cache_get(c, &k, &data, &n, why, sizeof why), 0);
  rmdir(ep);
  dm_cache_close(c);
}

static void test_atomic_write(void **state) {
  (void)state;
  char dir[300], why[400];
  path_of(dir, sizeof dir, "atomic");
  dm_cache_t *c;
  assert_int_equal(dm_cache_open(dir, &c, why, sizeof why), 0);
  dm_cache_key_t k = key_of("atomic");
  const char old[] = "old image";
  assert_int_equal(dm_cache_put(c, &k, old, sizeof old, why, sizeof why), 0);
  char big[5000];
  memset(big, 'n', sizeof big);
  /* writes failing part-way (in the header, in the payload): old entry kept,
     * no temp file left behind */
  size_t fails[] = {0, 50, DM_CACHE_HDR, DM_CACHE_HDR + 1000};
  for (size_t i = 0; i < sizeof fails / sizeof fails[0]; i++) {
    dm_cache_test_fail_writes_after(fails[i]);
    assert_true(dm_cache_put(c, &k, big, sizeof big, why, sizeof why) < 0);
    dm_cache_test_fail_writes_after(SIZE_MAX);
    void *data;
    size_t n;
    assert_int_equal(dm_cache_get(c, &k, &data, &n, why, sizeof why), 1);
    assert_int_equal(n, sizeof old);
    assert_memory_equal(data, old, n);
    free(data);
    assert_int_equal(count_files(dir, ".tmp"), 0);
  }
  /* a stale temp file from a crashed writer is not an entry */
  char stale[400];
  snprintf(stale, sizeof stale, "%s/.tmp.1.2.3", dir);
  FILE *f = fopen(stale, "w");
  fputs("partial", f);
  fclose(f);
  dm_cache_key_t k2 = key_of("never-written");
  void *data;
  size_t n;
  assert_int_equal(dm_cache_get(c, &k2, &data, &n, why, sizeof why), 0);
  dm_cache_close(c);
}

/* Writers in other processes replace the entry while this one reads it:
 * every read is a valid entry (one writer's payload) or a miss, never bad. */
static void test_concurrent_writers(void **state) {
  (void)state;
  char dir[300], why[400];
  path_of(dir, sizeof dir, "race");
  dm_cache_t *c;
  assert_int_equal(dm_cache_open(dir, &c, why, sizeof why), 0);
  dm_cache_key_t k = key_of("race");
  enum { WRITERS = 3, ROUNDS = 150, SZ = 64 * 1024 };
  pid_t pids[WRITERS];
  for (int w = 0; w < WRITERS; w++) {
    pids[w] = fork();
    assert_true(pids[w] >= 0);
    if (pids[w] == 0) {
      char *buf = malloc(SZ);
      memset(buf, 'A' + w, SZ);
      for (int r = 0; r < ROUNDS; r++)
        if (dm_cache_put(c, &k, buf, SZ, NULL, 0) != 0) _exit(1);
      _exit(0);
    }
  }
  int hits = 0, alive = WRITERS;
  while (alive) {
    void *data;
    size_t n;
    why[0] = 0;
    int r = dm_cache_get(c, &k, &data, &n, why, sizeof why);
    if (r == 1) {
      assert_int_equal(n, SZ);
      char ch = ((char *)data)[0];
      assert_true(ch >= 'A' && ch < 'A' + WRITERS);
      for (size_t i = 0; i < n; i++)
        if (((char *)data)[i] != ch) fail_msg("mixed entry");
      free(data);
      hits++;
    } else {
      assert_int_equal(r, 0);
      if (strstr(why, "removed")) fail_msg("reader saw a bad entry: %s", why);
    }
    alive = 0;
    for (int w = 0; w < WRITERS; w++)
      if (pids[w] > 0) {
        int st;
        pid_t p = waitpid(pids[w], &st, WNOHANG);
        if (p == pids[w]) {
          assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
          pids[w] = 0;
        } else {
          alive++;
        }
      }
  }
  assert_true(hits > 0);
  assert_int_equal(count_files(dir, ".tmp"), 0);
  dm_cache_close(c);
}

static void test_default_dir(void **state) {
  (void)state;
  char buf[512], why[200];
  setenv("XDG_CACHE_HOME", "/x/cache", 1);
  assert_int_equal(dm_cache_default_dir(buf, sizeof buf, why, sizeof why), 0);
  assert_string_equal(buf, "/x/cache/devmalloc");
  setenv("XDG_CACHE_HOME", "relative", 1); /* ignored, per the XDG spec */
  setenv("HOME", "/home/u", 1);
  assert_int_equal(dm_cache_default_dir(buf, sizeof buf, why, sizeof why), 0);
  assert_string_equal(buf, "/home/u/.cache/devmalloc");
  unsetenv("XDG_CACHE_HOME");
  unsetenv("HOME");
  assert_int_equal(dm_cache_default_dir(buf, sizeof buf, why, sizeof why), -ENOENT);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sha256_vectors),
      cmocka_unit_test(test_sha256_accelerated_matches_portable),
      cmocka_unit_test(test_crc32c),
      cmocka_unit_test(test_keys),
      cmocka_unit_test(test_create_and_roundtrip),
      cmocka_unit_test(test_refuse_mode),
      cmocka_unit_test(test_refuse_owner),
      cmocka_unit_test(test_refuse_symlink),
      cmocka_unit_test(test_corruption),
      cmocka_unit_test(test_atomic_write),
      cmocka_unit_test(test_concurrent_writers),
      cmocka_unit_test(test_default_dir),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
