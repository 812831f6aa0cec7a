// Kernels whose memory accesses the access report counts (this file is
// compiled with simt_access_args). The expected figures are the ones Nsight
// Compute gives on a GPU.
#include "access_kernels.h"

constexpr int TILE = 32;
constexpr int ROWS = 8;

// Thread i reads element i: a warp reads 128 consecutive bytes, 4 sectors.
__global__ void copy_coalesced(const float* in, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i];
}

// Rows and columns swapped: threadIdx.x walks down a column of a row-major
// matrix, so the 32 threads of a warp touch 32 different sectors.
__global__ void copy_swapped(const float* in, float* out, int width, int height) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  const int col = blockIdx.y * blockDim.y + threadIdx.y;
  if (row < height && col < width) out[row * width + col] = in[row * width + col];
}

// The transpose through a shared tile; with Pad 1 the columns of the tile
// fall in different banks, without it all 32 in one.
template <int Pad>
__global__ void transpose_tile(const float* in, float* out, int width, int height) {
  __shared__ float tile[TILE][TILE + Pad];
  int x = blockIdx.x * TILE + threadIdx.x;
  int y = blockIdx.y * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS)
    if (x < width && y + j < height) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
  __syncthreads();
  x = blockIdx.y * TILE + threadIdx.x;
  y = blockIdx.x * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS)
    if (x < height && y + j < width) out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
}

void run_copy_coalesced(const float* in, float* out, int n) {
  copy_coalesced<<<(n + 255) / 256, 256>>>(in, out, n);
}

void run_copy_swapped(const float* in, float* out, int width, int height) {
  copy_swapped<<<dim3((height + 31) / 32, (width + 7) / 8), dim3(32, 8)>>>(in, out, width, height);
}

void run_transpose(const float* in, float* out, int width, int height, bool padded) {
  const dim3 grid((width + TILE - 1) / TILE, (height + TILE - 1) / TILE), block(TILE, ROWS);
  if (padded)
    transpose_tile<1><<<grid, block>>>(in, out, width, height);
  else
    transpose_tile<0><<<grid, block>>>(in, out, width, height);
}

// Every thread adds to one counter: the 32 lanes of a warp name one address,
// and their atomics run one after another.
__global__ void atomic_one_counter(const float* in, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(out, in[i]);
}

// Each lane adds to a bin of its own (the privatised counts of a histogram):
// one lane per address.
__global__ void atomic_own_bins(const float* in, float* bins, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&bins[threadIdx.x % 32], in[i]);
}

void run_atomics(const float* in, float* out, float* bins, int n) {
  atomic_one_counter<<<(n + 255) / 256, 256>>>(in, out, n);
  atomic_own_bins<<<(n + 255) / 256, 256>>>(in, bins, n);
}
