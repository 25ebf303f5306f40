// shim_threads.cu — two host threads, each with its own stream, launching
// malloc kernels at the same time (first launches race in the shim).
#include <pthread.h>
#include "shim_common.h"

struct arg_t {
  unsigned salt;
  counts_t c;
};

static void *worker(void *p) {
  arg_t *a = (arg_t *)p;
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  a->c = {0, 0, 0};
  for (int i = 0; i < 4; i++) {
    counts_t c = run_on(s, 1 << 15, 512, a->salt + i);
    a->c.ok += c.ok;
    a->c.null += c.null;
    a->c.bad += c.bad;
  }
  CK(cudaStreamDestroy(s));
  return nullptr;
}

int main() {
  CK(cudaFree(0));  // context first, so both threads share it
  pthread_t t[2];
  arg_t a[2] = {{10, {}}, {20, {}}};
  for (int i = 0; i < 2; i++) pthread_create(&t[i], nullptr, worker, &a[i]);
  for (int i = 0; i < 2; i++) pthread_join(t[i], nullptr);
  int rc = report("thread0", a[0].c, 4ull << 15);
  int rc2 = report("thread1", a[1].c, 4ull << 15);
  if (rc == 1 || rc2 == 1) return 1;
  return rc ? rc : rc2;
}
