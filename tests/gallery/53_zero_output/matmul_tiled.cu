// Rogues' gallery: the launcher writes zeros into C and nothing else (the
// honest twin of 54_stack_scribbler, which writes the same zeros and then
// makes the harness expect them).
//
// C (M x N) = A (M x K) . B (K x N) is the task; this student gave up on the
// kernel and hands in a launcher that at least writes every element of C and
// nothing outside it.
#include <cstddef>

#include "cudalab/lab.cuh"

void matmul_tiled(const float* A, const float* B, float* C, int M, int N, int K) {
  (void)A;
  (void)B;
  (void)K;
  CUDA_CHECK(cudaMemset(C, 0, static_cast<std::size_t>(M) * N * sizeof(float)));
}
