// The kernels of cudalab/timing.h (timing_kernels.h says what each does).
// Plain CUDA without warp intrinsics, so that simt can translate it for CPU
// mode too.
#include <cuda_runtime.h>

#include <cstring>

#include "timing_kernels.h"

namespace cudalab::timing_kernels {

namespace {

constexpr int kThreads = 256;

// splitmix64's finaliser: a good 64-bit mix of a counter.
__host__ __device__ inline unsigned long long mix(unsigned long long x) {
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

__global__ void fill_kernel(float* p, unsigned long long n, unsigned long long seed, float lo, float scale) {
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  for (unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const unsigned long long h = mix(seed + (i + 1) * 0x9E3779B97F4A7C15ull);
    p[i] = lo + scale * (static_cast<float>(h >> 40) * (1.0f / 16777216.0f));
  }
}

// The bits scramble() flips in element i: 32 pseudo-random bits, each bit of
// the float flipped with probability 1/2.
__host__ __device__ inline unsigned int mask(unsigned long long key, unsigned long long i) {
  return static_cast<unsigned int>(mix(key ^ (i * 0xD1B54A32D192ED03ull)));
}

__global__ void scramble_kernel(float* p, unsigned long long n, unsigned long long key) {
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  for (unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    p[i] = __uint_as_float(__float_as_uint(p[i]) ^ mask(key, i));
  }
}

__global__ void compare_kernel(const float* got, const float* expected, unsigned long long n, double atol,
                               double rtol, unsigned long long* counters, unsigned long long key) {
  __shared__ unsigned long long block_wrong;
  __shared__ unsigned long long block_first;
  if (threadIdx.x == 0) {
    block_wrong = 0;
    block_first = ~0ull;
  }
  __syncthreads();
  unsigned long long wrong = 0, first = ~0ull;
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  for (unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const double g = got[i];
    const double e = key ? __uint_as_float(__float_as_uint(expected[i]) ^ mask(key, i)) : expected[i];
    // x - x == 0 is false for NaN and Inf, as Tolerance::accepts rejects them.
    const bool ok = g - g == 0 && e - e == 0 && fabs(g - e) <= atol + rtol * fabs(e);
    if (!ok) {
      if (wrong++ == 0) first = i;
    }
  }
  if (wrong > 0) {
    atomicAdd(&block_wrong, wrong);
    atomicMin(&block_first, first);
  }
  __syncthreads();
  if (threadIdx.x == 0 && block_wrong > 0) {
    atomicAdd(&counters[0], block_wrong);
    atomicMin(&counters[1], block_first);
  }
}

__global__ void read_kernel(const unsigned long long* p, unsigned long long n, unsigned long long* sink) {
  __shared__ unsigned long long block;
  if (threadIdx.x == 0) block = 0;
  __syncthreads();
  unsigned long long x = 0;
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  for (unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    x ^= p[i];
  atomicXor(&block, x);
  __syncthreads();
  if (threadIdx.x == 0) atomicXor(sink, block);
}

// Enough blocks to fill the GPU, not one per element: grid-stride loops.
int blocks_for(unsigned long long n) {
  int device = 0, sms = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  const unsigned long long most = static_cast<unsigned long long>(sms > 0 ? sms : 1) * 8;
  const unsigned long long need = (n + kThreads - 1) / kThreads;
  return static_cast<int>(need < most ? (need > 0 ? need : 1) : most);
}

}  // namespace

void fill_uniform(float* p, std::size_t n, std::uint64_t seed, float lo, float hi) {
  if (n == 0) return;
  fill_kernel<<<blocks_for(n), kThreads>>>(p, n, mix(seed), lo, hi - lo);
}

void scramble(float* p, std::size_t n, std::uint64_t key) {
  if (n == 0) return;
  scramble_kernel<<<blocks_for(n), kThreads>>>(p, n, key);
}

void count_mismatches(const float* got, const float* expected, std::size_t n, double atol, double rtol,
                      unsigned long long* counters, std::uint64_t key) {
  if (n == 0) return;
  compare_kernel<<<blocks_for(n), kThreads>>>(got, expected, n, atol, rtol, counters, key);
}

void read_all(const void* p, std::size_t bytes, unsigned long long* sink) {
  const std::size_t n = bytes / sizeof(unsigned long long);
  if (n == 0) return;
  read_kernel<<<blocks_for(n), kThreads>>>(static_cast<const unsigned long long*>(p), n, sink);
}

float read_expected(const float* expected, std::size_t index, std::uint64_t key) {
  unsigned int bits = 0;
  if (cudaMemcpy(&bits, expected + index, sizeof bits, cudaMemcpyDeviceToHost) != cudaSuccess) return 0;
  if (key) bits ^= mask(key, index);
  float value;
  static_assert(sizeof value == sizeof bits, "float is 32 bits");
  memcpy(&value, &bits, sizeof value);
  return value;
}

}  // namespace cudalab::timing_kernels
