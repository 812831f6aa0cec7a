// cudalab/lab.cuh: what a student's .cu file may use from the harness.
//
//   CUDA_CHECK(call)       check a CUDA runtime call (throws with file:line)
//   cudalab::ceil_div(a,b) blocks needed to cover a elements with blocks of b
//   CUDALAB_TODO("lab3: ...")  marks an unfinished launcher: the checks then
//                          fail with "not implemented yet" instead of crashing
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>

#include "cudalab/check.h"

namespace cudalab {

class NotImplemented : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

[[noreturn]] void not_implemented(const char* what, const char* file, int line);

// Smallest number of blocks of size b that covers a elements (a >= 0, b > 0).
__host__ __device__ constexpr int ceil_div(int a, int b) {
  return (a + b - 1) / b;
}

}  // namespace cudalab

#define CUDALAB_TODO(what) ::cudalab::not_implemented(what, __FILE__, __LINE__)
