/*
 * dm_hangdump.cu — the device suite (dm_suite.cu) with a watchdog, for a
 * suite that hangs: when it has not ended after --deadline seconds (default
 * 10; a full run takes about 2 s on an H200), the watchdog copies the heap's
 * metadata to the host over a non-blocking stream while the kernel still
 * runs, prints three snapshots 0.3 s apart (heap_dump.c: what is locked,
 * waited for or inconsistent) and exits with status 3. Not one of the suite's
 * cases: a tool for finding where the allocator waits.
 *   dm_hangdump [--deadline S] [--quick]
 */
#define main dm_suite_main
#include "dm_suite.cu"
#undef main
#include <atomic>
#include <thread>
#include <unistd.h>
#include <cuda.h>
extern "C" {
#include "heap_priv.h"
}
#include "heap_dump.h"

static std::atomic<int> suite_done{0};

static void dump_heap(void) {
  devmalloc_heap_t *hp = heap;
  if (!hp) {
    printf("DUMP no heap yet\n");
    return;
  }
  cuCtxSetCurrent(hp->ctx);
  uint64_t pool = hp->layout.pool_bytes, n = hp->bytes - pool;
  void *buf = nullptr;
  CUstream st;
  if (cuMemAllocHost(&buf, n) != CUDA_SUCCESS ||
      cuStreamCreate(&st, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS) {
    printf("DUMP no pinned buffer or stream for the copy\n");
    return;
  }
  for (int k = 0; k < 3; k++) {
    CUresult r = cuMemcpyDtoHAsync(buf, hp->base + pool, n, st);
    if (r == CUDA_SUCCESS) r = cuStreamSynchronize(st);
    printf("DUMP snapshot %d (copy: %s)\n", k, r == CUDA_SUCCESS ? "ok" : "failed");
    if (r != CUDA_SUCCESS) return;
    dm_heap_t view;
    dm_heap_build(&hp->layout, (uint64_t)(uintptr_t)buf - pool, hp->bytes, &view);
    dm_heap_dump(&view, stdout);
    fflush(stdout);
    usleep(300000);
  }
}

static void watchdog(int deadline) {
  for (int t = 0; t < deadline * 10; t++) {
    if (suite_done.load()) return;
    usleep(100000);
  }
  printf("FAIL dm_hangdump: the suite had not ended after %d s; the heap while it runs:\n", deadline);
  fflush(stdout);
  dump_heap();
  _exit(3);
}

int main(int argc, char **argv) {
  int deadline = 10;
  std::vector<char *> args{argv[0]};
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--deadline") && i + 1 < argc)
      deadline = atoi(argv[++i]);
    else
      args.push_back(argv[i]);
  }
  std::thread w(watchdog, deadline > 0 ? deadline : 10);
  int r = dm_suite_main((int)args.size(), args.data());
  suite_done.store(1);
  w.join();
  return r;
}
