#include "cudalab/check.h"

#include <fmt/format.h>

#include "cudalab/lab.cuh"

namespace cudalab {

CudaError::CudaError(cudaError_t code, const char* call, const char* file, int line)
    : std::runtime_error(fmt::format("{}:{}: {} failed: {} ({})", file, line, call, cudaGetErrorString(code),
                                     cudaGetErrorName(code))),
      code_(code) {}

void throw_cuda_error(cudaError_t code, const char* call, const char* file, int line) {
  throw CudaError(code, call, file, line);
}

void not_implemented(const char* what, const char* file, int line) {
  throw NotImplemented(fmt::format("not implemented yet: {} ({}:{})", what, file, line));
}

}  // namespace cudalab
