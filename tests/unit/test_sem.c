/* test_sem.c — bulk semaphore semantics (wait / signal / try-wait and the
 * batch cases of the paper's Figure 1). */
#include <pthread.h>
#include <unistd.h>
#include "test_common.h"

static void test_wait_takes_units(void **st) {
  dm_sem_t s;
  dm_sem_init(&s, 5);
  assert_int_equal(dm_sem_wait(&s, 2, 4), DM_SEM_OK);
  assert_int_equal(dm_sem_value(&s), 3);
  assert_int_equal(dm_sem_wait(&s, 3, 4), DM_SEM_OK);
  assert_int_equal(dm_sem_value(&s), 0);
}

static void test_wait_grows_when_nothing_expected(void **st) {
  dm_sem_t s;
  dm_sem_init(&s, 1);
  /* C + E - R = 1 < 2: the caller must produce a batch of 4, keeping 2. */
  assert_int_equal(dm_sem_wait(&s, 2, 4), DM_SEM_GROW);
  assert_int_equal(dm_sem_expected(&s), 2);
  assert_int_equal(dm_sem_value(&s), 1);
  dm_sem_signal(&s, 2, 2); /* the other 2 units of the batch */
  assert_int_equal(dm_sem_value(&s), 3);
  assert_int_equal(dm_sem_expected(&s), 0);
}

static void test_failed_grow_cancels_expectation(void **st) {
  dm_sem_t s;
  dm_sem_init(&s, 0);
  assert_int_equal(dm_sem_wait(&s, 1, 8), DM_SEM_GROW);
  assert_int_equal(dm_sem_expected(&s), 7);
  dm_sem_signal(&s, 0, 7);
  assert_int_equal(dm_sem_expected(&s), 0);
  assert_int_equal(dm_sem_value(&s), 0);
  /* Nothing is expected any more: the next waiter must grow, not block. */
  assert_int_equal(dm_sem_wait(&s, 1, 8), DM_SEM_GROW);
}

static void test_try_wait(void **st) {
  dm_sem_t s;
  dm_sem_init(&s, 2);
  assert_false(dm_sem_try_wait(&s, 3));
  assert_int_equal(dm_sem_value(&s), 2);
  assert_true(dm_sem_try_wait(&s, 2));
  assert_int_equal(dm_sem_value(&s), 0);
  assert_false(dm_sem_try_wait(&s, 1));
  dm_sem_signal(&s, 5, 0);
  assert_int_equal(dm_sem_try_take(&s, 8, 1), 5); /* partial take */
  assert_int_equal(dm_sem_try_take(&s, 8, 1), 0);
}

/* Figure 1(b): batch size 4, semaphore at 0. Thread 0 grows (E = 3), threads
 * 1..3 reserve and block, thread 4 finds every expected unit reserved and
 * grows too instead of blocking. */
typedef struct {
  dm_sem_t *s;
  int result;
} waiter_t;

static void *waiter(void *arg) {
  waiter_t *w = arg;
  w->result = dm_sem_wait(w->s, 1, 4);
  return NULL;
}

static void test_figure1_batch(void **st) {
  dm_sem_t s;
  dm_sem_init(&s, 0);
  assert_int_equal(dm_sem_wait(&s, 1, 4), DM_SEM_GROW); /* thread 0 */
  assert_int_equal(dm_sem_expected(&s), 3);
  pthread_t t[3];
  waiter_t w[3];
  for (int i = 0; i < 3; i++) {
    w[i].s = &s;
    w[i].result = 99;
    pthread_create(&t[i], NULL, waiter, &w[i]);
  }
  for (int spin = 0; spin < 10000 && dm_sem_reserved(&s) < 3; spin++) usleep(100);
  assert_int_equal(dm_sem_reserved(&s), 3); /* threads 1..3 block */
  for (int i = 0; i < 3; i++) assert_int_equal(w[i].result, 99);
  assert_int_equal(dm_sem_wait(&s, 1, 4), DM_SEM_GROW); /* thread 4 */
  assert_int_equal(dm_sem_expected(&s), 6);
  dm_sem_signal(&s, 3, 3); /* thread 0's batch arrives: wakes 1..3 */
  for (int i = 0; i < 3; i++) {
    pthread_join(t[i], NULL);
    assert_int_equal(w[i].result, DM_SEM_OK);
  }
  assert_int_equal(dm_sem_value(&s), 0);
  assert_int_equal(dm_sem_reserved(&s), 0);
  dm_sem_signal(&s, 3, 3); /* thread 4's batch */
  assert_int_equal(dm_sem_value(&s), 3);
  assert_int_equal(dm_sem_expected(&s), 0);
}

/* Many threads take units and produce batches when told to: every unit
 * produced is either consumed or still counted, none twice. */
typedef struct {
  dm_sem_t *s;
  uint64_t produced, consumed;
} worker_t;

static void *worker(void *arg) {
  worker_t *w = arg;
  for (int i = 0; i < 20000; i++) {
    if (dm_sem_wait(w->s, 1, 16) == DM_SEM_GROW) {
      w->produced += 16;
      dm_sem_signal(w->s, 15, 15);
    }
    w->consumed++;
  }
  return NULL;
}

