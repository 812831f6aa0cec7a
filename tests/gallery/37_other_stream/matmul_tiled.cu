// Rogues' gallery: the naive kernel launched on a stream created with
// cudaStreamNonBlocking. Such a stream does not synchronise with the legacy
// default stream, so CUDA events recorded there around the launcher see none
// of its work: timed by events alone, this "tiled" kernel took no time at all
// and passed both speed checks (100 / 100 on the landed main, issue 14).
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

cudaStream_t side_stream() {
  static cudaStream_t stream = [] {
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    return s;
  }();
  return stream;
}

}  // namespace

void matmul_tiled(const float* A, const float* B, float* C, int M, int N, int K) {
  const dim3 block(BLOCK, BLOCK);
  const dim3 grid(cudalab::ceil_div(N, BLOCK), cudalab::ceil_div(M, BLOCK));
  matmul_naive_kernel<<<grid, block, 0, side_stream()>>>(A, B, C, M, N, K);
  // Done before returning, as a careful student would: the output is right.
  CUDA_CHECK(cudaStreamSynchronize(side_stream()));
}
