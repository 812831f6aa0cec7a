// Rogues' gallery 64: #include "/dev/zero", a file that never ends.
//
// The preprocessor reads an included file to its end, doubling its buffer as it goes: on
// /dev/zero it allocates and fills gigabytes (cc1plus died "out of memory allocating
// 8589934608 bytes" after 10 s under an 8 GB limit; without one the machine's memory goes),
// holding the grader's build of this submission, and every submission after it, for as long as
// the memory lasts. The grader must refuse the include at once, before it compiles anything.
#include "/dev/zero"

#include "cudalab/lab.cuh"

// ---------------------------------------------------------------------------
// Parameters

constexpr int BLOCK = 16;

// ---------------------------------------------------------------------------
// Kernel: the naive one

__global__ void matmul_naive_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                    float* __restrict__ C, int M, int N, int K) {
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
  C[row * N + col] = acc;
}

// ---------------------------------------------------------------------------
// Launcher

void matmul_tiled(const float* A, const float* B, float* C, int M, int N, int K) {
  const dim3 block(BLOCK, BLOCK);
  const dim3 grid(cudalab::ceil_div(N, BLOCK), cudalab::ceil_div(M, BLOCK));
  matmul_naive_kernel<<<grid, block>>>(A, B, C, M, N, K);
}
