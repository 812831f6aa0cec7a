// simt's scheduler: built-in variables, barriers (and the barriers not every
// thread of a block reaches), the schedules, shared memory.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <cstdlib>
#include <numeric>
#include <string>
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


// A tree reduction whose __syncthreads() sits inside the `if`: the threads
// that skip it run on to the end of the kernel while the others wait at it.
__global__ void reduce_sync_in_if(const float* in, float* out) {
  __shared__ float s[256];
  const int t = threadIdx.x;
  s[t] = in[blockIdx.x * blockDim.x + t];
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (t < stride) {
      s[t] += s[t + stride];
      __syncthreads();
    }
  }
  if (t == 0) out[blockIdx.x] = s[0];
}

// The same reduction, right: every thread reaches every barrier.
__global__ void reduce(const float* in, float* out) {
  __shared__ float s[256];
  const int t = threadIdx.x;
  s[t] = in[blockIdx.x * blockDim.x + t];
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (t < stride) s[t] += s[t + stride];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = s[0];
}

// The first barrier inside an `if` that threads past `limit` skip: they wait
// at the second one meanwhile.
__global__ void first_sync_in_if(int* out, int limit) {
  __shared__ int s[64];
  const int t = threadIdx.x;
  s[t] = t;
  if (t < limit) __syncthreads();
  out[t] = s[(t + 1) % blockDim.x];
  __syncthreads();
}

// Threads past n return at once; no barrier anywhere.
__global__ void scale(const float* in, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[i] = 2.0f * in[i];
}

// first_sync_in_if again, for a test that must not find its addresses'
// source lines known already.
__global__ void first_sync_in_if_again(int* out, int limit) {
  __shared__ int s[64];
  const int t = threadIdx.x;
  s[t] = t;
  if (t < limit) __syncthreads();
  out[t] = s[(t + 1) % blockDim.x];
  __syncthreads();
}

// first_sync_in_if with __syncthreads() called without its macro: the
// return address stands for the place.
__global__ void unnamed_sync_in_if(int* out, int limit) {
  __shared__ int s[64];
  const int t = threadIdx.x;
  s[t] = t;
  if (t < limit) (__syncthreads)();
  out[t] = s[(t + 1) % blockDim.x] + (__syncthreads_count)(1);
}

// Every thread takes the first barrier; then threads past `active` return,
// and the others go on to a second, different barrier.
__global__ void return_between_barriers(int* out, int active) {
  __shared__ int s[64];
  const int t = threadIdx.x;
  s[t] = t;
  __syncthreads();
  if (t >= active) return;
  const int mine = s[(t + 1) % blockDim.x];
  __syncthreads();
  out[t] = mine + s[t];
}

// Every thread of block `full_block` takes the barrier; in the other blocks
// threads past `active` return before it.
__global__ void early_exit_but_one_block(int* out, int active, int full_block) {
  __shared__ int s[64];
  const int t = threadIdx.x;
  if (static_cast<int>(blockIdx.x) != full_block && t >= active) return;
  s[t] = t;
  __syncthreads();
  out[blockIdx.x * blockDim.x + t] = s[t];
}

