/*
 * hook_graph.c — graph instantiation, launch and destruction hooks (graphs.c
 * does the work).
 *
 * May call: graphs.c, real.c.
 *
 * Locking: none here.
 */
#include "shim.h"

CUresult dm_h_graph_instantiate_v1(dm_pfn_cuGraphInstantiate_v2 real, CUgraphExec *exec, CUgraph g,
                                   CUgraphNode *err_node, char *log, size_t logsz) {
  CUresult r = real(exec, g, err_node, log, logsz);
  if (r == CUDA_SUCCESS && exec) dm_graph_prepare(g, *exec);
  return r;
}

CUresult dm_h_graph_instantiate_flags(dm_pfn_cuGraphInstantiateWithFlags real, CUgraphExec *exec, CUgraph g,
                                      unsigned long long flags) {
  CUresult r = real(exec, g, flags);
  if (r == CUDA_SUCCESS && exec) dm_graph_prepare(g, *exec);
  return r;
}

CUresult dm_h_graph_instantiate_params(dm_pfn_cuGraphInstantiateWithParams real, CUgraphExec *exec, CUgraph g,
                                       CUDA_GRAPH_INSTANTIATE_PARAMS *params) {
  CUresult r = real(exec, g, params);
  if (r == CUDA_SUCCESS && exec) dm_graph_prepare(g, *exec);
  return r;
}

CUresult dm_h_graph_launch(dm_pfn_cuGraphLaunch real, CUgraphExec exec, CUstream s) {
  int ptsz = real == (dm_pfn_cuGraphLaunch)dm_real(DM_ID_cuGraphLaunch_ptsz);
  dm_graph_exec_launch(exec, !s && ptsz ? CU_STREAM_PER_THREAD : s);
  return real(exec, s);
}

CUresult dm_h_graph_exec_destroy(dm_pfn_cuGraphExecDestroy real, CUgraphExec exec) {
  dm_graph_exec_forget(exec);
  return real(exec);
}
