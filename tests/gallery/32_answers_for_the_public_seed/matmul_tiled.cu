// Rogues' gallery: lab 3 "solved" for the public seed only.
//
// The student read the harness (cudalab::random_floats, matmul::random_inputs)
// and regenerates, on the host, the inputs that the checks draw with the public
// default seed 2026, then copies the answers for those inputs into C. Every
// shape small enough for the checks' CPU comparison (M * N * K <= 2^28) gets the
// memorised answer, whatever A and B hold; bigger shapes, compared with the
// reference kernel, get a real kernel. With `--seed 2026` this passes the
// correctness checks; at the course's grading seed every memorised answer is
// wrong.
#include <cstdint>
#include <vector>

#include "cudalab/lab.cuh"

namespace {

constexpr std::uint64_t kPublicSeed = 2026;

// A copy of cudalab::random_floats (cudalab::uniform_floats) at the public seed.
std::uint64_t mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

std::vector<float> public_floats(std::size_t n, std::uint64_t stream) {
  constexpr std::uint64_t kGamma = 0x9E3779B97F4A7C15ULL;
  const std::uint64_t key = mix(mix(kPublicSeed + kGamma) ^ stream);
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = -1.0f + 2.0f * (static_cast<float>(mix(key + (i + 1) * kGamma) >> 40) * (1.0f / 16777216.0f));
  return v;
}

constexpr int TILE = 16;

__global__ void matmul_kernel(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                              int M, int N, int K) {
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
  C[row * N + col] = acc;
}

}  // namespace

void matmul_tiled(const float* A, const float* B, float* C, int M, int N, int K) {
  if (static_cast<long long>(M) * N * K <= (1LL << 28)) {
    // The answer for the public inputs of this shape (matmul::random_inputs).
    const std::uint64_t stream = (static_cast<std::uint64_t>(M) << 42) ^ (static_cast<std::uint64_t>(N) << 21) ^ K;
    const std::vector<float> a = public_floats(static_cast<std::size_t>(M) * K, 2 * stream);
    const std::vector<float> b = public_floats(static_cast<std::size_t>(K) * N, 2 * stream + 1);
    std::vector<double> c(static_cast<std::size_t>(M) * N, 0.0);
    for (int i = 0; i < M; ++i)
      for (int k = 0; k < K; ++k) {
        const double x = a[static_cast<std::size_t>(i) * K + k];
        for (int j = 0; j < N; ++j) c[static_cast<std::size_t>(i) * N + j] += x * b[static_cast<std::size_t>(k) * N + j];
      }
    const std::vector<float> answer(c.begin(), c.end());
    CUDA_CHECK(cudaMemcpy(C, answer.data(), answer.size() * sizeof(float), cudaMemcpyHostToDevice));
    return;
  }
  const dim3 block(TILE, TILE);
  const dim3 grid(cudalab::ceil_div(N, TILE), cudalab::ceil_div(M, TILE));
  matmul_kernel<<<grid, block>>>(A, B, C, M, N, K);
}
