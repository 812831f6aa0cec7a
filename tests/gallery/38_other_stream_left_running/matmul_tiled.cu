// Rogues' gallery: the naive kernel launched on a cudaStreamNonBlocking
// stream and left running: the launcher returns at once, before the kernel
// has done anything. Neither the legacy default stream nor events recorded on
// it wait for that stream; only a wait for the whole device (as the checks do
// before they read C) sees the work.
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

}  // namespace

void matmul_tiled(const float* A, const float* B, float* C, int M, int N, int K) {
  static cudaStream_t stream = [] {
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    return s;
  }();
  const dim3 block(BLOCK, BLOCK);
  const dim3 grid(cudalab::ceil_div(N, BLOCK), cudalab::ceil_div(M, BLOCK));
  matmul_naive_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
  // No synchronisation: whoever reads C waits for the device anyway.
}
