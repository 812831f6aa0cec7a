// Framework test variant (issue 14): the naive kernel with a cache keyed on
// sampled input values. It launches nothing when the first and last elements
// of A and B and the pointers and sizes are those of the previous call. The
// timing's fresh inputs never repeat, so the cache never hits there: the
// kernel is timed doing its work, no faster than naive.
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
  static float last[4] = {0, 0, 0, 0};
  static const float* last_c = nullptr;
  static int last_m = -1, last_n = -1, last_k = -1;
  float now[4];
  CUDA_CHECK(cudaMemcpy(&now[0], A, sizeof(float), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(&now[1], A + static_cast<size_t>(M) * K - 1, sizeof(float), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(&now[2], B, sizeof(float), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(&now[3], B + static_cast<size_t>(K) * N - 1, sizeof(float), cudaMemcpyDeviceToHost));
  bool same = C == last_c && M == last_m && N == last_n && K == last_k;
  for (int i = 0; i < 4; ++i) same = same && now[i] == last[i];
  if (same) return;
  for (int i = 0; i < 4; ++i) last[i] = now[i];
  last_c = C, last_m = M, last_n = N, last_k = K;
  const dim3 block(BLOCK, BLOCK);
  const dim3 grid(cudalab::ceil_div(N, BLOCK), cudalab::ceil_div(M, BLOCK));
  matmul_naive_kernel<<<grid, block>>>(A, B, C, M, N, K);
}
