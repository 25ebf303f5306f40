/*
 * test_cache_hostile.c — the JIT cache (interpose/relink/cache.c, cache_dir.c) in
 * odd or hostile surroundings: a FIFO or a directory at an entry path, a file
 * size limit below the entry's size, temp files of dead writers, a directory
 * to create under a parent the effective user does not own (root with a
 * user's HOME), a symbolic link planted in another user's directory, and
 * paths that are not absolute or too long. Cases that need another owner
 * run only as root (they chown to nobody).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "cache.h"

#define NOBODY 65534

static char root[256];

static int setup(void **state) {
  snprintf(root, sizeof root, "/tmp/dm-cache-hostile-XXXXXX");
  if (!mkdtemp(root)) return -1;
  alarm(60); /* a FIFO that blocks fails the test instead of hanging it */
  return 0;
}

static int teardown(void **state) {
  char cmd[300];
  alarm(0);
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
  return system(cmd) == 0 ? 0 : -1;
}

static dm_cache_t *open_sub(const char *sub) {
  char p[512], why[600];
  snprintf(p, sizeof p, "%s/%s", root, sub);
  dm_cache_t *c = NULL;
  assert_int_equal(dm_cache_open(p, &c, why, sizeof why), 0);
  return c;
}

static void entry_of(dm_cache_t *c, const char *s, dm_cache_key_t *k, char *path, size_t n) {
  dm_cache_keyer_t kk;
  char hex[65];
  dm_cache_key_init(&kk, "hostile");
  dm_cache_key_add_str(&kk, s);
  dm_cache_key_final(&kk, k);
  dm_cache_key_hex(k, hex);
  snprintf(path, n, "%s/%s.cubin", dm_cache_path(c), hex);
}

static void t_fifo_entry(void **state) {
  dm_cache_t *c = open_sub("fifo");
  dm_cache_key_t k;
  char path[700], why[800];
  void *d = NULL;
  size_t n;
  entry_of(c, "fifo", &k, path, sizeof path);
  assert_int_equal(mkfifo(path, 0600), 0);
  assert_int_equal(dm_cache_get(c, &k, &d, &n, why, sizeof why), 0);
  assert_non_null(strstr(why, "not a regular file"));
  assert_non_null(strstr(why, "removed"));
  assert_int_equal(access(path, F_OK), -1);
  dm_cache_close(c);
}

static void t_directory_entry(void **state) {
  dm_cache_t *c = open_sub("dir");
  dm_cache_key_t k;
  char path[700], inner[800], why[800];
  void *d = NULL;
  size_t n;
  entry_of(c, "dir", &k, path, sizeof path);
  assert_int_equal(mkdir(path, 0700), 0);
  snprintf(inner, sizeof inner, "%s/x", path);
  FILE *f = fopen(inner, "w");
  assert_non_null(f);
  fclose(f);
  assert_int_equal(dm_cache_get(c, &k, &d, &n, why, sizeof why), 0);
  assert_non_null(strstr(why, "cannot be removed")); /* and it is still there */
  assert_int_equal(access(path, F_OK), 0);
  unlink(inner); /* an empty one goes */
  assert_int_equal(dm_cache_get(c, &k, &d, &n, why, sizeof why), 0);
  assert_null(strstr(why, "cannot"));
  assert_int_equal(access(path, F_OK), -1);
  dm_cache_close(c);
}

static int count_tmp(const char *dir) {
  char cmd[600];
  snprintf(cmd, sizeof cmd, "test -z \"$(ls -A '%s' | grep '^\\.tmp\\.')\"", dir);
  return system(cmd) == 0 ? 0 : 1;
}

/* In a child: a put larger than RLIMIT_FSIZE must fail cleanly, not kill
 * the process with SIGXFSZ, and leave no temp file. */
static void t_file_size_limit(void **state) {
  dm_cache_t *c = open_sub("fsize");
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    struct rlimit r = {64 << 10, 64 << 10};
    setrlimit(RLIMIT_FSIZE, &r);
    dm_cache_key_t k;
    char path[700], why[800];
    entry_of(c, "big", &k, path, sizeof path);
    static char big[256 << 10];
    int rc = dm_cache_put(c, &k, big, sizeof big, why, sizeof why);
    _exit(rc == -EFBIG && access(path, F_OK) != 0 ? 0 : 3);
  }
  int st;
  assert_int_equal(waitpid(pid, &st, 0), pid);
  if (WIFSIGNALED(st)) fail_msg("cache write killed the process with signal %d", WTERMSIG(st));
  assert_true(WIFEXITED(st));
  assert_int_equal(WEXITSTATUS(st), 0);
  assert_int_equal(count_tmp(dm_cache_path(c)), 0);
  dm_cache_close(c);
}

