// Rogues' gallery 63: a file of the grading machine, #included by its absolute path.
//
// The compiler reads whatever an #include names, and when the lines are not C++ its errors quote
// them back: the build log in the report carries the file's contents (here the machine's
// /etc/os-release; a key or a token on the grader would go the same way). The grader must refuse
// an include outside the lab's own files before it compiles anything, and say nothing of what the
// file holds.
#include "/etc/os-release"

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
