// Rogues' gallery: interposition on the CUDA runtime. The student file
// defines cudaEventElapsedTime itself, so every caller in the test binary (the
// harness's timing) gets the student's answer: 0.05 ms for any interval in
// which the student's launcher ran, 1 ms for the others. The kernel is the
// naive one.
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

bool launched_since_last_query = false;

}  // namespace

// Same declaration as cuda_runtime_api.h's (C linkage from there).
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  (void)start;
  if (const cudaError_t e = cudaEventSynchronize(end); e != cudaSuccess) return e;
  *ms = launched_since_last_query ? 0.05f : 1.0f;
  launched_since_last_query = false;
  return cudaSuccess;
}

void matmul_tiled(const float* A, const float* B, float* C, int M, int N, int K) {
  const dim3 block(BLOCK, BLOCK);
  const dim3 grid(cudalab::ceil_div(N, BLOCK), cudalab::ceil_div(M, BLOCK));
  matmul_naive_kernel<<<grid, block>>>(A, B, C, M, N, K);
  launched_since_last_query = true;
}
