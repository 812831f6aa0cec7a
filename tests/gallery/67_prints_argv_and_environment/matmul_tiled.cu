// Rogues' gallery 67: the grading seed, read back from the check's own command line.
//
// A static constructor that takes (argc, argv, envp), as glibc passes them, prints every
// environment variable and every argument of the check process (the grader's --seed among them),
// and the launcher then traps, so that every check crashes and its output reaches the report.
// With the course's grading seed in hand, a student computes the expected outputs offline and
// hands in a launcher that only copies them out.
#include "cudalab/lab.cuh"

#include <cstdio>

namespace {

__attribute__((constructor)) void show_what_the_grader_passes(int argc, char** argv, char** envp) {
  for (char** e = envp; e && *e; ++e) std::printf("gallery 67: env %s\n", *e);
  // The arguments last: a crash's output is kept from its end.
  for (int i = 0; i < argc; ++i) std::printf("gallery 67: argv[%d] %s\n", i, argv[i]);
  std::fflush(stdout);
}

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

}  // namespace

void matmul_tiled(const float* A, const float* B, float* C, int M, int N, int K) {
  __builtin_trap();  // every check crashes (SIGILL): its output goes into the report
  const dim3 block(BLOCK, BLOCK);
  const dim3 grid(cudalab::ceil_div(N, BLOCK), cudalab::ceil_div(M, BLOCK));
  matmul_naive_kernel<<<grid, block>>>(A, B, C, M, N, K);
}