static void t_stale_temp_swept(void **state) {
  dm_cache_close(open_sub("sweep"));
  char old[600], fresh[600];
  snprintf(old, sizeof old, "%s/sweep/.tmp.1.2.3", root);
  snprintf(fresh, sizeof fresh, "%s/sweep/.tmp.4.5.6", root);
  fclose(fopen(old, "w"));
  fclose(fopen(fresh, "w"));
  struct timespec ts[2] = {{time(NULL) - 2 * DM_CACHE_STALE_S, 0}, {time(NULL) - 2 * DM_CACHE_STALE_S, 0}};
  assert_int_equal(utimensat(AT_FDCWD, old, ts, 0), 0);
  dm_cache_close(open_sub("sweep"));
  assert_int_equal(access(old, F_OK), -1);
  assert_int_equal(access(fresh, F_OK), 0);
}

/* Root with another user's HOME: nothing is created in that user's tree. */
static void t_parent_of_another_user(void **state) {
  if (geteuid() != 0) skip();
  char home[512], p[600], why[800];
  snprintf(home, sizeof home, "%s/home", root);
  assert_int_equal(mkdir(home, 0755), 0);
  assert_int_equal(chown(home, NOBODY, NOBODY), 0);
  snprintf(p, sizeof p, "%s/.cache/devmalloc", home);
  dm_cache_t *c = NULL;
  assert_true(dm_cache_open(p, &c, why, sizeof why) < 0);
  assert_null(c);
  assert_non_null(strstr(why, "not created"));
  snprintf(p, sizeof p, "%s/.cache", home);
  assert_int_equal(access(p, F_OK), -1);
  /* missing levels under our own directory are created, 0700 */
  snprintf(p, sizeof p, "%s/mine/a/b", root);
  assert_int_equal(dm_cache_open(p, &c, why, sizeof why), 0);
  dm_cache_close(c);
  struct stat st;
  snprintf(p, sizeof p, "%s/mine/a", root);
  assert_int_equal(stat(p, &st), 0);
  assert_int_equal(st.st_mode & 0777, 0700);
}

static void t_link_in_foreign_dir(void **state) {
  if (geteuid() != 0) skip();
  char other[512], target[512], link[600], p[700], why[800];
  snprintf(other, sizeof other, "%s/other", root);
  snprintf(target, sizeof target, "%s/target", root);
  assert_int_equal(mkdir(other, 0755), 0);
  assert_int_equal(mkdir(target, 0700), 0);
  snprintf(link, sizeof link, "%s/link", other);
  assert_int_equal(symlink(target, link), 0);
  assert_int_equal(chown(other, NOBODY, NOBODY), 0);
  snprintf(p, sizeof p, "%s/devmalloc", link);
  dm_cache_t *c = NULL;
  assert_true(dm_cache_open(p, &c, why, sizeof why) < 0);
  assert_non_null(strstr(why, "not followed"));
  snprintf(p, sizeof p, "%s/devmalloc", target);
  assert_int_equal(access(p, F_OK), -1);
  /* the same link in our own directory is followed */
  snprintf(link, sizeof link, "%s/mylink", root);
  assert_int_equal(symlink(target, link), 0);
  snprintf(p, sizeof p, "%s/devmalloc", link);
  assert_int_equal(dm_cache_open(p, &c, why, sizeof why), 0);
  dm_cache_close(c);
}

static void t_paths_refused(void **state) {
  char why[800];
  dm_cache_t *c = NULL;
  assert_true(dm_cache_open("relative/dir", &c, why, sizeof why) < 0);
  assert_non_null(strstr(why, "not an absolute path"));
  assert_int_equal(access("relative", F_OK), -1);
  char *longp = malloc(PATH_MAX + 64);
  memset(longp, 'a', PATH_MAX + 63);
  longp[0] = '/';
  longp[PATH_MAX + 63] = 0;
  assert_true(dm_cache_open(longp, &c, why, sizeof why) < 0);
  assert_non_null(strstr(why, "too long"));
  free(longp);
  assert_null(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(t_fifo_entry),
      cmocka_unit_test(t_directory_entry),
      cmocka_unit_test(t_file_size_limit),
      cmocka_unit_test(t_stale_temp_swept),
      cmocka_unit_test(t_parent_of_another_user),
      cmocka_unit_test(t_link_in_foreign_dir),
      cmocka_unit_test(t_paths_refused),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
