// Lab 4: matrix transpose through shared memory.
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
  // TODO(lab4): declare the tile: TILE x TILE floats in __shared__ memory.
  // Before you choose its width, read the header comment and the handout's
  // section on banks: the second phase reads the tile down its columns.

  // TODO(lab4): copy this block's tile of in into the tile. It covers rows
  // blockIdx.y * TILE ... and columns blockIdx.x * TILE ... of in. Let
  // threadIdx.x run along a row of in (coalesced reads); the block has only
  // BLOCK_ROWS rows of threads, so each thread loops over TILE / BLOCK_ROWS
  // rows of the tile, BLOCK_ROWS apart. rows and cols need not be multiples
  // of TILE: skip the elements outside in.

  // TODO(lab4): wait until every thread of the block has written its part of
  // the tile: the next phase reads elements that other warps loaded.

  // TODO(lab4): write the tile's transpose to out. In out the same tile
  // covers rows blockIdx.x * TILE ... and columns blockIdx.y * TILE ... (out
  // is cols x rows). Let threadIdx.x run along a row of out again (coalesced
  // writes), which means reading the tile down a column: the element of out
  // in row blockIdx.x * TILE + threadIdx.y + j and column
  // blockIdx.y * TILE + threadIdx.x is tile[threadIdx.x][threadIdx.y + j].
  // Skip the elements outside out.
  (void)in, (void)out, (void)rows, (void)cols;  // TODO(lab4): delete this line
}

// ---------------------------------------------------------------------------
// Launcher

void transpose(const float* in, float* out, int rows, int cols) {
  // TODO(lab4): launch transpose_kernel with TILE x BLOCK_ROWS threads per
  // block and one block per tile of in: cudalab::ceil_div(cols, TILE) blocks
  // along x, cudalab::ceil_div(rows, TILE) along y. Then delete the
  // CUDALAB_TODO line, which makes every check fail with "not implemented yet".
  (void)in, (void)out, (void)rows, (void)cols;  // TODO(lab4): delete this line
  CUDALAB_TODO("lab4: launch transpose_kernel in transpose()");
}
