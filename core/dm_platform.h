/*
 * dm_platform.h — the one platform layer of the allocator core.
 *
 * The core (sem.c, buddy.c, slab.c, heap.c) is plain C written against this
 * contract and compiles twice: with nvcc for the GPU (CUDA atomics, %smid,
 * __nanosleep) and with gcc for the host test harness (C11 memory model via
 * the __atomic builtins, pthreads). Nothing else in the core may use a
 * compiler- or device-specific facility.
 *
 * Contract
 *   DM_FN               qualifier of every core function (device or host)
 *   DM_INLINE           qualifier of small helpers (static inline)
 *   DM_COLD             qualifier of slow paths kept out of line on the GPU, so
 *                       that the hot path of malloc/free needs few registers
 *                       (the device code is capped at 24: docs/design.md)
 *   DM_HOT              qualifier of core entry points that the GPU's malloc
 *                       and free always inline (their common path: nothing
 *                       in it may call out, docs/design.md)
 *   dm_load32/64        atomic loads (relaxed; pair with dm_fence)
 *   dm_load64_device    dm_load64 for a word that only the device changes while
 *                       kernels run (device scope on the GPU, where dm_load64
 *                       is system scope, as the host-mapped words need)
 *   dm_store32/64       atomic stores
 *   dm_store32_device   dm_store32 for a word that only the device reads while
 *                       kernels run (device scope on the GPU)
 *   dm_cas32/64         compare-and-swap, returns the old value (full fence)
 *   dm_add32/64         fetch-and-add, returns the old value
 *   dm_exch32           atomic exchange, returns the old value
 *   dm_or64/and64       fetch-or / fetch-and, return the old value
 *   dm_max64            atomic maximum
 *   dm_fence()          full memory fence (device scope on the GPU)
 *   dm_and64_release    fetch-and that orders the caller's earlier loads and
 *                       stores before it (a release; device scope on the GPU)
 *   dm_exch32_release   exchange, a release likewise
 *   dm_cas32_release    compare-and-swap, a release likewise
 *   dm_pause()          back-off inside spin loops
 *   dm_pause_ns(ns)     a longer back-off (about ns nanoseconds on the GPU)
 *   dm_now_ns()         a clock in nanoseconds (%globaltimer; CLOCK_MONOTONIC)
 *   dm_rand()           cheap per-thread pseudo-random 32-bit value
 *   dm_arena_hint(k)    index of the caller's arena (SM id x k + warp slot / thread)
 *   dm_ctz64/dm_popc64/dm_clz64  bit helpers
 *   DM_GLOBAL(p)        (GPU only) p points to global memory: every word the
 *                       atomics and loads above reach does (the heap and its
 *                       descriptor), and the GPU's primitives say so
 */
#ifndef DM_PLATFORM_H
#define DM_PLATFORM_H

#include <stdint.h>
#include <stddef.h>

#if defined(__CUDACC__)
/* ---------------------------------------------------------------- CUDA --- */
#define DM_FN __device__
#define DM_INLINE __device__ __forceinline__
#define DM_COLD __device__ __noinline__
#define DM_HOT __device__ __forceinline__
/* A helper that files of one part share (the slab's: dm_internal.h): static
 * here, where the core is one translation unit (core_unity.h), so that the
 * device module's symbols and code do not follow the files' split. */
#define DM_PART_INLINE static DM_INLINE
#define DM_PART_COLD static DM_COLD

/* Every word these reach lies in global memory (the heap and its
 * descriptor; device memory, mapped or not). Saying so makes the atomics
 * global ones: on a generic pointer each was compiled with a test for the
 * shared window and a CAS loop for it, and could not become a reduction when
 * its result is unused. */
