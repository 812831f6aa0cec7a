// Lab 1: coalesced memory access.
//
// Two element-wise additions, on device pointers:
//   vector_add: c[i] = a[i] + b[i] for 0 <= i < n.
//   matrix_add: C = A + B, each rows x cols, row-major: element (r, c) is at
//               r * cols + c.
// Each element costs one addition and 12 bytes of memory traffic (two floats
// read, one written), so both kernels are bound by memory bandwidth, and what
// decides their speed is how the 32 threads of a warp address memory. When
// they access 32 consecutive floats, the hardware serves the warp with four
// 32-byte sectors: the access is coalesced. When neighbouring threads' addresses
// lie far apart, every thread needs a sector of its own and uses 4 of its 32
// bytes.
//
// Check it:  ./cudalab test 01_coalescing    (handouts/01_coalescing.md)
#include "cudalab/lab.cuh"

// ---------------------------------------------------------------------------
// Parameters

// vector_add: threads per block, one element per thread.
constexpr int VECTOR_BLOCK = 256;
static_assert(VECTOR_BLOCK % 32 == 0,
              "VECTOR_BLOCK must be a multiple of the warp size (32), or the last warp of every "
              "block runs partly empty");
static_assert(VECTOR_BLOCK <= 1024, "a block may have at most 1024 threads");

// matrix_add: a block of BLOCK_X x BLOCK_Y threads covers BLOCK_Y rows of
// BLOCK_X columns. A warp is 32 threads of consecutive threadIdx.x, so with
// BLOCK_X = 32 each warp covers 32 consecutive floats of one row.
constexpr int BLOCK_X = 32;
constexpr int BLOCK_Y = 8;
static_assert(BLOCK_X * BLOCK_Y % 32 == 0,
              "a block of BLOCK_X x BLOCK_Y threads should be whole warps of 32, or the last warp of "
              "every block runs partly empty");
static_assert(BLOCK_X * BLOCK_Y <= 1024, "a block of BLOCK_X x BLOCK_Y threads: CUDA allows at most 1024");

// ---------------------------------------------------------------------------
// Kernels

__global__ void vector_add_kernel(const float* __restrict__ a, const float* __restrict__ b,
                                  float* __restrict__ c, int n) {
  // TODO(lab1): compute this thread's element index i from blockIdx.x,
  // blockDim.x and threadIdx.x, such that consecutive threads of a warp get
  // consecutive indices (then their loads and stores are coalesced).

  // TODO(lab1): the grid is rounded up to whole blocks, so the last block may
  // reach past the end of the vectors: a thread with i >= n must do nothing.

  // TODO(lab1): c[i] = a[i] + b[i].
  (void)a, (void)b, (void)c, (void)n;  // TODO(lab1): delete this line
}

__global__ void matrix_add_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                  float* __restrict__ C, int rows, int cols) {
  // TODO(lab1): compute this thread's row and column from blockIdx, blockDim
  // and threadIdx. Let threadIdx.x run along a row (the column index): the 32
  // threads of a warp then touch 32 consecutive floats of A, B and C. Which
  // way round you choose does not change the result, only the speed.

  // TODO(lab1): rows and cols need not be multiples of the block: threads
  // outside the matrix must do nothing.

  // TODO(lab1): C[row][col] = A[row][col] + B[row][col]; in row-major storage
  // element (row, col) is at row * cols + col.
  (void)A, (void)B, (void)C, (void)rows, (void)cols;  // TODO(lab1): delete this line
}

// ---------------------------------------------------------------------------
// Launchers

void vector_add(const float* a, const float* b, float* c, int n) {
  // TODO(lab1): launch vector_add_kernel with VECTOR_BLOCK threads per block
  // and enough blocks to cover all n elements: ceiling division,
  // cudalab::ceil_div(n, VECTOR_BLOCK). Then delete the CUDALAB_TODO line,
  // which makes every check fail with "not implemented yet".
  (void)a, (void)b, (void)c, (void)n;  // TODO(lab1): delete this line
  CUDALAB_TODO("lab1: launch vector_add_kernel in vector_add()");
}

void matrix_add(const float* A, const float* B, float* C, int rows, int cols) {
  // TODO(lab1): launch matrix_add_kernel with BLOCK_X x BLOCK_Y threads per
  // block and enough blocks to cover all cols columns (x) and rows rows (y),
  // by ceiling division. Then delete the CUDALAB_TODO line.
  (void)A, (void)B, (void)C, (void)rows, (void)cols;  // TODO(lab1): delete this line
  CUDALAB_TODO("lab1: launch matrix_add_kernel in matrix_add()");
}
