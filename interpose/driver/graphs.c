/*
 * graphs.c — CUDA graphs. Kernels captured from a stream went through the
 * launch hooks at capture time and are bound already; graphs built node by
 * node (cuGraphAddKernelNode) are not, so at instantiation the graph's kernel
 * nodes (child graphs included) are walked and each kernel's owner is bound
 * in the node's context — outside any capture, synchronously. The distinct
 * kernels of each executable graph are remembered, and cuGraphLaunch checks
 * them (one cache lookup each) in the launch stream's context, which binds
 * them there if the graph is launched in another context.
 *
 * Limits: conditional-node bodies and kernels changed later through
 * cuGraphExec*SetParams/cuGraphExecUpdate are not walked (docs/shim.md).
 *
 * May call: bind.c, driver.c, state.c. Called by: hook_graph.c.
 *
 * Locking: one mutex guards the exec table; binding runs outside it.
 */
#include "shim.h"

#include <pthread.h>
#include <stdlib.h>

typedef struct dm_gexec {
  CUgraphExec exec;
  const void **fns;
  size_t n;
  struct dm_gexec *next;
} dm_gexec_t;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static dm_gexec_t *g_execs;

void dm_graphs_fork(dm_fork_phase_t ph) { dm_mutex_fork(&g_lock, ph); }

typedef struct {
  const void **v;
  size_t n, cap;
} dm_vec_t;

static void vec_add(dm_vec_t *v, const void *f) {
  for (size_t i = 0; i < v->n; i++)
    if (v->v[i] == f) return;
  if (v->n == v->cap) {
    size_t cap = v->cap ? 2 * v->cap : 8;
    const void **n = realloc(v->v, cap * sizeof *n);
    if (!n) return;
    v->v = n;
    v->cap = cap;
  }
  v->v[v->n++] = f;
}

static void walk(CUgraph g, CUcontext cur, dm_vec_t *out, int depth) {
  size_t n = 0;
  if (depth > 16 || dm_drv.cuGraphGetNodes(g, NULL, &n) != CUDA_SUCCESS || !n) return;
  CUgraphNode *nodes = calloc(n, sizeof *nodes);
  if (!nodes) return;
  if (dm_drv.cuGraphGetNodes(g, nodes, &n) == CUDA_SUCCESS) {
    for (size_t i = 0; i < n; i++) {
      CUgraphNodeType t;
      if (dm_drv.cuGraphNodeGetType(nodes[i], &t) != CUDA_SUCCESS) continue;
      if (t == CU_GRAPH_NODE_TYPE_KERNEL) {
        CUDA_KERNEL_NODE_PARAMS_v2 p = {0};
        if (dm_drv.cuGraphKernelNodeGetParams_v2(nodes[i], &p) != CUDA_SUCCESS) continue;
        const void *f = p.func ? (const void *)p.func : (const void *)p.kern;
        CUcontext ctx = p.func ? cur : (p.ctx ? p.ctx : cur);
        if (!f) continue;
        vec_add(out, f);
        dm_prepare_in_ctx(f, ctx);
      } else if (t == CU_GRAPH_NODE_TYPE_GRAPH) {
        CUgraph child;
        if (dm_drv.cuGraphChildGraphNodeGetGraph(nodes[i], &child) == CUDA_SUCCESS)
          walk(child, cur, out, depth + 1);
      }
    }
  }
  free(nodes);
}

void dm_graph_prepare(CUgraph g, CUgraphExec exec) {
  if (!dm_candidates() || !g || !exec) return;
  CUcontext cur = NULL;
  dm_drv.cuCtxGetCurrent(&cur);
  dm_vec_t fns = {0};
  walk(g, cur, &fns, 0);
  if (!fns.n) {
    free(fns.v);
    return;
  }
  dm_gexec_t *e = malloc(sizeof *e);
  if (!e) {
    free(fns.v);
    return;
  }
  *e = (dm_gexec_t){exec, fns.v, fns.n, NULL};
  pthread_mutex_lock(&g_lock);
  e->next = g_execs;
  g_execs = e;
  pthread_mutex_unlock(&g_lock);
}

void dm_graph_exec_launch(CUgraphExec exec, CUstream s) {
  if (!dm_candidates()) return;
  const void *fns[64];
  size_t n = 0;
  pthread_mutex_lock(&g_lock);
  for (dm_gexec_t *e = g_execs; e; e = e->next)
    if (e->exec == exec) {
      n = e->n < 64 ? e->n : 64;
      for (size_t i = 0; i < n; i++) fns[i] = e->fns[i];
      break;
    }
  pthread_mutex_unlock(&g_lock);
  if (!n) return;
  CUcontext ctx = dm_stream_ctx(s);
  for (size_t i = 0; i < n; i++) dm_prepare_in_ctx(fns[i], ctx);
}

void dm_graph_exec_forget(CUgraphExec exec) {
  pthread_mutex_lock(&g_lock);
  for (dm_gexec_t **p = &g_execs; *p; p = &(*p)->next)
    if ((*p)->exec == exec) {
      dm_gexec_t *e = *p;
      *p = e->next;
      free(e->fns);
      free(e);
      break;
    }
  pthread_mutex_unlock(&g_lock);
}
