// cuda.h (cudalab CPU mode): the driver API is not simulated; only the
// version macro that code tests for is given.
#pragma once
#define CUDA_VERSION 13000
#include "cuda_runtime_api.h"
