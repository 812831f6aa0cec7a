// Lab 3: tiled matrix multiplication with shared memory.
//
// C (M x N) = A (M x K) . B (K x N), all row-major, device pointers.
// Each block computes one TILE x TILE tile of C. It walks along K one tile at a
// time: the block's threads copy a tile of A and a tile of B into shared
// memory, wait for each other, then every thread accumulates TILE products
// from shared memory. Each element read from global memory is used TILE
// times, which raises the compute to global memory access ratio from 0.25 to
// TILE / 4 FLOP per byte.
//
// Check it:  ./cudalab test 03_tiling        (handouts/03_tiling.md)
#include "cudalab/lab.cuh"

// ---------------------------------------------------------------------------
// Parameters

constexpr int TILE = 16;
static_assert(TILE * TILE <= 1024, "a block of TILE x TILE threads: CUDA allows at most 1024");
static_assert(2 * TILE * TILE * sizeof(float) <= 48 * 1024,
              "the A and B tiles must fit in the 48 KiB of static shared memory a block may use");

// ---------------------------------------------------------------------------
// Kernel

__global__ void matmul_tiled_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                    float* __restrict__ C, int M, int N, int K) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE];

  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * TILE + ty;  // of C and A
  const int col = blockIdx.x * TILE + tx;  // of C and B

  float acc = 0.0f;
  for (int t = 0; t < K; t += TILE) {
    // TODO(lab3): load one element of the A tile into As[ty][tx] and one of the
    // B tile into Bs[ty][tx]. This tile of A covers rows blockIdx.y * TILE ...
    // blockIdx.y * TILE + TILE - 1 and columns t ... t + TILE - 1; the tile of
    // B covers rows t ... t + TILE - 1 and columns blockIdx.x * TILE ...
    // blockIdx.x * TILE + TILE - 1. M, N and K need not be multiples of TILE:
    // an element outside A or B must be loaded as 0. Every thread loads, even
    // one whose (row, col) lies outside C.

    // TODO(lab3): wait until every thread of the block has loaded its element.

    // TODO(lab3): add the TILE products As[ty][k] * Bs[k][tx] to acc.

    // TODO(lab3): wait again, so that no thread loads the next tile while
    // another is still reading this one.
    (void)As, (void)Bs, (void)tx, (void)ty;  // TODO(lab3): delete this line
  }
  // TODO(lab3): store acc into C, but only if (row, col) lies inside C.
  (void)row, (void)col, (void)acc;  // TODO(lab3): delete this line
}

// ---------------------------------------------------------------------------
// Launcher

void matmul_tiled(const float* A, const float* B, float* C, int M, int N, int K) {
  // TODO(lab3): launch matmul_tiled_kernel with TILE x TILE threads per block
  // and enough blocks to cover all of C (M rows, N columns): compute the grid
  // by ceiling division, cudalab::ceil_div(N, TILE) blocks along x. Then
  // delete the CUDALAB_TODO line, which makes every check fail with
  // "not implemented yet".
  (void)A, (void)B, (void)C, (void)M, (void)N, (void)K;  // TODO(lab3): delete this line
  CUDALAB_TODO("lab3: launch matmul_tiled_kernel in matmul_tiled()");
}
