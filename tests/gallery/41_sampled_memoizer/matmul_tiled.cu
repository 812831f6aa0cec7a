// Rogues' gallery: a smarter memoizer. It keeps a device copy of the last
// product, keyed on the pointers, the sizes and 16 input values sampled from A
// and B (read back with two small copies), and when a call matches the key it
// copies the saved product into C instead of computing it. So it survives a
// poisoned C between calls, and it recomputes (stays right) when only some
// inputs change and a sample notices. Only fresh inputs in every timed call,
// each output verified, catch it: then the samples never match, and it is the
// naive kernel plus the cost of the samples.
#include <cstddef>

#include "cudalab/lab.cuh"

namespace {

constexpr int BLOCK = 16;

// One thread per element of C: a row of A and a column of B from global memory.
__global__ void matmul_naive_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                    float* __restrict__ C, int M, int N, int K) {
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
  C[row * N + col] = acc;
}

constexpr int kSamples = 8;  // per input

struct Key {
  const float* A = nullptr;
  const float* B = nullptr;
  float* C = nullptr;
  int M = 0, N = 0, K = 0;
  float a[kSamples] = {}, b[kSamples] = {};
};

Key saved;
float* saved_c = nullptr;  // device copy of the last product
std::size_t saved_capacity = 0;

// Sampled values of a device array of n floats, spread over it.
void sample(const float* device, std::size_t n, float* out) {
  for (int i = 0; i < kSamples; ++i) {
    const std::size_t at = (n - 1) * static_cast<std::size_t>(i) / (kSamples - 1);
    CUDA_CHECK(cudaMemcpy(&out[i], device + at, sizeof(float), cudaMemcpyDeviceToHost));
  }
}

bool same(const Key& x, const Key& y) {
  if (x.A != y.A || x.B != y.B || x.C != y.C || x.M != y.M || x.N != y.N || x.K != y.K) return false;
  for (int i = 0; i < kSamples; ++i)
    if (x.a[i] != y.a[i] || x.b[i] != y.b[i]) return false;
  return true;
}

}  // namespace

void matmul_tiled(const float* A, const float* B, float* C, int M, int N, int K) {
  const std::size_t c_count = static_cast<std::size_t>(M) * N;
  Key key;
  key.A = A, key.B = B, key.C = C, key.M = M, key.N = N, key.K = K;
  sample(A, static_cast<std::size_t>(M) * K, key.a);
  sample(B, static_cast<std::size_t>(K) * N, key.b);
  if (saved_c && same(key, saved)) {
    CUDA_CHECK(cudaMemcpy(C, saved_c, c_count * sizeof(float), cudaMemcpyDeviceToDevice));
    return;
  }
  const dim3 block(BLOCK, BLOCK);
  const dim3 grid(cudalab::ceil_div(N, BLOCK), cudalab::ceil_div(M, BLOCK));
  matmul_naive_kernel<<<grid, block>>>(A, B, C, M, N, K);
  if (c_count > saved_capacity) {
    if (saved_c) CUDA_CHECK(cudaFree(saved_c));
    CUDA_CHECK(cudaMalloc(&saved_c, c_count * sizeof(float)));
    saved_capacity = c_count;
  }
  CUDA_CHECK(cudaMemcpy(saved_c, C, c_count * sizeof(float), cudaMemcpyDeviceToDevice));
  saved = key;
}