// A loop with a barrier that threads leave by `return` after different
// numbers of rounds: legal on a GPU since Volta, but CPU mode cannot tell it
// from a barrier skipped inside an `if` (simt/README.md).
__global__ void return_inside_barrier_loop(int* out, int rounds) {
  __shared__ int s[64];
  const int t = threadIdx.x;
  for (int r = 0; r < rounds; ++r) {
    if (t >= 64 - 8 * r) return;
    s[t] = r;
    __syncthreads();
  }
  out[t] = s[t];
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
  // Thread 0 ran to the end before thread 1 wrote s[1]: it read the poison
  // (shared memory's NaN word, as an int).
  CHECK(got[0] == 0x7FF2A5A5);
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
  for (float v : out.download()) {
    REQUIRE(std::isnan(v));
    // Its own NaN, not the harness's output fill 0xFFFFFFFF: a value computed
    // from it must not read as an output never written (the harness knows
    // this word as kSharedPoisonNan, cudalab/buffer.h).
    std::uint32_t bits;
    std::memcpy(&bits, &v, 4);
    REQUIRE(bits == 0x7FF2A5A5u);
  }
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

TEST_CASE("a __syncthreads() inside the `if` of a tree reduction stops the launch and names the threads") {
  for (const char* schedule : {"inorder", "reverse", "random:3"}) {
    INFO(schedule);
    simt::reset_for_tests();
    Schedule use(schedule);
    std::vector<float> in(2 * 64, 1.0f);
    DeviceBuffer<float> din(in), dout(2);
    reduce_sync_in_if<<<2, 64>>>(din.get(), dout.get());
    CHECK(cudaGetLastError() == cudaSuccess);  // the launch itself is fine
    REQUIRE(cudaDeviceSynchronize() == cudaErrorLaunchFailure);
    const std::string detail = simt::last_error_detail();
    INFO(detail);
    CHECK(detail.find("a __syncthreads() that some threads never reach") != std::string::npos);
    // Round 1: threads 0..31 wait inside the `if`, 32..63 finished (they
    // never took that barrier: an early return, allowed). Round 2: 0..15
    // wait at it again, 16..31 took it once and finished.
    CHECK(detail.find("test_barrier.cu:") != std::string::npos);
    CHECK(detail.find("reached by 16 of the 64 threads of block (") != std::string::npos);
    CHECK(detail.find("threads 16..63 had finished the kernel, threads 16..31 of them after passing it") !=
          std::string::npos);
    CHECK(detail.find("a barrier inside a branch") != std::string::npos);
    simt::reset_for_tests();  // before the buffers go: cudaFree fails while an error sticks
  }
}

TEST_CASE("the same reduction with its __syncthreads() outside the `if` runs, and is right") {
  simt::reset_for_tests();
  std::vector<float> in(3 * 256);
  for (int i = 0; i < 3 * 256; ++i) in[i] = static_cast<float>(i % 7);
  DeviceBuffer<float> din(in), dout(3);
  reduce<<<3, 256>>>(din.get(), dout.get());
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  const auto got = dout.download();
  for (int b = 0; b < 3; ++b) {
    float want = 0;
    for (int t = 0; t < 256; ++t) want += in[b * 256 + t];
    CHECK(got[b] == want);
  }
  CHECK(simt::take_barrier_skip().empty());
}

TEST_CASE("threads waiting at different __syncthreads() at once stop the launch") {
  simt::reset_for_tests();
  DeviceBuffer<int> out(64);
  first_sync_in_if<<<1, 64>>>(out.get(), 40);
  REQUIRE(cudaDeviceSynchronize() == cudaErrorLaunchFailure);
  const std::string detail = simt::last_error_detail();
  INFO(detail);
  CHECK(detail.find("a __syncthreads() that some threads never reach") != std::string::npos);
  CHECK(detail.find("reached by 40 of the 64 threads of block (0, 0, 0)") != std::string::npos);
  CHECK(detail.find("threads 40..63 wait at another __syncthreads() at ") != std::string::npos);
  simt::reset_for_tests();

  // Every thread takes the `if`: nothing to report.
  first_sync_in_if<<<1, 64>>>(out.get(), 64);
  CHECK(cudaDeviceSynchronize() == cudaSuccess);
  CHECK(simt::take_barrier_skip().empty());
}

TEST_CASE("threads past the data that return at once, with no barrier after, are no error") {
  simt::reset_for_tests();
  const int n = 1000;
  std::vector<float> in(n, 1.5f);
  DeviceBuffer<float> din(in), dout(n);
  scale<<<4, 256>>>(din.get(), dout.get(), n);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  for (float v : dout.download()) REQUIRE(v == 3.0f);
  CHECK(simt::take_barrier_skip().empty());
}

TEST_CASE("threads that return before a barrier the others take are no error, only a note") {
  simt::reset_for_tests();
  for (const char* schedule : {"inorder", "reverse", "random:7"}) {
    INFO(schedule);
    Schedule use(schedule);
    DeviceBuffer<int> out(256);
    early_exit<<<1, 256>>>(out.get(), 100, 4);  // returns before a barrier loop
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    // The note the harness leads with when the output is wrong (a tile
    // nobody loaded); here it is right.
    CHECK(simt::take_barrier_skip().find("156 of the 256 threads of block (0, 0, 0) had finished the kernel") !=
          std::string::npos);

    DeviceBuffer<int> out2(64);
    return_between_barriers<<<1, 64>>>(out2.get(), 20);  // returns between two barriers
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    const auto got = out2.download();
    for (int t = 0; t < 20; ++t) REQUIRE(got[t] == (t + 1) % 64 + t);
    CHECK_FALSE(simt::take_barrier_skip().empty());
  }
  simt::reset_for_tests();
}

TEST_CASE("which threads took part in a barrier starts afresh in every block and every launch") {
  simt::reset_for_tests();
  DeviceBuffer<int> out(3 * 64);
  // Block 0: every thread takes the barrier, then returns. Blocks 1 and 2:
  // threads past 32 return before it. Had block 0's threads been counted in
  // block 1, they would have left a barrier they took part in.
  early_exit_but_one_block<<<3, 64>>>(out.get(), 32, 0);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  // The same across launches: every thread took it in the first.
  early_exit_but_one_block<<<1, 64>>>(out.get(), 64, 0);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  early_exit_but_one_block<<<1, 64>>>(out.get(), 32, -1);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  CHECK_FALSE(simt::take_barrier_skip().empty());
}

TEST_CASE("threads that return from a barrier loop while the others go on round it are reported") {
  // The rule's price: legal on a GPU, but the same to CPU mode as a barrier
  // skipped inside an `if` (simt/README.md, "Barriers").
  simt::reset_for_tests();
  DeviceBuffer<int> out(64);
  return_inside_barrier_loop<<<1, 64>>>(out.get(), 1);  // one round: every thread returns or takes it
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  return_inside_barrier_loop<<<1, 64>>>(out.get(), 3);
  REQUIRE(cudaDeviceSynchronize() == cudaErrorLaunchFailure);
  const std::string detail = simt::last_error_detail();
  INFO(detail);
  // Round 2: threads 56..63 took the barrier in round 1 and returned.
  CHECK(detail.find("reached by 56 of the 64 threads of block (0, 0, 0)") != std::string::npos);
  CHECK(detail.find("threads 56..63 had finished the kernel, after passing it in an earlier round") !=
        std::string::npos);
  simt::reset_for_tests();
}

TEST_CASE("the barriers are named by their source lines even where addr2line cannot run") {
  // A confined check may not start programs: simt must not need addr2line
  // (the debug information) to tell barriers apart or to name them.
  simt::reset_for_tests();
  const std::string path = std::getenv("PATH") ? std::getenv("PATH") : "";
  setenv("PATH", "/nonexistent", 1);
  DeviceBuffer<int> out(64);
  first_sync_in_if_again<<<1, 64>>>(out.get(), 40);
  const cudaError_t e = cudaDeviceSynchronize();
  setenv("PATH", path.c_str(), 1);
  REQUIRE(e == cudaErrorLaunchFailure);
  const std::string detail = simt::last_error_detail();
  INFO(detail);
  const auto first = detail.find("the __syncthreads() at ");
  const auto other = detail.find("threads 40..63 wait at another __syncthreads() at ");
  REQUIRE(first != std::string::npos);
  REQUIRE(other != std::string::npos);
  CHECK(detail.find("test_barrier.cu:", first) < other);
  CHECK(detail.find("test_barrier.cu:", other) != std::string::npos);
  simt::reset_for_tests();
}

TEST_CASE("a __syncthreads() called without its macro is told apart by its return address") {
  simt::reset_for_tests();
  DeviceBuffer<int> out(64);
  unnamed_sync_in_if<<<1, 64>>>(out.get(), 64);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  const auto got = out.download();
  for (int t = 0; t < 64; ++t) REQUIRE(got[t] == (t + 1) % 64 + 64);
  unnamed_sync_in_if<<<1, 64>>>(out.get(), 40);
  REQUIRE(cudaDeviceSynchronize() == cudaErrorLaunchFailure);
  const std::string detail = simt::last_error_detail();
  INFO(detail);
  CHECK(detail.find("reached by 40 of the 64 threads of block (0, 0, 0), while threads 40..63 wait at another "
                    "__syncthreads()") != std::string::npos);
  simt::reset_for_tests();
}
