/*
 * test_grow_backoff.c — the idle backoff of a growing heap's service thread
 * (host/heap/grow_backoff.h), as a pure function: no thread, no clock.
 *
 * Cases: the sleep doubles from poll_ns after each idle pass and stops at
 * the cap; a pass that mapped (or tried) or found a trim pending sets it
 * back to poll_ns, from anywhere on the way up; a target held back by a
 * standing refusal counts as idle; poll_ns at or above the maximum is the
 * cap itself.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "grow_backoff.h"
#include "growth.h"

#define POLL 50000ull            /* the runtime's default polling period */
#define MAX DM_GROW_IDLE_POLL_NS /* 1 ms */

/* Run passes that each did `did` from `start`; check every sleep in `want`. */
static void walk(uint64_t start, unsigned did, uint64_t poll, uint64_t max, const uint64_t *want, int n) {
  uint64_t s = start;
  for (int i = 0; i < n; i++) {
    s = dm_grow_next_sleep(s, did, poll, max);
    if (s != want[i])
      fail_msg("pass %d (did %u, poll %llu, max %llu): slept %llu, want %llu", i, did,
               (unsigned long long)poll, (unsigned long long)max, (unsigned long long)s,
               (unsigned long long)want[i]);
  }
}

static void test_idle_doubles_to_cap(void **st) {
  /* 50, 100, 200, 400, 800 us, then 1 ms (not 1.6), and it stays there */
  static const uint64_t want[] = {100000, 200000, 400000, 800000, MAX, MAX, MAX};
  walk(POLL, 0, POLL, MAX, want, 7);
}

static void test_cap_reached_exactly(void **st) {
  /* half the cap doubles to the cap; a step past half is clamped to it */
  assert_int_equal(dm_grow_next_sleep(MAX / 2, 0, POLL, MAX), MAX);
  assert_int_equal(dm_grow_next_sleep(MAX / 2 + 1, 0, POLL, MAX), MAX);
  assert_int_equal(dm_grow_next_sleep(MAX / 2 - 1, 0, POLL, MAX), MAX - 2);
  static const uint64_t want[] = {600000, MAX, MAX};
  walk(300000, 0, 300000, MAX, want, 3);
}

static void test_work_resets_to_poll(void **st) {
  static const unsigned work[] = {DM_PASS_MAPPED, DM_PASS_TRIM, DM_PASS_MAPPED | DM_PASS_TRIM,
                                  DM_PASS_TRIM | DM_PASS_HELD_BACK};
  static const uint64_t from[] = {POLL, 200000, 800000, MAX};
  for (int w = 0; w < 4; w++)
    for (int f = 0; f < 4; f++)
      if (dm_grow_next_sleep(from[f], work[w], POLL, MAX) != POLL)
        fail_msg("work %u from %llu did not go back to poll_ns", work[w], (unsigned long long)from[f]);
}

static void test_back_off_again_after_work(void **st) {
  uint64_t s = MAX;
  s = dm_grow_next_sleep(s, DM_PASS_MAPPED, POLL, MAX);
  assert_int_equal(s, POLL);
  static const uint64_t want[] = {100000, 200000, 400000};
  walk(s, 0, POLL, MAX, want, 3);
}

static void test_held_back_is_idle(void **st) {
  /* device full: the target stands above mapped, but the pass did nothing */
  static const uint64_t want[] = {100000, 200000, 400000, 800000, MAX, MAX};
  walk(POLL, DM_PASS_HELD_BACK, POLL, MAX, want, 6);
}

static void test_poll_at_or_above_max(void **st) {
  /* the cap is never below poll_ns: idle or busy, the sleep stays poll_ns */
  static const uint64_t slow = 3 * MAX, same = MAX;
  static const uint64_t want_slow[] = {slow, slow}, want_same[] = {same, same};
  walk(slow, 0, slow, MAX, want_slow, 2);
  walk(slow, DM_PASS_HELD_BACK, slow, MAX, want_slow, 2);
  walk(slow, DM_PASS_MAPPED, slow, MAX, want_slow, 2);
  walk(same, 0, same, MAX, want_same, 2);
  /* the longest poll_ns dm_grower_start keeps (just under a second) */
  assert_int_equal(dm_grow_next_sleep(999999999ull, 0, 999999999ull, MAX), 999999999ull);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_idle_doubles_to_cap), cmocka_unit_test(test_cap_reached_exactly),
      cmocka_unit_test(test_work_resets_to_poll), cmocka_unit_test(test_back_off_again_after_work),
      cmocka_unit_test(test_held_back_is_idle),   cmocka_unit_test(test_poll_at_or_above_max),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
