// Lab 2: naive matrix multiplication.
//
// C (M x N) = A (M x K) . B (K x N), all row-major, device pointers.
// One thread computes one element of C, reading a row of A and a column of B
// straight from global memory: 2 FLOP for every 8 bytes loaded, a compute to
// global memory access ratio of 0.25 FLOP/B, so the kernel is memory bound.
// threadIdx.x walks along a row of C, so the 32 threads of a warp read
// consecutive elements of B (coalesced) and the same element of A (broadcast).
//
// Check it:  ./cudalab test 02_naive_matmul   (handouts/02_naive_matmul.md)
#include "cudalab/lab.cuh"

// ---------------------------------------------------------------------------
// Parameters

constexpr int BLOCK = 16;
static_assert(BLOCK * BLOCK <= 1024, "a block of BLOCK x BLOCK threads: CUDA allows at most 1024");

// ---------------------------------------------------------------------------
// Kernel

__global__ void matmul_naive_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                    float* __restrict__ C, int M, int N, int K) {
  // TODO(lab2): compute this thread's row and column of C from blockIdx,
  // blockDim and threadIdx. Let threadIdx.x run along a row (the column
  // index), so that neighbouring threads of a warp read neighbouring elements
  // of B and write neighbouring elements of C.

  // TODO(lab2): the grid is rounded up to whole blocks, so some threads fall
  // outside C: they must not read or write anything.

  // TODO(lab2): C[row][col] = sum over k of A[row][k] * B[k][col]; in
  // row-major storage A[row][k] is A[row * K + k].
  (void)A, (void)B, (void)C, (void)M, (void)N, (void)K;  // TODO(lab2): delete this line
}

// ---------------------------------------------------------------------------
// Launcher

void matmul_naive(const float* A, const float* B, float* C, int M, int N, int K) {
  // TODO(lab2): launch matmul_naive_kernel with BLOCK x BLOCK threads per block
  // and enough blocks to cover all N columns (x) and M rows (y): ceiling
  // division, cudalab::ceil_div(N, BLOCK). Then delete the CUDALAB_TODO line,
  // which makes every check fail with "not implemented yet".
  (void)A, (void)B, (void)C, (void)M, (void)N, (void)K;  // TODO(lab2): delete this line
  CUDALAB_TODO("lab2: launch matmul_naive_kernel in matmul_naive()");
}