#define DM_GLOBAL(p) __builtin_assume(__isGlobal(p))
static DM_INLINE uint32_t dm_load32(const uint32_t *p) {
  DM_GLOBAL(p);
  return *(const volatile uint32_t *)p;
}
static DM_INLINE uint64_t dm_load64(const uint64_t *p) {
  DM_GLOBAL(p);
  return *(const volatile uint64_t *)p;
}
static DM_INLINE uint64_t dm_load64_device(const uint64_t *p) {
  uint64_t v;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p));
  return v;
}
static DM_INLINE void dm_store32(uint32_t *p, uint32_t v) {
  DM_GLOBAL(p);
  *(volatile uint32_t *)p = v;
}
static DM_INLINE void dm_store32_device(uint32_t *p, uint32_t v) {
  asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v));
}
static DM_INLINE void dm_store64(uint64_t *p, uint64_t v) {
  DM_GLOBAL(p);
  *(volatile uint64_t *)p = v;
}
static DM_INLINE uint32_t dm_cas32(uint32_t *p, uint32_t e, uint32_t d) {
  DM_GLOBAL(p);
  return atomicCAS(p, e, d);
}
static DM_INLINE uint64_t dm_cas64(uint64_t *p, uint64_t e, uint64_t d) {
  DM_GLOBAL(p);
  return atomicCAS((unsigned long long *)p, e, d);
}
static DM_INLINE uint32_t dm_add32(uint32_t *p, uint32_t v) {
  DM_GLOBAL(p);
  return atomicAdd(p, v);
}
static DM_INLINE uint32_t dm_exch32(uint32_t *p, uint32_t v) {
  DM_GLOBAL(p);
  return atomicExch(p, v);
}
static DM_INLINE uint64_t dm_add64(uint64_t *p, uint64_t v) {
  DM_GLOBAL(p);
  return atomicAdd((unsigned long long *)p, (unsigned long long)v);
}
static DM_INLINE uint64_t dm_or64(uint64_t *p, uint64_t v) {
  DM_GLOBAL(p);
  return atomicOr((unsigned long long *)p, (unsigned long long)v);
}
static DM_INLINE uint64_t dm_and64(uint64_t *p, uint64_t v) {
  DM_GLOBAL(p);
  return atomicAnd((unsigned long long *)p, (unsigned long long)v);
}
static DM_INLINE void dm_max64(uint64_t *p, uint64_t v) {
  DM_GLOBAL(p);
  atomicMax((unsigned long long *)p, (unsigned long long)v);
}
static DM_INLINE void dm_fence(void) { __threadfence(); }
/* A release atomic, not a fence: fence.acq_rel.gpu also invalidates the SM's
 * L1 (CCTL.IVALL on sm_90), which slows every free more (docs/decisions.md,
 * "A free is a release"). */
static DM_INLINE uint64_t dm_and64_release(uint64_t *p, uint64_t v) {
  uint64_t old;
  asm volatile("atom.release.gpu.global.and.b64 %0, [%1], %2;" : "=l"(old) : "l"(p), "l"(v) : "memory");
  return old;
}
/* An exchange that orders the caller's earlier stores before it (a release):
 * what a thread that finds the new value must see. */
