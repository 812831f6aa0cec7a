// Rogues' gallery: the harness's own record API, called from a static
// constructor. glibc passes argc and argv to constructors; the check's name is
// the last argument. Before the harness's main runs, the constructor records
// that check as passed with a speed ratio of 2.0 (cudalab/record.h declares
// begin_check, measure and end_check); main then writes the record with that
// result first, and the check's real result comes second. (100 / 100 on the
// landed main, issue 14.) The kernel is the naive one.
#include "cudalab/lab.cuh"
#include "cudalab/record.h"

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

__attribute__((constructor)) void pass_in_advance(int argc, char** argv, char** envp) {
  (void)envp;
  if (argc < 2) return;
  cudalab::begin_check(argv[argc - 1]);
  cudalab::measure("ratio", 2.0, "x");
  cudalab::end_check(true, 0.1);
}

}  // namespace

void matmul_tiled(const float* A, const float* B, float* C, int M, int N, int K) {
  const dim3 block(BLOCK, BLOCK);
  const dim3 grid(cudalab::ceil_div(N, BLOCK), cudalab::ceil_div(M, BLOCK));
  matmul_naive_kernel<<<grid, block>>>(A, B, C, M, N, K);
}
