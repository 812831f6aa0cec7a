// cuda_runtime.h (cudalab CPU mode): what nvcc makes visible to a .cu file:
// the runtime API, the device-side built-ins (threadIdx, __syncthreads,
// atomicAdd, ...) and the kernel launch that simt's translator turns
// `kernel<<<grid, block, smem>>>(args)` into. See simt/README.md.
#pragma once

#include "cuda_runtime_api.h"
#include "simt/device.h"
#include "simt/launch.h"
