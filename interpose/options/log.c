/*
 * log.c — devmalloc's messages: one line each, prefixed "devmalloc: ", to
 * DEVMALLOC_LOG (appended; opened O_NOFOLLOW, created 0600) or stderr, written
 * with write(2) so that no stdio state is touched from hooks. The re-link and
 * the host pool print through here too when linked into the shim.
 *
 * Levels: DM_LOG_WARN always printed; INFO when DEVMALLOC_VERBOSE>=1; DEBUG
 * when >=2.
 *
 * Locking: the fd is set once under dm_options()'s pthread_once; each
 * message is one write() call (atomic for lines up to PIPE_BUF on pipes,
 * O_APPEND on files).
 */
#include "driver/shim.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int g_fd = 2;
static int g_level;

void dm_log_open(const dm_options_t *o) {
  g_level = o->verbose;
  if (o->log) {
    /* Not through a symbolic link, private if created, never blocking on a
     * FIFO without a reader; a FIFO with one, a tty or a file are fine. */
    int fd = open(o->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK,
                  0600);
    int fl = fd >= 0 ? fcntl(fd, F_GETFL) : -1;
    if (fl >= 0 && fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) == 0) {
      g_fd = fd;
    } else {
      if (fd >= 0) close(fd);
      static const char msg[] = "devmalloc: warning: cannot open DEVMALLOC_LOG (a symbolic "
                                "link, a FIFO without a reader, or not writable), using stderr\n";
      dm_log_write(msg, sizeof msg - 1);
    }
  }
}

int dm_log_fd(void) {
  (void)dm_options();
  return g_fd;
}

void dm_log_write(const char *buf, size_t len) {
  while (len) {
    ssize_t n = write(g_fd, buf, len);
    if (n <= 0) return;
    buf += n;
    len -= (size_t)n;
  }
}

void dm_log(int level, const char *fmt, ...) {
  (void)dm_options();                 /* never called from inside its init */
  if (level > DM_LOG_WARN && level > g_level) return;
  char buf[512];
  int n = snprintf(buf, sizeof buf, "devmalloc: ");
  va_list ap;
  va_start(ap, fmt);
  int m = vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
  va_end(ap);
  if (m < 0) return;
  size_t len = (size_t)n + (size_t)m;
  if (len > sizeof buf - 2) len = sizeof buf - 2;
  buf[len++] = '\n';
  dm_log_write(buf, len);
}