static void test_concurrent_accounting(void **st) {
  dm_sem_t s;
  dm_sem_init(&s, 0);
  enum { T = 8 };
  pthread_t t[T];
  worker_t w[T];
  for (int i = 0; i < T; i++) {
    w[i] = (worker_t){&s, 0, 0};
    pthread_create(&t[i], NULL, worker, &w[i]);
  }
  uint64_t produced = 0, consumed = 0;
  for (int i = 0; i < T; i++) {
    pthread_join(t[i], NULL);
    produced += w[i].produced;
    consumed += w[i].consumed;
  }
  assert_int_equal(consumed, (uint64_t)T * 20000);
  assert_int_equal(produced - consumed, dm_sem_value(&s));
  assert_true(dm_sem_value(&s) < 16 * T); /* no batch grown needlessly */
  assert_int_equal(dm_sem_expected(&s), 0);
  assert_int_equal(dm_sem_reserved(&s), 0);
}

/* Waiters that give up: growers that fail half of their grows retire their
 * expected units without units (signal(0, b - n)), so the waiters reserved
 * for them drop their reservations and decide again while others take the
 * units that do arrive. Requests of 1..3 units. The counts stay exact and
 * R and E never wrap, whatever the interleaving of takes, reservations,
 * drops and failed grows. */
typedef struct {
  dm_sem_t *s;
  uint32_t seed;
  uint64_t produced, consumed;
  int wrapped; /* R or E read larger than any count of waiters could make them */
} dropper_t;

static void *dropper(void *arg) {
  dropper_t *d = arg;
  for (int i = 0; i < 20000; i++) {
    d->seed = d->seed * 1103515245u + 12345u;
    uint32_t n = 1 + (d->seed >> 16) % 3;
    for (;;) {
      int r = dm_sem_wait(d->s, n, 8);
      if (r == DM_SEM_OK) break;
      d->seed = d->seed * 1103515245u + 12345u;
      if ((d->seed >> 16) & 1) { /* the grow failed: nothing produced */
        dm_sem_signal(d->s, 0, 8 - n);
        continue;
      }
      d->produced += 8;
      dm_sem_signal(d->s, 8 - n, 8 - n);
      break;
    }
    d->consumed += n;
    uint64_t w = __atomic_load_n(&d->s->w, __ATOMIC_RELAXED);
    if (dm_semw_r(w) > 16 * 3 || dm_semw_e(w) > 16 * 8) d->wrapped = 1;
  }
  return NULL;
}

/* A grow that fails while requests wait for it: they drop their
 * reservations, one of them grows (and produces), the others wait for that
 * batch. Requests of 2 units, batches of 8. */
typedef struct {
  dm_sem_t *s;
  int grew;
} dropwait_t;
static void *drop_waiter(void *arg) {
  dropwait_t *d = arg;
  for (;;) {
    int r = dm_sem_wait(d->s, 2, 8);
    if (r == DM_SEM_OK) return NULL;
    d->grew++;
    dm_sem_signal(d->s, 6, 6);
    return NULL;
  }
}
static void test_failed_grow_drops_reservations(void **st) {
  dm_sem_t s;
  dm_sem_init(&s, 0);
  assert_int_equal(dm_sem_wait(&s, 2, 8), DM_SEM_GROW); /* E 6 */
  pthread_t t[3];
  dropwait_t d[3];
  for (int i = 0; i < 3; i++) {
    d[i] = (dropwait_t){&s, 0};
    pthread_create(&t[i], NULL, drop_waiter, &d[i]);
  }
  for (int spin = 0; spin < 10000 && dm_sem_reserved(&s) < 6; spin++) usleep(100);
  assert_int_equal(dm_sem_reserved(&s), 6); /* all three wait for that grow */
  dm_sem_signal(&s, 0, 6);                  /* it failed: they drop and decide again */
  int grew = 0;
  for (int i = 0; i < 3; i++) {
    pthread_join(t[i], NULL);
    grew += d[i].grew;
  }
  assert_int_equal(grew, 1); /* one batch of 8 serves all three */
  assert_int_equal(dm_sem_value(&s), 2);
  assert_int_equal(dm_sem_expected(&s), 0);
  assert_int_equal(dm_sem_reserved(&s), 0);
}

static void test_concurrent_drops(void **st) {
  dm_sem_t s;
  dm_sem_init(&s, 0);
  enum { T = 16 };
  pthread_t t[T];
  dropper_t d[T];
  for (int i = 0; i < T; i++) {
    d[i] = (dropper_t){&s, 0x9E3779B9u * (i + 1), 0, 0, 0};
    pthread_create(&t[i], NULL, dropper, &d[i]);
  }
  uint64_t produced = 0, consumed = 0;
  for (int i = 0; i < T; i++) {
    pthread_join(t[i], NULL);
    produced += d[i].produced;
    consumed += d[i].consumed;
    assert_false(d[i].wrapped); /* R and E never wrap */
  }
  assert_int_equal(produced - consumed, dm_sem_value(&s));
  assert_int_equal(dm_semw_c(s.w), (int32_t)(produced - consumed));
  assert_int_equal(dm_sem_expected(&s), 0);
  assert_int_equal(dm_sem_reserved(&s), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_wait_takes_units),
      cmocka_unit_test(test_wait_grows_when_nothing_expected),
      cmocka_unit_test(test_failed_grow_cancels_expectation),
      cmocka_unit_test(test_try_wait),
      cmocka_unit_test(test_figure1_batch),
      cmocka_unit_test(test_concurrent_accounting),
      cmocka_unit_test(test_failed_grow_drops_reservations),
      cmocka_unit_test(test_concurrent_drops),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
