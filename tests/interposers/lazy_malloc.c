/*
 * lazy_malloc.c — a malloc wrapper of the most common kind, for the
 * interposer tests: malloc/calloc/realloc/free resolve the next definition
 * with dlsym(RTLD_NEXT, ...) on their first call and count the calls. While
 * the look-up runs (dlsym may allocate), requests are served from a static
 * buffer. At exit, with LAZY_MALLOC_REPORT set, it writes
 * "lazy_malloc: N calls" to stderr (write(2): no stdio at exit).
 *
 * Locking: none beyond the atomic counter; the look-up is idempotent.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *(*next_malloc)(size_t);
static void *(*next_calloc)(size_t, size_t);
static void *(*next_realloc)(void *, size_t);
static void (*next_free)(void *);
static __thread int resolving;
static char boot[1 << 16] __attribute__((aligned(16)));
static size_t boot_used;
static unsigned long calls;

static int in_boot(const void *p) { return (const char *)p >= boot && (const char *)p < boot + sizeof boot; }

static void *boot_alloc(size_t n) {
  size_t off = __atomic_fetch_add(&boot_used, (n + 15) & ~(size_t)15, __ATOMIC_RELAXED);
  return off + n <= sizeof boot ? boot + off : NULL;
}

static int resolve(void) {
  if (next_free) return 0;
  if (resolving) return -1;
  resolving = 1;
  next_malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
  next_calloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
  next_realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
  next_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
  resolving = 0;
  if (!next_malloc || !next_calloc || !next_realloc || !next_free) abort();
  return 0;
}

void *malloc(size_t n) {
  if (resolve()) return boot_alloc(n);
  __atomic_fetch_add(&calls, 1, __ATOMIC_RELAXED);
  return next_malloc(n);
}

void *calloc(size_t a, size_t b) {
  if (resolve()) return boot_alloc(a * b); /* boot is zero and never reused */
  __atomic_fetch_add(&calls, 1, __ATOMIC_RELAXED);
  return next_calloc(a, b);
}

void *realloc(void *p, size_t n) {
  if (resolve() || in_boot(p)) {
    void *q = in_boot(p) || !next_malloc ? boot_alloc(n) : next_malloc(n);
    if (q && p) { /* old size unknown: copy what boot holds */
      size_t left = (size_t)(boot + sizeof boot - (const char *)p);
      memcpy(q, p, n < left ? n : left);
    }
    return q;
  }
  __atomic_fetch_add(&calls, 1, __ATOMIC_RELAXED);
  return next_realloc(p, n);
}

void free(void *p) {
  if (!p || in_boot(p)) return;
  if (resolve()) return;
  next_free(p);
}

__attribute__((destructor)) static void report(void) {
  if (!getenv("LAZY_MALLOC_REPORT")) return;
  char buf[64];
  int n = snprintf(buf, sizeof buf, "lazy_malloc: %lu calls\n", calls);
  if (n > 0) (void)!write(2, buf, (size_t)n);
}
