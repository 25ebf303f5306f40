// shim_driver_kernels.cu — kernels for the Driver API route, device-linked
// with devmalloc into a cubin (mk/interpose_driver.mk) and loaded by shim_driver.
#include "shim_kernel.cuh"
