// graph_weight.cu — a device function of libcr_graph's other unit.
#include <cstdint>
__device__ uint32_t cr_edge_weight(uint32_t a, uint32_t b) { return (a * 2654435761u ^ b) % 1000u; }
