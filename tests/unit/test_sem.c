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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_wait_takes_units),
      cmocka_unit_test(test_wait_grows_when_nothing_expected),
      cmocka_unit_test(test_failed_grow_cancels_expectation),
      cmocka_unit_test(test_try_wait),
      cmocka_unit_test(test_figure1_batch),
      cmocka_unit_test(test_concurrent_accounting),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
