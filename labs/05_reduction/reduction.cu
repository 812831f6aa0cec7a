// Lab 5: sum reduction in shared memory.
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

// *out = 0, so that the blocks of reduce_sum_kernel can add to it.
__global__ void reduce_sum_clear_kernel(float* out) {
  // TODO(lab5): set *out to 0. (A kernel, not cudaMemset: the speed checks
  // replay only the kernels your launcher launches.)
  (void)out;  // TODO(lab5): delete this line
}

__global__ void reduce_sum_kernel(const float* __restrict__ in, float* __restrict__ out, int n) {
  // TODO(lab5): declare partial: BLOCK floats in __shared__ memory, one per
  // thread of the block.

  // TODO(lab5): the load phase. Each thread adds its elements into a float
  // sum of its own, in a register, with a grid-stride loop: it starts at
  // i = blockIdx.x * 2 * BLOCK + threadIdx.x and steps by 2 * BLOCK *
  // gridDim.x (the whole grid's share of one step) while i < n, adding
  // in[i] and in[i + BLOCK] (two loads a block apart, both coalesced: the
  // first addition happens during the load). n need not be a multiple of
  // anything: check the bound of every load, not only of the first. Then
  // store the thread's sum in partial[threadIdx.x].

  // TODO(lab5): wait until every thread of the block has stored its sum:
  // the tree reads the sums of other threads.

  // TODO(lab5): the tree. For s = BLOCK / 2, BLOCK / 4, ..., 1: the threads
  // with threadIdx.x < s add partial[threadIdx.x + s] to partial[threadIdx.x]
  // (sequential addressing: the active threads are consecutive, so whole
  // warps work or rest together, and a warp reads consecutive floats). After
  // each step every thread of the block waits for the others with
  // __syncthreads(), outside the if: every thread must reach every barrier.

  // TODO(lab5): thread 0 of the block adds the block's sum, partial[0], to
  // *out. Blocks run at the same time: add with atomicAdd(out, ...), since
  // a plain *out += ... loses the sums of blocks that read *out at once.
  (void)in, (void)out, (void)n;  // TODO(lab5): delete this line
}

// ---------------------------------------------------------------------------
// Launchers

void reduce_sum(const float* in, float* out, int n) {
  // TODO(lab5): launch reduce_sum_clear_kernel with one thread, then
  // reduce_sum_kernel with BLOCK threads per block and
  // cudalab::ceil_div(n, 2 * BLOCK) blocks, but at most MAX_BLOCKS (the
  // grid-stride loop does the rest). Both run on the default stream, one
  // after the other. Then delete the CUDALAB_TODO line, which makes every
  // check fail with "not implemented yet".
  (void)in, (void)out, (void)n;  // TODO(lab5): delete this line
  CUDALAB_TODO("lab5: launch reduce_sum_clear_kernel and reduce_sum_kernel in reduce_sum()");
}
