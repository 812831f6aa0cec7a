// Rogues' gallery: lab 3 as the course's own solution, #included inside a
// namespace by a relative path. In the grading build "../../solutions/..." resolves
// through -I <source>/harness/include to <source>/solutions/.
#include "cudalab/lab.cuh"

namespace borrowed {
#include "../../solutions/03_tiling/matmul_tiled.cu"
}  // namespace borrowed

void matmul_tiled(const float* A, const float* B, float* C, int M, int N, int K) {
  borrowed::matmul_tiled(A, B, C, M, N, K);
}
