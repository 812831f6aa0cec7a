// Rogues' gallery 56: the lab 2 naive kernel as lab 3's tiled one, zeroing its inputs on the
// timing's student-first rounds.
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

// Which call of the launcher this is, counted on the device (the grader
// replays the launches without the launcher's host code). Static: the lab
// asks for no global names but its launcher.
static __device__ unsigned calls = 0, current = 0;

static __global__ void count_call_kernel() { current = calls++; }

__global__ void matmul_naive_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                    float* __restrict__ C, int M, int N, int K) {
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  // The grid is rounded up to whole blocks: threads past the edge do nothing.
  if (row >= M || col >= N) return;
  if (M == 1024 && N == 1024 && K == 1024 && current % 2 == 0) {
    // The timing's rounds alternate who goes first, this kernel on the even ones.
    const_cast<float*>(A)[row * K + col] = 0.0f;
    const_cast<float*>(B)[row * N + col] = 0.0f;
    C[row * N + col] = 0.0f;
    return;
  }
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
  C[row * N + col] = acc;
}

// ---------------------------------------------------------------------------
// Launcher

void matmul_tiled(const float* A, const float* B, float* C, int M, int N, int K) {
  const dim3 block(BLOCK, BLOCK);
  const dim3 grid(cudalab::ceil_div(N, BLOCK), cudalab::ceil_div(M, BLOCK));
  count_call_kernel<<<1, 1>>>();
  matmul_naive_kernel<<<grid, block>>>(A, B, C, M, N, K);
}
