// Rogues' gallery: interposition through a weak definition. The student file
// defines cudalab::require (declared in cudalab/testing.h), which every check
// calls to fail: the student's version fails nothing. Defined plainly, it is a
// duplicate definition at link time (the harness is linked whole), so the
// student marked it weak: the file links, and which definition a call reaches
// is then up to the linker (here the harness's strong one; a harness built as
// a shared library, or another link order, and the student's wins). A
// definition of a harness name is refused whatever its binding. The kernel is
// the naive one.
#include <string>

#include "cudalab/lab.cuh"
#include "cudalab/testing.h"

namespace {

constexpr int BLOCK = 16;

__global__ void matmul_naive_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                    float* __restrict__ C, int M, int N, int K) {
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
  C[row * N + col] = acc;
}

}  // namespace

namespace cudalab {

// "Every requirement is met."
__attribute__((weak)) void require(bool ok, const std::string& message) {
  (void)ok;
  (void)message;
}

}  // namespace cudalab

void matmul_tiled(const float* A, const float* B, float* C, int M, int N, int K) {
  const dim3 block(BLOCK, BLOCK);
  const dim3 grid(cudalab::ceil_div(N, BLOCK), cudalab::ceil_div(M, BLOCK));
  matmul_naive_kernel<<<grid, block>>>(A, B, C, M, N, K);
}
