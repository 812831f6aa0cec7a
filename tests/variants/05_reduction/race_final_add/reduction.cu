// Framework test variant: the lab 5 solution adding each block's sum to out with a plain +=, not atomicAdd.
//
// reduce_sum: *out = in[0] + in[1] + ... + in[n - 1], for n >= 1; in holds n
// floats and out one float, both device pointers. Whatever out held before
// the call is overwritten.
// Each element is read once and added once: 4 bytes of memory traffic per
// addition, so the kernel is bound by memory bandwidth, like lab 1's. What is
// new is that the threads must combine their values: each block adds its
// threads' sums in shared memory, in a tree of log2(BLOCK) steps with a
// __syncthreads() between steps, and then adds its one partial sum to *out
// with atomicAdd, since several blocks run at once.
//
// Check it:  ./cudalab test 05_reduction    (handouts/05_reduction.md)
#include "cudalab/lab.cuh"

// ---------------------------------------------------------------------------
// Parameters

// Threads per block. The tree halves the number of active threads at each
// step, so it must be a power of two.
constexpr int BLOCK = 256;
static_assert(BLOCK >= 32 && (BLOCK & (BLOCK - 1)) == 0,
              "BLOCK must be a power of two of at least 32: the tree halves the active threads at each step");
static_assert(BLOCK <= 1024, "a block may have at most 1024 threads");

// The most blocks a launch uses: enough to keep every SM of a large GPU busy
// (an H100 holds 132 x 8 blocks of 256 threads at once), few enough that the
// one atomicAdd per block costs nothing. Beyond that each thread loops.
constexpr int MAX_BLOCKS = 1024;

// ---------------------------------------------------------------------------
// Kernels

// *out = 0, so that the blocks of reduce_sum_kernel can add to it. A kernel,
// not cudaMemset: the speed checks replay only the launcher's kernels.
__global__ void reduce_sum_clear_kernel(float* out) {
  *out = 0.0f;
}

__global__ void reduce_sum_kernel(const float* __restrict__ in, float* __restrict__ out, int n) {
  __shared__ float partial[BLOCK];
  const int tid = threadIdx.x;

  // Load phase. A grid-stride loop: the grid covers 2 * BLOCK * gridDim.x
  // elements per step, each thread takes two of them a block apart (both
  // loads coalesced) and adds them to its own sum in a register: the first
  // addition happens during the load, and with a capped grid each thread adds
  // many elements before any of them reaches shared memory. Every load is
  // bounds-checked: n need not be a multiple of anything.
  float sum = 0.0f;
  for (int i = blockIdx.x * 2 * BLOCK + tid; i < n; i += 2 * BLOCK * gridDim.x) {
    sum += in[i];
    if (i + BLOCK < n) sum += in[i + BLOCK];
  }
  partial[tid] = sum;
  // Every thread's sum is in shared memory before any thread reads another's.
  __syncthreads();

  // Tree phase, sequential addressing: at each step the first s threads add
  // the element s places above their own. The active threads are
  // consecutive, so whole warps stay busy or idle together (no divergence
  // within a warp), and a warp reads 32 consecutive floats (no bank
  // conflicts).
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (tid < s) partial[tid] += partial[tid + s];
    // Outside the if: every thread of the block must reach every barrier.
    // It makes this step's sums visible to the next step's readers.
    __syncthreads();
  }

  // One partial sum per block; the blocks run at once, so they add to *out
  // atomically (a plain += would lose the sums of blocks that read *out at
  // the same time).
  if (tid == 0) *out += partial[0];
}

// ---------------------------------------------------------------------------
// Launchers

void reduce_sum(const float* in, float* out, int n) {
  reduce_sum_clear_kernel<<<1, 1>>>(out);
  // Two elements per thread and step; past MAX_BLOCKS blocks the threads loop.
  const int blocks = cudalab::ceil_div(n, 2 * BLOCK);
  const int grid = blocks < MAX_BLOCKS ? blocks : MAX_BLOCKS;
  reduce_sum_kernel<<<grid, BLOCK>>>(in, out, n);
}

// ---------------------------------------------------------------------------
// Foils: correct but slow on purpose, for comparison (not student work)
//
// The speed checks time them next to the reference and show the figures in
// their notes; reduce_sum_interleaved is the naive kernel that the check
// faster-than-naive times the student's against.

// One element per thread and interleaved addressing, the first reduction
// every tutorial shows: at step s the threads whose index is a multiple of
// 2s add the element s places above. The active threads are spread over every
// warp, so each step keeps all warps busy for a few threads each (divergence),
// and the modulo costs more than the addition; a block of BLOCK threads reduces
// only BLOCK elements, so there are n / BLOCK blocks and as many atomicAdds.
__global__ void reduce_sum_interleaved_kernel(const float* __restrict__ in, float* __restrict__ out, int n) {
  __shared__ float partial[BLOCK];
  const int tid = threadIdx.x;
  const int i = blockIdx.x * BLOCK + tid;
  partial[tid] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (int s = 1; s < BLOCK; s *= 2) {
    if (tid % (2 * s) == 0) partial[tid] += partial[tid + s];
    __syncthreads();
  }
  if (tid == 0) atomicAdd(out, partial[0]);
}

void reduce_sum_interleaved(const float* in, float* out, int n) {
  reduce_sum_clear_kernel<<<1, 1>>>(out);
  reduce_sum_interleaved_kernel<<<cudalab::ceil_div(n, BLOCK), BLOCK>>>(in, out, n);
}

// Sequential addressing as in the reference, but one element per thread and
// one block per BLOCK elements: no divergence within a warp, yet every
// element still pays for its share of a whole tree and of one atomicAdd.
__global__ void reduce_sum_sequential_kernel(const float* __restrict__ in, float* __restrict__ out, int n) {
  __shared__ float partial[BLOCK];
  const int tid = threadIdx.x;
  const int i = blockIdx.x * BLOCK + tid;
  partial[tid] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (tid < s) partial[tid] += partial[tid + s];
    __syncthreads();
  }
  if (tid == 0) atomicAdd(out, partial[0]);
}

void reduce_sum_sequential(const float* in, float* out, int n) {
  reduce_sum_clear_kernel<<<1, 1>>>(out);
  reduce_sum_sequential_kernel<<<cudalab::ceil_div(n, BLOCK), BLOCK>>>(in, out, n);
}

// No shared memory at all: every thread adds its element to *out with
// atomicAdd. The atomics to one address are serialised in the L2 cache, one
// after another: n of them.
__global__ void reduce_sum_atomic_kernel(const float* __restrict__ in, float* __restrict__ out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(out, in[i]);
}

void reduce_sum_atomic(const float* in, float* out, int n) {
  reduce_sum_clear_kernel<<<1, 1>>>(out);
  reduce_sum_atomic_kernel<<<cudalab::ceil_div(n, BLOCK), BLOCK>>>(in, out, n);
}