static DM_INLINE uint32_t dm_exch32_release(uint32_t *p, uint32_t v) {
  uint32_t old;
  asm volatile("atom.release.gpu.global.exch.b32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v) : "memory");
  return old;
}
static DM_INLINE uint32_t dm_cas32_release(uint32_t *p, uint32_t e, uint32_t d) {
  uint32_t old;
  asm volatile("atom.release.gpu.global.cas.b32 %0, [%1], %2, %3;"
               : "=r"(old)
               : "l"(p), "r"(e), "r"(d)
               : "memory");
  return old;
}
static DM_INLINE void dm_pause(void) { __nanosleep(64); }
static DM_INLINE void dm_pause_ns(uint32_t ns) { __nanosleep(ns); }
static DM_INLINE uint64_t dm_now_ns(void) {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
static DM_INLINE uint32_t dm_smid(void) {
  uint32_t id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}
static DM_INLINE uint32_t dm_rand(void) {
  uint32_t x = (uint32_t)clock64() * 2654435761u ^ (threadIdx.x * 0x9E3779B9u) ^ (blockIdx.x * 0x85EBCA6Bu);
  x ^= x >> 15;
  x *= 0x2C1B3C6Du;
  x ^= x >> 12;
  return x;
}
/* The SM and, within it, the warp's slot: per_sm arenas per SM. */
static DM_INLINE uint32_t dm_arena_hint(uint32_t per_sm) {
  uint32_t wid;
  asm volatile("mov.u32 %0, %%warpid;" : "=r"(wid));
  return dm_smid() * per_sm + wid % per_sm;
}
static DM_INLINE int dm_ctz64(uint64_t x) { return __ffsll((long long)x) - 1; }
static DM_INLINE int dm_popc64(uint64_t x) { return __popcll(x); }
static DM_INLINE int dm_clz64(uint64_t x) { return __clzll((long long)x); }

#else
/* ---------------------------------------------------------------- host --- */
#include <sched.h>
#include <time.h>
#define DM_FN
#define DM_INLINE inline
#define DM_COLD
#define DM_HOT
/* External here, where each core file is compiled alone. */
#define DM_PART_INLINE
#define DM_PART_COLD

#define DM_SC __ATOMIC_SEQ_CST
static inline uint32_t dm_load32(const uint32_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static inline uint64_t dm_load64(const uint64_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static inline uint64_t dm_load64_device(const uint64_t *p) { return dm_load64(p); }
static inline void dm_store32(uint32_t *p, uint32_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
static inline void dm_store32_device(uint32_t *p, uint32_t v) { dm_store32(p, v); }
static inline void dm_store64(uint64_t *p, uint64_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
static inline uint32_t dm_cas32(uint32_t *p, uint32_t e, uint32_t d) {
  __atomic_compare_exchange_n(p, &e, d, 0, DM_SC, DM_SC);
  return e;
}
static inline uint64_t dm_cas64(uint64_t *p, uint64_t e, uint64_t d) {
  __atomic_compare_exchange_n(p, &e, d, 0, DM_SC, DM_SC);
  return e;
}
static inline uint32_t dm_add32(uint32_t *p, uint32_t v) { return __atomic_fetch_add(p, v, DM_SC); }
static inline uint32_t dm_exch32(uint32_t *p, uint32_t v) { return __atomic_exchange_n(p, v, DM_SC); }
static inline uint64_t dm_add64(uint64_t *p, uint64_t v) { return __atomic_fetch_add(p, v, DM_SC); }
static inline uint64_t dm_or64(uint64_t *p, uint64_t v) { return __atomic_fetch_or(p, v, DM_SC); }
static inline uint64_t dm_and64(uint64_t *p, uint64_t v) { return __atomic_fetch_and(p, v, DM_SC); }
static inline void dm_max64(uint64_t *p, uint64_t v) {
  uint64_t o = dm_load64(p);
  while (o < v && !__atomic_compare_exchange_n(p, &o, v, 1, DM_SC, DM_SC)) {}
}
#if defined(__SANITIZE_THREAD__)
/* TSan does not model fences; every core atomic is seq_cst anyway. */
static inline void dm_fence(void) {
  static uint32_t f;
  __atomic_fetch_add(&f, 0, DM_SC);
}
#else
static inline void dm_fence(void) { __atomic_thread_fence(DM_SC); }
#endif
static inline uint64_t dm_and64_release(uint64_t *p, uint64_t v) { return __atomic_fetch_and(p, v, DM_SC); }
static inline uint32_t dm_exch32_release(uint32_t *p, uint32_t v) { return __atomic_exchange_n(p, v, DM_SC); }
static inline uint32_t dm_cas32_release(uint32_t *p, uint32_t e, uint32_t d) { return dm_cas32(p, e, d); }
static inline void dm_pause(void) { sched_yield(); }
extern _Thread_local uint32_t dm_host_backoffs; /* host_prim.c: this thread's dm_pause_ns calls (tests) */
static inline void dm_pause_ns(uint32_t ns) {
  (void)ns;
  dm_host_backoffs++;
  sched_yield();
}
static inline uint64_t dm_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
uint32_t dm_host_rand(void);       /* host_prim.c: thread-local xorshift */
uint32_t dm_host_arena_hint(void); /* host_prim.c: stable per-thread index */
static inline uint32_t dm_rand(void) { return dm_host_rand(); }
static inline uint32_t dm_arena_hint(uint32_t per_sm) {
  (void)per_sm;
  return dm_host_arena_hint();
}
static inline int dm_ctz64(uint64_t x) { return __builtin_ctzll(x); }
static inline int dm_popc64(uint64_t x) { return __builtin_popcountll(x); }
static inline int dm_clz64(uint64_t x) { return __builtin_clzll(x); }
#endif

/* Test hook: DM_CHAOS builds (host only) yield at random points of the
 * lock-free protocols to widen race windows. */
#if defined(DM_CHAOS) && !defined(__CUDACC__)
#define DM_CHAOS_POINT()                          \
  do {                                            \
    if ((dm_host_rand() & 3) == 0) sched_yield(); \
  } while (0)
#else
#define DM_CHAOS_POINT() ((void)0)
#endif

/* Assertions: DM_ASSERT is checked in host test builds only (DM_DEBUG). */
#if defined(DM_DEBUG) && !defined(__CUDACC__)
#include <assert.h>
#define DM_ASSERT(x) assert(x)
#else
#define DM_ASSERT(x) ((void)0)
#endif

#endif /* DM_PLATFORM_H */
