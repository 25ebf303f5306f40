/*
 * test_log.c — DEVMALLOC_LOG (host/options/process.c) opened safely: not through a
 * symbolic link (the link's target stays untouched and messages go to
 * stderr), not blocking on a FIFO nobody reads, created mode 0600, appended.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "shim_fake.h"

static char dir[] = "/tmp/dm-log-test-XXXXXX";

static void path_of(char *buf, size_t n, const char *name) { snprintf(buf, n, "%s/%s", dir, name); }

static void t_log_open(void **st) {
  char target[300], link[300], fifo[300], file[300];
  assert_non_null(mkdtemp(dir));
  path_of(target, sizeof target, "target");
  path_of(link, sizeof link, "link");
  path_of(fifo, sizeof fifo, "fifo");
  path_of(file, sizeof file, "log.txt");
  (void)dm_options(); /* the real one-time open: stderr */
  int stderr_fd = dm_log_fd();
  fclose(fopen(target, "w"));
  assert_int_equal(symlink(target, link), 0);
  dm_options_t o = {0};
  o.log = link;
  dm_log_open(&o);
  assert_int_equal(dm_log_fd(), stderr_fd);
  struct stat s;
  assert_int_equal(stat(target, &s), 0);
  assert_int_equal(s.st_size, 0);
  assert_int_equal(mkfifo(fifo, 0600), 0);
  o.log = fifo;
  alarm(20);
  dm_log_open(&o); /* no reader: refused, not blocked */
  alarm(0);
  assert_int_equal(dm_log_fd(), stderr_fd);
  umask(022);
  o.log = file;
  dm_log_open(&o);
  assert_int_not_equal(dm_log_fd(), stderr_fd);
  dm_log(DM_LOG_WARN, "hello %d", 42);
  assert_int_equal(stat(file, &s), 0);
  assert_int_equal(s.st_mode & 0777, 0600);
  char buf[64] = {0};
  FILE *f = fopen(file, "r");
  assert_non_null(f);
  assert_non_null(fgets(buf, sizeof buf, f));
  fclose(f);
  assert_string_equal(buf, "devmalloc: hello 42\n");
  unlink(target);
  unlink(link);
  unlink(fifo);
  unlink(file);
  rmdir(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(t_log_open)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
