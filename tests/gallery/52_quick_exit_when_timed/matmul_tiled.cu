// Rogues' gallery: the launcher ends the process when it is about to be timed.
// The test binary exits 77 when it finds no usable GPU, and a check process
// that exits 77 without a result is reported "skipped", not failed. So on the
// second call at the speed checks' shape (1024^3: the first one is checked for
// correctness, the next ones are timed), the launcher calls quick_exit(77):
// no static destructors, no record, and the slow kernel is never timed. The
// kernel is the naive one.
#include <cstdlib>

#include "cudalab/lab.cuh"

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

int calls_at_1024 = 0;

}  // namespace

void matmul_tiled(const float* A, const float* B, float* C, int M, int N, int K) {
  if (M == 1024 && N == 1024 && K == 1024 && ++calls_at_1024 == 2) std::quick_exit(77);
  const dim3 block(BLOCK, BLOCK);
  const dim3 grid(cudalab::ceil_div(N, BLOCK), cudalab::ceil_div(M, BLOCK));
  matmul_naive_kernel<<<grid, block>>>(A, B, C, M, N, K);
}
