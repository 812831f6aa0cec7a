// cudalab/check.h: the one CUDA error-check macro, for the harness, the
// references and student launchers alike.
//
//   CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
//
// On failure it throws cudalab::CudaError naming the call, the file and the
// line; the harness catches it and turns it into a message for the student.
#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>

namespace cudalab {

class CudaError : public std::runtime_error {
 public:
  CudaError(cudaError_t code, const char* call, const char* file, int line);
  cudaError_t code() const noexcept { return code_; }

 private:
  cudaError_t code_;
};

[[noreturn]] void throw_cuda_error(cudaError_t code, const char* call, const char* file, int line);

}  // namespace cudalab

#define CUDA_CHECK(call)                                                       \
  do {                                                                         \
    const cudaError_t cudalab_status_ = (call);                                \
    if (cudalab_status_ != cudaSuccess)                                        \
      ::cudalab::throw_cuda_error(cudalab_status_, #call, __FILE__, __LINE__); \
  } while (false)
