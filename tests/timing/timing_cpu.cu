// cudalab::time_side_by_side against launchers that try to steer what it
// measures, run in CPU mode (simt) so that CI, which has no GPU, checks the
// rules the GPU timing relies on: every timed output verified against the
// reference's of the same round, whoever goes first.
#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "cudalab/catch.h"
#include "cudalab/timing.h"

namespace {

__global__ void add_kernel(const float* a, const float* b, float* c, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

constexpr int kN = 4096;

void add(const float* a, const float* b, float* c) {
  add_kernel<<<(kN + 255) / 256, 256>>>(a, b, c, kN);
}

struct Buffers {
  float *a = nullptr, *b = nullptr, *c = nullptr, *c_ref = nullptr;
  Buffers() {
    for (float** p : {&a, &b, &c, &c_ref})
      REQUIRE(cudaMalloc(reinterpret_cast<void**>(p), kN * sizeof(float)) == cudaSuccess);
  }
  ~Buffers() {
    for (float* p : {a, b, c, c_ref}) cudaFree(p);
  }
  cudalab::Timed timed() const {
    cudalab::Timed t;
    t.what = "add(n=4096)";
    t.inputs = {{a, kN}, {b, kN}};
    t.outputs = {{"c", c, c_ref, 1, kN, cudalab::Tolerance{}}};
    return t;
  }
};

cudalab::StopRule quick() {
  cudalab::StopRule rule;
  rule.min_samples = 4;
  rule.max_samples = 6;
  rule.budget_s = 5;
  return rule;
}

}  // namespace

TEST_CASE("an honest launcher is timed and its outputs pass") {
  Buffers buf;
  const auto t = cudalab::time_side_by_side([&] { add(buf.a, buf.b, buf.c); },
                                            [&] { add(buf.a, buf.b, buf.c_ref); }, buf.timed(), quick());
  INFO(t.invalid);
  CHECK(t.valid());
  CHECK(t.ratio.n >= 4);
}

TEST_CASE("a launcher that zeroes its inputs and output when it goes first is caught") {
  // Rounds alternate who goes first, student first on even rounds: a kernel
  // that counts its calls knows which. Zeroing a, b and c there would make
  // the reference, run on the same buffers right after, compute zeros too.
  Buffers buf;
  int call = 0;
  const auto cheat = [&] {
    if (call++ % 2 == 0) {
      cudaMemset(buf.a, 0, kN * sizeof(float));
      cudaMemset(buf.b, 0, kN * sizeof(float));
      cudaMemset(buf.c, 0, kN * sizeof(float));
    } else {
      add(buf.a, buf.b, buf.c);
    }
  };
  const auto t = cudalab::time_side_by_side(
      cheat, [&] { add(buf.a, buf.b, buf.c_ref); }, buf.timed(), quick());
  CHECK_FALSE(t.valid());
  CHECK_THAT(t.invalid, Catch::Contains("was wrong at c["));
}

namespace {

// c = a + b, except the last element: right everywhere else, wrong here.
__global__ void add_but_last_kernel(const float* a, const float* b, float* c, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n - 1) c[i] = a[i] + b[i];
  if (i == n - 1) c[i] = a[i];
}

}  // namespace

TEST_CASE("a launcher wrong from the first timed run is told its output is wrong at the timed shape") {
  Buffers buf;
  const auto wrong = [&] { add_but_last_kernel<<<(kN + 255) / 256, 256>>>(buf.a, buf.b, buf.c, kN); };
  const auto t = cudalab::time_side_by_side(
      wrong, [&] { add(buf.a, buf.b, buf.c_ref); }, buf.timed(), quick());
  CHECK_FALSE(t.valid());
  CHECK_THAT(t.invalid, Catch::Contains("the output of timed run 1 (a warm-up run) was wrong at c[4095]"));
  CHECK_THAT(t.invalid, Catch::Contains("1 of 4096 elements wrong"));
  CHECK_THAT(t.invalid, Catch::Contains("judged like a correctness check's shapes"));
  CHECK_THAT(t.invalid, !Catch::Contains("cached"));
}

TEST_CASE(
    "a launcher that skips the work when called again with the same pointers is told it wrote nothing") {
  // As a memoized kernel meets the speed checks: the correctness checks (or
  // any earlier call) ran it once with these buffers; every timed call skips.
  Buffers buf;
  int call = 0;
  const auto memoized = [&] {
    if (call++ == 0) add(buf.a, buf.b, buf.c);
  };
  memoized();  // the earlier call
  const auto t = cudalab::time_side_by_side(
      memoized, [&] { add(buf.a, buf.b, buf.c_ref); }, buf.timed(), quick());
  CHECK_FALSE(t.valid());
  CHECK_THAT(t.invalid, Catch::Contains("the output of timed run 1 (a warm-up run) was wrong"));
  CHECK_THAT(t.invalid, Catch::Contains("wrote nothing to c"));
  CHECK_THAT(t.invalid, Catch::Contains("cached from an earlier call"));
}

TEST_CASE("a launcher that caches its first answer is caught by the fresh inputs") {
  Buffers buf;
  int call = 0;
  const auto cache = [&] {
    if (call++ == 0) add(buf.a, buf.b, buf.c);
  };
  const auto t = cudalab::time_side_by_side(
      cache, [&] { add(buf.a, buf.b, buf.c_ref); }, buf.timed(), quick());
  CHECK_FALSE(t.valid());
  CHECK_THAT(t.invalid, Catch::Contains("cached"));
}

namespace {

// One thread adds them all: a one-value output, as lab 05's sum.
__global__ void sum_kernel(const float* a, float* out, int n) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  float s = 0;
  for (int i = 0; i < n; ++i) s += a[i];
  *out = s;
}

}  // namespace

TEST_CASE("a wrong single value is named as the value, without elements, rows or columns") {
  Buffers buf;  // a as the input, c[0] and c_ref[0] as the outputs
  cudalab::Timed timed;
  timed.what = "sum(n=4096)";
  timed.inputs = {{buf.a, kN}};
  timed.outputs = {{"out", buf.c, buf.c_ref, 1, 1, cudalab::Tolerance{1e-3, 0}}};
  int call = 0;
  const auto cache = [&] {
    if (call++ == 0) sum_kernel<<<1, 1>>>(buf.a, buf.c, kN);
  };
  const auto t = cudalab::time_side_by_side(
      cache, [&] { sum_kernel<<<1, 1>>>(buf.a, buf.c_ref, kN); }, timed, quick());
  CHECK_FALSE(t.valid());
  CHECK_THAT(t.invalid, Catch::Contains("was wrong (out = "));
  CHECK_THAT(t.invalid, !Catch::Contains("element") && !Catch::Contains("out["));
}
