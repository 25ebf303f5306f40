/*
 * host_prim.c — the host half of the platform layer (dm_platform.h):
 * per-thread pseudo-random numbers and arena indices for the host build, and
 * the count of a thread's back-offs (a test tells a wait from a slow answer).
 * Locking: thread-local state only; the arena counter is one atomic.
 */
#include "dm_platform.h"

static _Thread_local uint32_t rng_state;
static _Thread_local uint32_t arena_id;
static uint32_t next_arena;
_Thread_local uint32_t dm_host_backoffs;

uint32_t dm_host_arena_hint(void) {
  if (!arena_id) arena_id = __atomic_add_fetch(&next_arena, 1, __ATOMIC_RELAXED);
  return arena_id - 1;
}

uint32_t dm_host_rand(void) {
  uint32_t x = rng_state;
  if (!x) x = 0x9E3779B9u ^ (dm_host_arena_hint() * 0x85EBCA6Bu) ^ (uint32_t)(uintptr_t)&rng_state;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  rng_state = x ? x : 1;
  return x;
}
