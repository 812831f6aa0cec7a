// Lab 3: tiled matrix multiplication with shared memory (reference solution).
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
    // (The mistake, gallery 60: only threads inside C load, and only they
    // wait at the barrier; the threads outside C skip it.)
    if (row < M && col < N) {
      As[ty][tx] = (t + tx < K) ? A[row * K + t + tx] : 0.0f;
      Bs[ty][tx] = (t + ty < K) ? B[(t + ty) * N + col] : 0.0f;
      __syncthreads();
    }

#pragma unroll
    for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
    // Write after read: no thread may overwrite the tiles with the next ones
    // while a slower thread is still reading these.
    __syncthreads();
  }
  if (row < M && col < N) C[row * N + col] = acc;
}

// ---------------------------------------------------------------------------
// Launcher

void matmul_tiled(const float* A, const float* B, float* C, int M, int N, int K) {
  const dim3 block(TILE, TILE);
  // Ceiling division: the last, partial tiles of C need blocks too.
  const dim3 grid(cudalab::ceil_div(N, TILE), cudalab::ceil_div(M, TILE));
  matmul_tiled_kernel<<<grid, block>>>(A, B, C, M, N, K);
}
