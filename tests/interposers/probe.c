/*
 * probe.c — run under LD_PRELOAD of the shim (and other interposers) by
 * check_interposers.sh: the paths of the shim's dlsym a CUDA program and
 * other interposers take.
 *   probe STUB_LIBCUDA [--no-shim]
 * Checks: dlsym(RTLD_NEXT/RTLD_DEFAULT, non-cu names) answer as glibc does
 * from this program; a hooked driver name looked up in the stub libcuda is
 * answered by the shim (the pointer lies in libdevmalloc_preload.so; with
 * --no-shim: by the stub), a non-hooked one by the stub itself; malloc works. Prints "probe: ok" and
 * the cost of dlsym(RTLD_NEXT, "strlen") in ns, or "probe: FAIL what".
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int fails;
#define CHECK(c)                      \
  do {                                \
    if (!(c)) {                       \
      printf("probe: FAIL %s\n", #c); \
      fails++;                        \
    }                                 \
  } while (0)

static const char *object_of(const void *p) {
  Dl_info di;
  return p && dladdr(p, &di) && di.dli_fname ? di.dli_fname : "";
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: probe STUB_LIBCUDA [--no-shim]\n");
    return 2;
  }
  int shim = !(argc > 2 && !strcmp(argv[2], "--no-shim"));
  void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
  CHECK(libc != NULL);
  void *next = dlsym(RTLD_NEXT, "getpid");
  CHECK(next != NULL && strstr(object_of(next), "libc.so") != NULL);
  CHECK(dlsym(RTLD_DEFAULT, "dlopen") != NULL);
  CHECK(dlsym(RTLD_NEXT, "no_such_symbol_anywhere") == NULL);
  char *m = malloc(100);
  CHECK(m != NULL);
  free(m);

  void *cuda = dlopen(argv[1], RTLD_LAZY | RTLD_LOCAL);
  CHECK(cuda != NULL);
  if (cuda) {
    void *gpa = dlsym(cuda, "cuGetProcAddress_v2");
    CHECK(gpa != NULL && !strstr(object_of(gpa), "libdevmalloc_preload") == !shim);
    void *memcpy_ = dlsym(cuda, "cuMemcpy");
    CHECK(memcpy_ != NULL && strstr(object_of(memcpy_), "libdevmalloc_preload") == NULL);
    /* the caller-relative search of driver names (RTLD_NEXT, RTLD_DEFAULT) */
    void *global = dlopen(argv[1], RTLD_LAZY | RTLD_GLOBAL);
    CHECK(global != NULL);
    CHECK(dlsym(RTLD_NEXT, "cuMemcpy") == memcpy_);
    CHECK(dlsym(RTLD_DEFAULT, "cuMemcpy") == memcpy_);
    CHECK(dlsym(RTLD_NEXT, "cuNoSuchFunction") == NULL);
  }

  enum { N = 200000 };
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (int i = 0; i < N; i++) CHECK(dlsym(RTLD_NEXT, "strlen") != NULL);
  clock_gettime(CLOCK_MONOTONIC, &b);
  long ns = ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec)) / N;
  if (fails) return 1;
  printf("probe: ok, dlsym(RTLD_NEXT) %ld ns\n", ns);
  return 0;
}
