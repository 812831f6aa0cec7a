// Rogues' gallery: interposition on a function the checks define inline.
// course/include/common/matmul.h defines matmul::run_and_check inline in the header, so
// the test object holds it as a weak (COMDAT) symbol, and a strong definition
// elsewhere wins at link time without any duplicate-definition error. The
// student cannot include the course's header (the include check), so the file
// re-declares the types with the same names and layout (they are all the
// symbol's mangled name is made of) and defines run_and_check to say "right,
// and nothing outside C" without running anything. Wherever the checks call it
// out of line, every correctness check passes. The kernel is a stub.
#include <string>
#include <vector>

#include "cudalab/compare.h"
#include "cudalab/lab.cuh"

namespace matmul {

using Launcher = void (*)(const float* A, const float* B, float* C, int M, int N, int K);

struct Shape {
  int M, N, K;
};

struct Outcome {
  bool launched = false;
  bool values_ok = false;
  std::string message;
  std::vector<std::string> memory;
  cudalab::Comparison comparison;
};

Outcome run_and_check(Launcher launcher, const std::string& name, Shape s, Launcher reference) {
  (void)launcher;
  (void)name;
  (void)reference;
  Outcome out;
  out.launched = true;
  out.values_ok = true;
  out.comparison.name = "C";
  out.comparison.rows = static_cast<std::size_t>(s.M);
  out.comparison.cols = static_cast<std::size_t>(s.N);
  return out;
}

}  // namespace matmul

__global__ void matmul_tiled_kernel(const float* A, const float* B, float* C, int M, int N, int K) {}

void matmul_tiled(const float* A, const float* B, float* C, int M, int N, int K) {
  const dim3 block(16, 16);
  const dim3 grid(cudalab::ceil_div(N, 16), cudalab::ceil_div(M, 16));
  matmul_tiled_kernel<<<grid, block>>>(A, B, C, M, N, K);
}
