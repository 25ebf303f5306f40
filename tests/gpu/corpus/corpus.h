// corpus.h — small helpers shared by the corpus programs: error checks (CK,
// the test programs' cuda_ck.h), a digest of results (FNV-1a, 64 bit), a
// 32-bit integer hash, the reduced-size switch, and the optional explicit
// heap set-up of the relinked build.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <cuda_runtime.h>
#include "../progs/cuda_ck.h" /* CK(x) */
#include "../progs/hash32.h"  /* hash32(x) */
#ifdef USE_DEVMALLOC_INIT
#include <devmalloc_cuda.h>
#endif

struct Digest {
  uint64_t h = 1469598103934665603ull;
  void bytes(const void *p, size_t n) {
    const unsigned char *b = (const unsigned char *)p;
    for (size_t i = 0; i < n; i++) {
      h ^= b[i];
      h *= 1099511628211ull;
    }
  }
  template <class T> void add(const T &v) { bytes(&v, sizeof v); }
};

// CORPUS_SMALL=1: reduced sizes (for compute-sanitizer runs).
static inline bool corpus_small() {
  const char *s = getenv("CORPUS_SMALL");
  return s && *s && strcmp(s, "0") != 0;
}

// The relinked build may be run without the LD_PRELOAD shim (for example
// under compute-sanitizer): with CORPUS_DEVMALLOC_INIT=1 it creates its heap
// itself. Other builds ignore this.
static inline void corpus_heap_init(size_t bytes) {
#ifdef USE_DEVMALLOC_INIT
  const char *s = getenv("CORPUS_DEVMALLOC_INIT");
  if (s && *s && strcmp(s, "0") != 0) CK(devmalloc_cuda_init(bytes));
#else
  (void)bytes;
#endif
}

// One line on stdout, compared exactly between the builds.
static inline void corpus_result(const char *prog, const Digest &d, const char *extra = "") {
  printf("digest %s %016llx%s%s\n", prog, (unsigned long long)d.h, extra[0] ? " " : "", extra);
  fflush(stdout);
}
