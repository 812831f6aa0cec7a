// Framework test variant (issue 14): the tiled solution with a cache. A call
// with the same pointers and sizes as the previous one launches nothing:
// every correctness check (new buffers each time) passes, and without fresh,
// verified inputs every timed call after the first would cost nothing.
#include "cudalab/lab.cuh"

constexpr int TILE = 16;

__global__ void matmul_tiled_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                    float* __restrict__ C, int M, int N, int K) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * TILE + ty;
  const int col = blockIdx.x * TILE + tx;
  float acc = 0.0f;
  for (int t = 0; t < K; t += TILE) {
    As[ty][tx] = (row < M && t + tx < K) ? A[row * K + t + tx] : 0.0f;
    Bs[ty][tx] = (t + ty < K && col < N) ? B[(t + ty) * N + col] : 0.0f;
    __syncthreads();
    for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  if (row < M && col < N) C[row * N + col] = acc;
}

void matmul_tiled(const float* A, const float* B, float* C, int M, int N, int K) {
  static const float *last_a = nullptr, *last_b = nullptr;
  static float* last_c = nullptr;
  static int last_m = -1, last_n = -1, last_k = -1;
  if (A == last_a && B == last_b && C == last_c && M == last_m && N == last_n && K == last_k) return;
  last_a = A, last_b = B, last_c = C, last_m = M, last_n = N, last_k = K;
  const dim3 block(TILE, TILE);
  const dim3 grid(cudalab::ceil_div(N, TILE), cudalab::ceil_div(M, TILE));
  matmul_tiled_kernel<<<grid, block>>>(A, B, C, M, N, K);
}
