// modules_kern.cu — kernels compiled to a PTX file (nvcc -ptx) and loaded
// by modules.cu with the driver API.
struct Link {
  int value;
  Link *next;
};

extern "C" __global__ void fill_sum(int n, unsigned long long *out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  int len = 8 + t % 50;
  int *buf = (int *)malloc(len * sizeof(int));
  if (!buf) {
    out[t] = ~0ull;
    return;
  }
  for (int i = 0; i < len; i++) buf[i] = t ^ (i * 2654435761u);
  unsigned long long s = 0;
  for (int i = 0; i < len; i++) s += (unsigned)buf[i] % 1000003u;
  free(buf);
  out[t] = s;
}

extern "C" __global__ void list_sum(int n, unsigned long long *out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  Link *head = nullptr;
  for (int i = 0; i < 1 + t % 9; i++) {
    Link *l = (Link *)malloc(sizeof(Link));
    if (!l) {
      out[t] = ~0ull;
      return;
    }
    l->value = t * 10 + i;
    l->next = head;
    head = l;
  }
  unsigned long long s = 0;
  for (int pos = 1; head; pos++) {
    Link *next = head->next;
    s += (unsigned long long)head->value * pos;
    free(head);
    head = next;
  }
  out[t] = s;
}
