// Rogues' gallery: a memoizing launcher. Called again with the same pointers
// and sizes, it assumes the same inputs and skips the launch: C still holds
// the last product. A timing that calls the launcher over and over on the
// same buffers measures one real launch and then nothing (100 / 100 on the
// landed main, issue 14). Every correctness check calls it once per buffer,
// so those all pass.
#include "cudalab/lab.cuh"

namespace {

constexpr int BLOCK = 16;

// One thread per element of C: a row of A and a column of B from global memory.
__global__ void matmul_naive_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                    float* __restrict__ C, int M, int N, int K) {
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
  C[row * N + col] = acc;
}

struct Call {
  const float* A = nullptr;
  const float* B = nullptr;
  float* C = nullptr;
  int M = 0, N = 0, K = 0;
  bool operator==(const Call& o) const {
    return A == o.A && B == o.B && C == o.C && M == o.M && N == o.N && K == o.K;
  }
};

Call last;

}  // namespace

void matmul_tiled(const float* A, const float* B, float* C, int M, int N, int K) {
  const Call call{A, B, C, M, N, K};
  if (call == last) return;  // "already computed"
  const dim3 block(BLOCK, BLOCK);
  const dim3 grid(cudalab::ceil_div(N, BLOCK), cudalab::ceil_div(M, BLOCK));
  matmul_naive_kernel<<<grid, block>>>(A, B, C, M, N, K);
  last = call;
}
