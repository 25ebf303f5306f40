/*
 * cache_dir.c — open the JIT cache directory safely (see cache.h).
 *
 * The path must be absolute. It is walked one component at a time from "/"
 * with openat(), so what is checked is what is used:
 *   - a missing component is created (0700) only inside a directory the
 *     effective user owns: root running with a user's HOME (sudo -E) creates
 *     nothing in that user's tree;
 *   - a symbolic link is followed only where it sits in a directory owned by
 *     root or by the effective user (no one else can have planted it);
 *   - the final directory must be a real directory (not a link), owned by the
 *     effective user, mode 0700.
 *
 * Locking: none (no state).
 */
#include "cache.h"
#include "image/relink_err.h"
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_CLOEXEC)

/* Step from directory `at` (whose stat is *ast) into `name`; returns the new
 * fd or a negative errno with `why` filled. */
static int step(int at, const struct stat *ast, const char *name, int last, const char *path, char *why,
                size_t whylen) {
  uid_t me = geteuid();
  struct stat lst;
  if (fstatat(at, name, &lst, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno != ENOENT)
      return dm_fail(-errno, why, whylen, "cache directory %s: %s: %s", path, name, strerror(errno));
    if (ast->st_uid != me)
      return dm_fail(-EPERM, why, whylen,
                     "cache directory %s: %s is missing and its "
                     "parent is owned by uid %u, not %u: not created",
                     path, name, (unsigned)ast->st_uid, (unsigned)me);
    if (mkdirat(at, name, 0700) != 0 && errno != EEXIST)
      return dm_fail(-errno, why, whylen, "cannot create cache directory %s: %s", path, strerror(errno));
  } else if (S_ISLNK(lst.st_mode)) {
    if (last) return dm_fail(-EPERM, why, whylen, "cache directory %s is a symbolic link: not used", path);
    if (ast->st_uid != me && ast->st_uid != 0)
      return dm_fail(-EPERM, why, whylen,
                     "cache directory %s: the link %s is in a "
                     "directory of uid %u: not followed",
                     path, name, (unsigned)ast->st_uid);
  }
  int fd = openat(at, name, DIR_FLAGS | (last ? O_NOFOLLOW : 0));
  if (fd < 0)
    return dm_fail(-errno, why, whylen, "cannot open cache directory %s: %s", path, strerror(errno));
  return fd;
}

int dm_cache_dir_open(const char *path, char *why, size_t whylen) {
  char buf[PATH_MAX];
  size_t n = path ? strlen(path) : 0;
  if (!n || path[0] != '/')
    return dm_fail(-EINVAL, why, whylen, "cache directory \"%s\" is not an absolute path", path ? path : "");
  if (n >= sizeof buf)
    return dm_fail(-ENAMETOOLONG, why, whylen, "cache directory path of %zu bytes is too long", n);
  memcpy(buf, path, n + 1);
  int at = open("/", DIR_FLAGS);
  if (at < 0) return dm_fail(-errno, why, whylen, "cannot open /");
  char *save = NULL;
  char *comp = strtok_r(buf + 1, "/", &save);
  while (comp) {
    char *next = strtok_r(NULL, "/", &save);
    struct stat ast;
    int fd = fstat(at, &ast) != 0 ? -errno
             : strcmp(comp, ".") == 0 || strcmp(comp, "..") == 0
                 ? dm_fail(-EINVAL, why, whylen, "cache directory %s has . or ..", path)
                 : step(at, &ast, comp, next == NULL, path, why, whylen);
    close(at);
    if (fd < 0) return fd;
    at = fd;
    comp = next;
  }
  struct stat st;
  if (fstat(at, &st) != 0) {
    close(at);
    return dm_fail(-EIO, why, whylen, "cannot stat cache directory %s", path);
  }
  if (st.st_uid != geteuid()) {
    close(at);
    return dm_fail(-EPERM, why, whylen,
                   "cache directory %s is owned by uid %u, not %u: "
                   "not used",
                   path, (unsigned)st.st_uid, (unsigned)geteuid());
  }
  if (st.st_mode & 077) {
    close(at);
    return dm_fail(-EPERM, why, whylen,
                   "cache directory %s has mode %04o (must be 0700): "
                   "not used",
                   path, (unsigned)(st.st_mode & 07777));
  }
  return at;
}
