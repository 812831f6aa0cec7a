// simt's state: each launch starts from nothing of the one before, and
// simt::reset_for_tests() takes the process back to a fresh one.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "simt/simt.h"
#include "util.h"

namespace {

// Thread `trap_at` of block `trap_block` traps in the second round, while the
// threads before it wait at the second barrier with their predicates given.
__global__ void trap_between_barriers(int* out, int trap_block, int trap_at) {
  const int t = threadIdx.x;
  out[blockIdx.x * blockDim.x + t] = __syncthreads_count(1);
  if (static_cast<int>(blockIdx.x) == trap_block && t == trap_at) __trap();
  out[blockIdx.x * blockDim.x + t] = __syncthreads_count(t % 2);
}

// Every thread: how many threads of its block gave a predicate, then how many
// of them a second one.
__global__ void counts(int* out) {
  const int t = threadIdx.x;
  const int first = __syncthreads_count(t < 10);
  const int second = __syncthreads_count(t % 4 == 0);
  out[2 * t] = first;
  out[2 * t + 1] = second;
}

// Threads past `active` return before the barrier the others take.
__global__ void some_return_early(int* out, int active) {
  __shared__ int s[64];
  const int t = threadIdx.x;
  if (t >= active) return;
  s[t] = t;
  __syncthreads();
  out[t] = s[(t + 1) % active];
}

__global__ void store_one(int* p) {
  *p = 1;
}

// One launch site for a host pointer, so that its warning's key is the same
// on every call.
void launch_with_host_pointer(int* host) {
  store_one<<<1, 1>>>(host);
}

__global__ void resets_inside(int* out) {
  simt::reset_for_tests();
  out[threadIdx.x] = 1;
}

// What the code in scope writes on stderr.
class CaptureStderr {
 public:
  CaptureStderr() {
    std::fflush(stderr);
    file_ = std::tmpfile();
    saved_ = dup(2);
    dup2(fileno(file_), 2);
  }
  ~CaptureStderr() {
    if (saved_ >= 0) text();
    if (file_) std::fclose(file_);
  }
  CaptureStderr(const CaptureStderr&) = delete;
  CaptureStderr& operator=(const CaptureStderr&) = delete;
  // Ends the capture (once) and returns what was written.
  std::string text() {
    if (saved_ >= 0) {
      std::fflush(stderr);
      dup2(saved_, 2);
      close(saved_);
      saved_ = -1;
      std::rewind(file_);
      char buf[4096];
      for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, file_)) > 0;) text_.append(buf, n);
    }
    return text_;
  }

 private:
  std::FILE* file_ = nullptr;
  int saved_ = -1;
  std::string text_;
};

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::string default_schedule() {
  const char* env = std::getenv("CUDALAB_SIMT_SCHEDULE");
  return env && *env ? env : "inorder";
}

}  // namespace

// For test_launch_state_reset.cpp, which looks inside the launch's state.
void launch_trap_between_barriers(int* out, int blocks, int threads, int trap_block, int trap_at) {
  trap_between_barriers<<<blocks, threads>>>(out, trap_block, trap_at);
}
void launch_counts(int* out, int threads) {
  counts<<<1, threads>>>(out);
}

TEST_CASE("a launch stopped by a fault leaves nothing behind for the next launch") {
  simt::reset_for_tests();
  SECTION("its fault and the barrier it stopped at") {
    DeviceBuffer<int> out(2 * 64);
    trap_between_barriers<<<2, 64>>>(out.get(), 0, 5);
    CHECK(cudaDeviceSynchronize() == cudaErrorLaunchFailure);
    CHECK(simt::last_error_detail().find("__trap()") != std::string::npos);
    CHECK(simt::last_error_detail().find("thread (5,0,0) of block (0,0,0)") != std::string::npos);
    // A real process would have to exit here; a test may forget the sticky error.
    simt::reset_errors_for_tests();

    // Threads 0 to 4 of the first launch were waiting at a barrier with
    // their predicates given: none of that counts in the second.
    DeviceBuffer<int> got(2 * 100);
    counts<<<1, 100>>>(got.get());
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    CHECK(simt::last_error_detail().empty());
    const auto v = got.download();
    for (int t = 0; t < 100; ++t) {
      INFO("thread " << t);
      REQUIRE(v[2 * t] == 10);
      REQUIRE(v[2 * t + 1] == 25);
    }
  }
  SECTION("a fault in one block of a later launch names that launch's thread and block only") {
    DeviceBuffer<int> out(3 * 32);
    trap_between_barriers<<<3, 32>>>(out.get(), 0, 1);
    CHECK(cudaDeviceSynchronize() == cudaErrorLaunchFailure);
    simt::reset_errors_for_tests();
    trap_between_barriers<<<3, 32>>>(out.get(), 2, 7);
    CHECK(cudaDeviceSynchronize() == cudaErrorLaunchFailure);
    const std::string detail = simt::last_error_detail();
    CHECK(detail.find("thread (7,0,0) of block (2,0,0)") != std::string::npos);
    CHECK(detail.find("block (0,0,0)") == std::string::npos);
    simt::reset_errors_for_tests();
  }
  simt::reset_for_tests();
}

TEST_CASE("reset_for_tests forgets the errors, the reports, the warnings given and the schedule") {
  simt::reset_for_tests();
  int host_value = 0;
  CaptureStderr before;
  simt::set_schedule("random:3");
  DeviceBuffer<int> out(64);
  some_return_early<<<1, 64>>>(out.get(), 40);  // a barrier skipped: reported
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  launch_with_host_pointer(&host_value);
  launch_with_host_pointer(&host_value);  // the warning once only
  trap_between_barriers<<<1, 32>>>(out.get(), 0, 3);
  CHECK(cudaDeviceSynchronize() == cudaErrorLaunchFailure);
  const std::string first = before.text();
  CHECK(count_of(first, "which cudaMalloc did not return") == 1);

  simt::reset_for_tests();
  CHECK(cudaGetLastError() == cudaSuccess);
  CHECK(cudaDeviceSynchronize() == cudaSuccess);
  CHECK(simt::last_error_detail().empty());
  CHECK(simt::take_last_launch().empty());
  CHECK(simt::take_barrier_skip().empty());
  CHECK(simt::schedule() == default_schedule());

  CaptureStderr after;
  launch_with_host_pointer(&host_value);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  CHECK(count_of(after.text(), "which cudaMalloc did not return") == 1);  // given again
  CHECK(host_value == 1);
  simt::reset_for_tests();
}

TEST_CASE("reset_for_tests refuses to run inside a kernel") {
  simt::reset_for_tests();
  DeviceBuffer<int> out(4);
  resets_inside<<<1, 4>>>(out.get());
  CHECK(cudaDeviceSynchronize() == cudaErrorLaunchFailure);
  CHECK(simt::last_error_detail().find("reset_for_tests() inside a kernel") != std::string::npos);
  simt::reset_for_tests();
}
