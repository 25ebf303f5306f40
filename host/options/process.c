/*
 * process.c — the process's options and its messages. dm_options() parses
 * the table (options.c) from the environment once, warns about DEVMALLOC_*
 * names that are no option, opens the log and writes what parsing found.
 * Messages: one line each, prefixed "devmalloc: ", to DEVMALLOC_LOG
 * (appended; opened O_NOFOLLOW, created 0600) or stderr, written with
 * write(2) so that no stdio state is touched from hooks. Every part of the
 * shim (hooks, re-link) prints through here; the host pool through the log
 * function the shim hands it.
 *
 * Levels: DM_LOG_WARN always printed; INFO when DEVMALLOC_VERBOSE>=1; DEBUG
 * when >=2, and then every line carries the milliseconds since the options
 * were read ("[+12.3 ms]"): a start-up's timeline.
 *
 * Locking: dm_options() initializes under pthread_once; afterwards the struct
 * and the log's fd are read-only. Messages found while parsing are collected
 * in a buffer and written once the log is open. Each message is one write()
 * call (atomic for lines up to PIPE_BUF on pipes, O_APPEND on files).
 */
#include "options.h"
#include "log.h"
#include "devmalloc.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the log ------------------------------------------------------------- */

static int g_fd = 2;
static int g_level;
static double g_t0; /* when the log was opened: DEBUG level stamps lines with the time since */

void dm_log_open(const dm_options_t *o) {
  g_level = o->verbose;
  g_t0 = dm_clock_ms();
  if (o->log) {
    /* Not through a symbolic link, private if created, never blocking on a
     * FIFO without a reader; a FIFO with one, a tty or a file are fine. */
    int fd = open(o->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
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
  (void)dm_options(); /* never called from inside its init */
  if (level > DM_LOG_WARN && level > g_level) return;
  char buf[512];
  int n = g_level >= DM_LOG_DEBUG ? snprintf(buf, sizeof buf, "devmalloc: [+%.1f ms] ", dm_clock_ms() - g_t0)
                                  : snprintf(buf, sizeof buf, "devmalloc: ");
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

/* --- the process's options ---------------------------------------------- */

extern char **environ;
static dm_options_t g_opts;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static char g_msg[2048];
static size_t g_msg_len;

static void collect(const char *fmt, const char *a, const char *b, const char *c) {
  int n = snprintf(g_msg + g_msg_len, sizeof g_msg - g_msg_len, fmt, a, b, c);
  if (n > 0 && g_msg_len + (size_t)n < sizeof g_msg) g_msg_len += (size_t)n;
}

static const char *env_get(const char *name) { return secure_getenv(name); }

static void collect_warning(const char *env, const char *value, const char *what) {
  collect("devmalloc: warning: %s=\"%.64s\" %s\n", env, value ? value : "", what);
}

static void collect_unknown(const char *name, const char *s) {
  collect("devmalloc: warning: unknown option %s ignored%s%s\n", name,
          s ? "; did you mean " : " (docs/options.md lists them)", s ? s : "");
}

static void init_options(void) {
  (void)dm_options_parse(&g_opts, env_get, collect_warning);
  (void)dm_options_unknown(environ, collect_unknown);
  dm_log_open(&g_opts);
  if (g_opts.verbose >= 1)
    collect("devmalloc: %s %s%s\n", "shim version", DEVMALLOC_VERSION_STRING,
            g_opts.disable ? " (disabled by DEVMALLOC_DISABLE)" : "");
  if (g_msg_len) dm_log_write(g_msg, g_msg_len);
}

const dm_options_t *dm_options(void) {
  pthread_once(&g_once, init_options);
  return &g_opts;
}
