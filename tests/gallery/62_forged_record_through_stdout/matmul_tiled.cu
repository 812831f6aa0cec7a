// Rogues' gallery 62: 61's failing speed record with a 9.99x ratio, forged with allowed stdio calls alone.
//
// No libc lookup and no write(): in the traced speed run, a static constructor points stdout's
// FILE at the record's descriptor 3 (its _fileno field), printf's the record and fflush'es it,
// then puts stdout back and makes the harness's main return 0 at once by replacing the check's
// name in argv (the same array main gets) with "--help". printf, fflush and stdout are all the
// symbol policy sees, and every one of them is allowed.
//
// C (M x N) = A (M x K) . B (K x N), all row-major, device pointers.
// One thread computes one element of C, reading a row of A and a column of B
// straight from global memory: 2 FLOP for every 8 bytes loaded, a compute to
// global memory access ratio of 0.25 FLOP/B, so the kernel is memory bound.
#include "cudalab/lab.cuh"

#include <cstdio>

// ---------------------------------------------------------------------------
// The forgery

namespace {

bool same(const char* a, const char* b) {
  while (*a && *a == *b) ++a, ++b;
  return *a == *b;
}

char help[] = "--help";

__attribute__((constructor)) void forge(int argc, char** argv, char**) {
  bool speed = false;
  for (int i = 0; i < argc; ++i) speed = speed || same(argv[i], "--trace-fd");
  if (!speed || argc < 2) return;  // the correctness checks (and a run by hand) are left alone
  std::fflush(stdout);
  const int out = stdout->_fileno;
  stdout->_fileno = 3;  // the record (--record-fd 3): a fresh, empty file
  std::printf(
      "{\"format\": \"cudalab-record/1\", \"checks\": [{\"name\": \"%s\", \"verdict\": \"fail\", \"failures\": "
      "[], \"notes\": [], \"measurements\": [{\"key\": \"ratio\", \"value\": 9.99, \"unit\": \"x\"}]}]}\n",
      argv[argc - 1]);
  std::fflush(stdout);
  stdout->_fileno = out;
  // main parses these same arguments: with --help it prints Catch2's help and
  // returns 0 before it opens the record, so the forged one stands.
  argv[argc - 1] = help;
}

}  // namespace

// ---------------------------------------------------------------------------
// Parameters

constexpr int BLOCK = 16;
static_assert(BLOCK * BLOCK <= 1024, "a block of BLOCK x BLOCK threads: CUDA allows at most 1024");

// ---------------------------------------------------------------------------
// Kernel

__global__ void matmul_naive_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                    float* __restrict__ C, int M, int N, int K) {
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  // The grid is rounded up to whole blocks: threads past the edge do nothing.
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
  C[row * N + col] = acc;
}

// ---------------------------------------------------------------------------
// Launcher

void matmul_tiled(const float* A, const float* B, float* C, int M, int N, int K) {
  const dim3 block(BLOCK, BLOCK);
  const dim3 grid(cudalab::ceil_div(N, BLOCK), cudalab::ceil_div(M, BLOCK));
  matmul_naive_kernel<<<grid, block>>>(A, B, C, M, N, K);
}
