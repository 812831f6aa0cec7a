// simt's scheduler: built-in variables, barriers, the schedules, shared memory.
#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>
#include <vector>

#include "simt/simt.h"
#include "util.h"

namespace {

__global__ void ids(int* out) {
  const int t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const int b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  const int per_block = blockDim.x * blockDim.y * blockDim.z;
  out[b * per_block + t] = b * 100000 + t;
}

__global__ void rotate(int* out, bool sync) {
  __shared__ int s[256];
  const int t = threadIdx.x, n = blockDim.x;
  s[t] = t;
  if (sync) __syncthreads();
  out[blockIdx.x * n + t] = s[(t + 1) % n];
}

// Threads past `active` return at once; the others keep synchronising.
__global__ void early_exit(int* out, int active, int rounds) {
  __shared__ int s[256];
  const int t = threadIdx.x;
  if (t >= active) return;
  int acc = 0;
  for (int r = 0; r < rounds; ++r) {
    s[t] = t + r;
    __syncthreads();
    acc += s[(t + 1) % active];
    __syncthreads();
  }
  out[t] = acc;
}

__global__ void votes(int* out) {
  const int t = threadIdx.x;
  out[0] = __syncthreads_count(t % 3 == 0);
  out[1] = __syncthreads_and(t >= 0);
  out[2] = __syncthreads_and(t != 5);
  out[3] = __syncthreads_or(t == 77);
  out[4] = __syncthreads_or(t == 1000);
}

// The order in which the threads of a block first run.
__global__ void arrival(unsigned* counter, unsigned* order) {
  order[blockIdx.x * blockDim.x + threadIdx.x] = atomicAdd(counter, 1u);
}

// Reads shared memory before writing it: what the previous block left must
// not show through.
__global__ void stale(float* out) {
  __shared__ float s[64];
  out[blockIdx.x * 64 + threadIdx.x] = s[threadIdx.x];
  s[threadIdx.x] = 42.0f;
}

__global__ void dynamic_sum(const float* in, float* out, int n) {
  extern __shared__ float buf[];
  const int t = threadIdx.x;
  buf[t] = in[blockIdx.x * n + t];
  __syncthreads();
  for (int stride = n / 2; stride > 0; stride /= 2) {
    if (t < stride) buf[t] += buf[t + stride];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = buf[0];
}

}  // namespace

TEST_CASE("every thread of every block runs once, with its own threadIdx and blockIdx") {
  const dim3 grid(3, 2, 2), block(4, 3, 2);
  const int n = 12 * 24;
  DeviceBuffer<int> out(n);
  out.fill(-1);
  ids<<<grid, block>>>(out.get());
  REQUIRE(cudaGetLastError() == cudaSuccess);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  const auto got = out.download();
  for (int b = 0; b < 12; ++b)
    for (int t = 0; t < 24; ++t) REQUIRE(got[b * 24 + t] == b * 100000 + t);
}

TEST_CASE("__syncthreads makes every thread's shared write visible, in every schedule") {
  for (const char* schedule : {"inorder", "reverse", "random:1", "random:99"}) {
    Schedule use(schedule);
    DeviceBuffer<int> out(4 * 256);
    rotate<<<4, 256>>>(out.get(), true);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    const auto got = out.download();
    for (int i = 0; i < 4 * 256; ++i) REQUIRE(got[i] == (i % 256 + 1) % 256);
  }
}

TEST_CASE("without the barrier, a thread reads its neighbour's element before it is written") {
  Schedule use("inorder");
  DeviceBuffer<int> out(256);
  rotate<<<1, 256>>>(out.get(), false);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  const auto got = out.download();
  // Thread 0 ran to the end before thread 1 wrote s[1]: it read the poison.
  CHECK(got[0] == -1);
  // The last thread wraps around to s[0], which thread 0 wrote long before.
  CHECK(got[255] == 0);
}

TEST_CASE("threads that returned do not hold up a barrier") {
  for (const char* schedule : {"inorder", "reverse", "random:7"}) {
    Schedule use(schedule);
    DeviceBuffer<int> out(256);
    out.fill(-5);
    early_exit<<<1, 256>>>(out.get(), 100, 4);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    const auto got = out.download();
    for (int t = 0; t < 100; ++t) {
      int want = 0;
      for (int r = 0; r < 4; ++r) want += (t + 1) % 100 + r;
      REQUIRE(got[t] == want);
    }
    CHECK(got[100] == -5);
  }
}

TEST_CASE("__syncthreads_count, _and and _or") {
  DeviceBuffer<int> out(5);
  votes<<<1, 100>>>(out.get());
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  const auto got = out.download();
  CHECK(got[0] == 34);
  CHECK(got[1] == 1);
  CHECK(got[2] == 0);
  CHECK(got[3] == 1);
  CHECK(got[4] == 0);
}

TEST_CASE("the schedules: in order, reversed, and a seeded random order") {
  const int n = 64;
  auto run = [&](const char* schedule) {
    Schedule use(schedule);
    DeviceBuffer<unsigned> counter(1), order(n);
    counter.fill(0);
    arrival<<<1, n>>>(counter.get(), order.get());
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    return order.download();
  };
  std::vector<unsigned> identity(n);
  std::iota(identity.begin(), identity.end(), 0u);
  CHECK(run("inorder") == identity);
  auto reversed = identity;
  std::reverse(reversed.begin(), reversed.end());
  CHECK(run("reverse") == reversed);
  const auto r1 = run("random:1"), r1again = run("random:1"), r2 = run("random:2");
  CHECK(r1 != identity);
  CHECK(r1 == r1again);  // reproducible from the seed
  CHECK(r1 != r2);
  auto sorted = r1;
  std::sort(sorted.begin(), sorted.end());
  CHECK(sorted == identity);  // each thread ran exactly once
  CHECK_THROWS_AS(simt::set_schedule("sometimes"), std::invalid_argument);
}

TEST_CASE("the random schedule also shuffles the order of the blocks") {
  Schedule use("random:5");
  DeviceBuffer<unsigned> counter(1), order(32);
  counter.fill(0);
  arrival<<<32, 1>>>(counter.get(), order.get());
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  auto got = order.download();
  std::vector<unsigned> identity(32);
  std::iota(identity.begin(), identity.end(), 0u);
  CHECK(got != identity);
  std::sort(got.begin(), got.end());
  CHECK(got == identity);
}

TEST_CASE("shared memory starts as poison in every block, never as the previous block's data") {
  DeviceBuffer<float> out(3 * 64);
  stale<<<3, 64>>>(out.get());
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  for (float v : out.download()) REQUIRE(std::isnan(v));
}

TEST_CASE("extern __shared__ arrays get the launch's dynamic shared memory") {
  const int blocks = 5, n = 128;
  std::vector<float> in(blocks * n);
  for (int i = 0; i < blocks * n; ++i) in[i] = static_cast<float>(i % 17);
  DeviceBuffer<float> din(in), dout(blocks);
  dynamic_sum<<<blocks, n, n * sizeof(float)>>>(din.get(), dout.get(), n);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  const auto got = dout.download();
  for (int b = 0; b < blocks; ++b) {
    float want = 0;
    for (int t = 0; t < n; ++t) want += in[b * n + t];
    CHECK(got[b] == want);
  }
}
