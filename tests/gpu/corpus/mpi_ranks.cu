// mpi_ranks.cu — an MPI program, one GPU per rank (rank % device count, so
// ranks share a GPU where there are fewer GPUs than ranks). Each rank runs
// rounds of a kernel whose threads build a linked list of malloc'd nodes of
// varied sizes, drop every third node (free in the middle of the list), sum
// what is left, and free the rest; the sums are checked against the host's
// and folded into the rank's digest. Rank 0 gathers the digests (MPI_Gather)
// and prints one line `digest mpi_ranks <hex> ranks <N>`. Each rank says on
// stderr which device it ran on and how many nodes it allocated. Run with
// `mpirun -np 2`; CORPUS_SMALL=1 for reduced sizes.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#include "corpus.h"

struct node {
  struct node *next;
  uint32_t v;
  uint32_t words; /* payload words after the header */
  uint32_t w[1];
};

__host__ __device__ static inline int len_of(int tid, int round) { return 4 + (tid * 7 + round * 3) % 29; }
__host__ __device__ static inline uint32_t value_of(int rank, int round, int tid, int i) {
  return hash32((uint32_t)rank * 0x9e3779b9U ^
                hash32((uint32_t)round * 0x85ebca6bU ^ hash32((uint32_t)tid * 31U + (uint32_t)i)));
}
__host__ __device__ static inline uint32_t words_of(uint32_t v) { return 1 + v % 12; }
/* the sum over the list, head first (the reverse of insertion), every third
   inserted node dropped */
__host__ __device__ static inline uint64_t fold(uint64_t s, uint32_t v) {
  return s * 1000003ULL + v + words_of(v);
}

__global__ void lists(uint64_t *out, int n, int rank, int round, unsigned long long *allocs, int *bad) {
  int tid = blockIdx.x * blockDim.x + threadIdx.x;
  if (tid >= n) return;
  int len = len_of(tid, round);
  struct node *head = NULL;
  unsigned long long made = 0;
  for (int i = 0; i < len; i++) {
    uint32_t v = value_of(rank, round, tid, i);
    uint32_t words = words_of(v);
    struct node *p = (struct node *)malloc(sizeof(struct node) + (words - 1) * sizeof(uint32_t));
    if (!p) {
      atomicAdd(bad, 1);
      break;
    }
    made++;
    p->v = v;
    p->words = words;
    for (uint32_t k = 0; k < words; k++) p->w[k] = v + k;
    p->next = head;
    head = p;
  }
  /* drop every third inserted node (index i % 3 == 2): they sit in the middle */
  struct node **pp = &head;
  int i = (int)made - 1;
  while (*pp) {
    struct node *p = *pp;
    if (i % 3 == 2) {
      *pp = p->next;
      free(p);
    } else {
      pp = &p->next;
    }
    i--;
  }
  uint64_t s = 0;
  while (head) {
    struct node *p = head;
    for (uint32_t k = 0; k < p->words; k++)
      if (p->w[k] != p->v + k) atomicAdd(bad, 1);
    s = fold(s, p->v);
    head = p->next;
    free(p);
  }
  out[tid] = s;
  atomicAdd(allocs, made);
}

static uint64_t host_sum(int rank, int round, int tid) {
  uint64_t s = 0;
  for (int i = len_of(tid, round) - 1; i >= 0; i--)
    if (i % 3 != 2) s = fold(s, value_of(rank, round, tid, i));
  return s;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1, ndev = 0, dev = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CK(cudaGetDeviceCount(&ndev));
  dev = rank % ndev;
  CK(cudaSetDevice(dev));
  corpus_heap_init(128u << 20);
  CK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, 128u << 20));

  int n = corpus_small() ? 2048 : 16384, rounds = 4, rc = 0;
  uint64_t *out = NULL, *host = (uint64_t *)malloc(n * sizeof(uint64_t));
  unsigned long long *allocs = NULL;
  int *bad = NULL;
  CK(cudaMalloc(&out, n * sizeof(uint64_t)));
  CK(cudaMallocManaged(&allocs, sizeof *allocs));
  CK(cudaMallocManaged(&bad, sizeof *bad));
  *allocs = 0;
  *bad = 0;
  Digest d;
  for (int round = 0; round < rounds; round++) {
    lists<<<(n + 127) / 128, 128>>>(out, n, rank, round, allocs, bad);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(host, out, n * sizeof(uint64_t), cudaMemcpyDeviceToHost));
    int wrong = 0;
    for (int t = 0; t < n; t++)
      if (host[t] != host_sum(rank, round, t)) wrong++;
    if (wrong) {
      fprintf(stderr, "mpi_ranks: rank %d round %d: %d of %d sums differ from the host's\n", rank, round,
              wrong, n);
      rc = 1;
    }
    d.bytes(host, n * sizeof(uint64_t));
  }
  if (*bad) {
    fprintf(stderr, "mpi_ranks: rank %d: %d NULL from malloc or damaged nodes\n", rank, *bad);
    rc = 1;
  }
  fprintf(stderr, "mpi_ranks: rank %d of %d on device %d of %d: %llu nodes allocated\n", rank, size, dev,
          ndev, *allocs);

  uint64_t *all = (uint64_t *)malloc(size * sizeof(uint64_t));
  MPI_Gather(&d.h, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  int any = 0;
  MPI_Allreduce(&rc, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0 && !any) {
    Digest t;
    for (int r = 0; r < size; r++) t.add(all[r]);
    char extra[32];
    snprintf(extra, sizeof extra, "ranks %d", size);
    corpus_result("mpi_ranks", t, extra);
  }
  CK(cudaFree(out));
  CK(cudaFree(allocs));
  CK(cudaFree(bad));
  free(host);
  free(all);
  MPI_Finalize();
  return any;
}
