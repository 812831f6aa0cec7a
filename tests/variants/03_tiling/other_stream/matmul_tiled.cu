// Framework test variant (issue 14): the naive kernel, launched on a stream
// created with cudaStreamNonBlocking and not waited for. Timing events on the
// legacy default stream see none of its work; the timing must still measure
// it (the host clock to the end of all work) and find it no faster than naive.
#include "cudalab/lab.cuh"

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

void matmul_tiled(const float* A, const float* B, float* C, int M, int N, int K) {
  static cudaStream_t stream = [] {
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    return s;
  }();
  const dim3 block(BLOCK, BLOCK);
  const dim3 grid(cudalab::ceil_div(N, BLOCK), cudalab::ceil_div(M, BLOCK));
  matmul_naive_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
}
