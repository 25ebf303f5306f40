/*
 * test_lifecycle.c — the shim across fork() and dlclose():
 *  - a fork while another thread holds one of the shim's locks: the fork
 *    waits for it (pthread_atfork), and the child can take every lock
 *    (without the handlers it inherits a lock no thread will release and
 *    hangs; alarm turns that into a failure);
 *  - dlclose() of the shim leaves it loaded (-z nodelete): hook pointers
 *    handed out to the application stay valid.
 */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "shim_fake.h"

typedef void (*hold_fn)(dm_fork_phase_t ph);

static atomic_int held;

static void *holder(void *arg) {
  hold_fn f = *(hold_fn *)arg;
  f(DM_FORK_TAKE);
  atomic_store(&held, 1);
  struct timespec ts = {0, 100 * 1000 * 1000};
  nanosleep(&ts, NULL);
  f(DM_FORK_PARENT);
  return NULL;
}

static void every_lock_once(void) {
  dm_owner_lock();
  dm_owner_unlock();
  dm_ctx_fork(DM_FORK_TAKE);
  dm_ctx_fork(DM_FORK_PARENT);
  dm_launch_cache_fork(DM_FORK_TAKE);
  dm_launch_cache_fork(DM_FORK_PARENT);
  dm_graphs_fork(DM_FORK_TAKE);
  dm_graphs_fork(DM_FORK_PARENT);
}

static void t_fork_while_locked(void **st) {
  static hold_fn locks[] = {dm_owner_fork, dm_ctx_fork, dm_launch_cache_fork, dm_graphs_fork};
  dm_fork_register();
  for (size_t i = 0; i < sizeof locks / sizeof *locks; i++) {
    pthread_t t;
    atomic_store(&held, 0);
    assert_int_equal(pthread_create(&t, NULL, holder, &locks[i]), 0);
    while (!atomic_load(&held)) sched_yield();
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
      alarm(5);
      every_lock_once();
      _exit(0);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    pthread_join(t, NULL);
    if (WIFSIGNALED(status)) fail_msg("lock %zu: child hung on an inherited lock", i);
    assert_int_equal(WEXITSTATUS(status), 0);
  }
  every_lock_once(); /* and the parent holds none of them afterwards */
}

static void t_dlclose_keeps_shim(void **st) {
  void *h = dlopen(SHIM_SO, RTLD_NOW | RTLD_LOCAL);
  assert_non_null(h);
  void *hook = dlsym(h, "cuLaunchKernel");
  assert_non_null(hook);
  assert_int_equal(dlclose(h), 0);
  void *again = dlopen(SHIM_SO, RTLD_NOW | RTLD_NOLOAD);
  assert_non_null(again); /* still mapped: the hook pointer stays valid */
  Dl_info info;
  assert_int_not_equal(dladdr(hook, &info), 0);
  dlclose(again);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(t_fork_while_locked),
      cmocka_unit_test(t_dlclose_keeps_shim),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
