// Lab 4: matrix transpose through shared memory (reference solution).
//
// out = the transpose of in: in is rows x cols, out is cols x rows, both
// row-major, device pointers: out[c * rows + r] = in[r * cols + c].
// A transpose with no shared memory can coalesce its reads (threadIdx.x along
// a row of in) or its writes (threadIdx.x along a row of out), never both: on
// the other side a warp's 32 floats lie in 32 different rows. Here each block
// copies a TILE x TILE tile of in into shared memory with coalesced reads,
// waits for all its threads, then writes the tile's transpose to out with
// coalesced writes, reading the tile down its columns.
// Shared memory is split into 32 banks of 4 bytes, and a warp is served at
// once only if its 32 threads hit 32 different banks (or the same word). In a
// float tile[32][32] a column lies in one bank, so reading a column takes 32
// turns: a 32-way bank conflict. One column of padding, tile[32][33], shifts
// each row by one bank, and a column then spreads over all 32 banks.
//
// Check it:  ./cudalab test 04_transpose    (handouts/04_transpose.md)
#include "cudalab/lab.cuh"

// ---------------------------------------------------------------------------
// Parameters

// A block transposes one TILE x TILE tile with TILE x BLOCK_ROWS threads:
// each thread moves TILE / BLOCK_ROWS elements, BLOCK_ROWS rows apart.
constexpr int TILE = 32;
constexpr int BLOCK_ROWS = 8;
static_assert(TILE % 32 == 0,
              "TILE must be a multiple of 32: a warp (32 consecutive threadIdx.x) then reads one "
              "contiguous piece of a row of in and writes one of a row of out");
static_assert(TILE % BLOCK_ROWS == 0,
              "each thread moves TILE / BLOCK_ROWS elements: BLOCK_ROWS must divide TILE");
static_assert(TILE * BLOCK_ROWS <= 1024, "a block of TILE x BLOCK_ROWS threads: CUDA allows at most 1024");
static_assert(TILE * (TILE + 1) * sizeof(float) <= 48 * 1024,
              "the padded tile must fit in the 48 KiB of static shared memory a block may use");

// ---------------------------------------------------------------------------
// Kernel

__global__ void transpose_kernel(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
  // The +1: row r of the tile starts r banks further on, so the column that
  // the second loop reads spreads over all 32 banks.
  __shared__ float tile[TILE][TILE + 1];

  // This block's tile covers rows blockIdx.y * TILE ... and columns
  // blockIdx.x * TILE ... of in. threadIdx.x runs along a row: coalesced reads.
  int col = blockIdx.x * TILE + threadIdx.x;
  int row = blockIdx.y * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += BLOCK_ROWS)
    if (row + j < rows && col < cols) tile[threadIdx.y + j][threadIdx.x] = in[(row + j) * cols + col];

  // Read after write: a thread reads below elements that other warps loaded.
  __syncthreads();

  // The same tile in out covers rows blockIdx.x * TILE ... (in's columns) and
  // columns blockIdx.y * TILE ... (in's rows). threadIdx.x runs along a row of
  // out again, coalesced writes, and so down a column of the tile.
  col = blockIdx.y * TILE + threadIdx.x;
  row = blockIdx.x * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += BLOCK_ROWS)
    if (row + j < cols && col < rows) out[(row + j) * cols + col] = tile[threadIdx.x][threadIdx.y + j];
}

// ---------------------------------------------------------------------------
// Launcher

void transpose(const float* in, float* out, int rows, int cols) {
  const dim3 block(TILE, BLOCK_ROWS);
  // Ceiling division: the last, partial tiles need blocks too.
  const dim3 grid(cudalab::ceil_div(cols, TILE), cudalab::ceil_div(rows, TILE));
  transpose_kernel<<<grid, block>>>(in, out, rows, cols);
}

// ---------------------------------------------------------------------------
// Foils: for comparison (not student work)
//
// The checks time them next to transpose() and show the figures in their
// notes. Each uses the same blocks and grid as transpose(), so the only
// difference is the one its comment names.

// No shared memory: the reads are coalesced, the writes are not (a warp
// writes 32 floats rows floats apart). 0.17 of transpose()'s speed at
// 8192 x 8192 on an H100 (2026-11-22).
__global__ void transpose_naive_kernel(const float* __restrict__ in, float* __restrict__ out, int rows,
                                       int cols) {
  const int col = blockIdx.x * TILE + threadIdx.x;
  const int row = blockIdx.y * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += BLOCK_ROWS)
    if (row + j < rows && col < cols) out[col * rows + row + j] = in[(row + j) * cols + col];
}

void transpose_naive(const float* in, float* out, int rows, int cols) {
  const dim3 block(TILE, BLOCK_ROWS);
  const dim3 grid(cudalab::ceil_div(cols, TILE), cudalab::ceil_div(rows, TILE));
  transpose_naive_kernel<<<grid, block>>>(in, out, rows, cols);
}

// transpose_kernel without the padding: tile[TILE][TILE]. Every column read
// of the second loop is a 32-way bank conflict. 0.58 of transpose()'s speed
// at 8192 x 8192 on an H100 (2026-11-22).
__global__ void transpose_unpadded_kernel(const float* __restrict__ in, float* __restrict__ out, int rows,
                                          int cols) {
  __shared__ float tile[TILE][TILE];
  int col = blockIdx.x * TILE + threadIdx.x;
  int row = blockIdx.y * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += BLOCK_ROWS)
    if (row + j < rows && col < cols) tile[threadIdx.y + j][threadIdx.x] = in[(row + j) * cols + col];
  __syncthreads();
  col = blockIdx.y * TILE + threadIdx.x;
  row = blockIdx.x * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += BLOCK_ROWS)
    if (row + j < cols && col < rows) out[(row + j) * rows + col] = tile[threadIdx.x][threadIdx.y + j];
}

void transpose_unpadded(const float* in, float* out, int rows, int cols) {
  const dim3 block(TILE, BLOCK_ROWS);
  const dim3 grid(cudalab::ceil_div(cols, TILE), cudalab::ceil_div(rows, TILE));
  transpose_unpadded_kernel<<<grid, block>>>(in, out, rows, cols);
}

// Not a transpose: out (rows x cols) = in, with the same blocks and the same
// coalesced reads. It moves the same bytes as a transpose, so its speed is
// the mark a transpose can hope to reach. On an H100 at 8192 x 8192 this copy
// measured 2781 GB/s and transpose() 2771 (2026-11-22; the seed benchmark's
// copy, without __restrict__, measured 2496): the mark is approximate.
__global__ void copy_kernel(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
  const int col = blockIdx.x * TILE + threadIdx.x;
  const int row = blockIdx.y * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += BLOCK_ROWS)
    if (row + j < rows && col < cols) out[(row + j) * cols + col] = in[(row + j) * cols + col];
}

void copy(const float* in, float* out, int rows, int cols) {
  const dim3 block(TILE, BLOCK_ROWS);
  const dim3 grid(cudalab::ceil_div(cols, TILE), cudalab::ceil_div(rows, TILE));
  copy_kernel<<<grid, block>>>(in, out, rows, cols);
}
