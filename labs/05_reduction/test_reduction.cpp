// Lab 5's checks. Each TEST_CASE is one graded check; lab.toml gives its
// points and thresholds. Run them with `./cudalab test 05_reduction`.
#include <fmt/format.h>

#include <cfloat>

#include "common/bandwidth.h"
#include "cudalab/testing.h"

// The student's launcher (labs/05_reduction/reduction.cu).
void reduce_sum(const float* in, float* out, int n);

// The reference and the foils, in namespace ref: compiled from solutions/ in
// the course repository, prebuilt (prebuilt/05_reduction/) in the student release.
namespace ref {
void reduce_sum(const float* in, float* out, int n);
void reduce_sum_interleaved(const float* in, float* out, int n);
void reduce_sum_sequential(const float* in, float* out, int n);
void reduce_sum_atomic(const float* in, float* out, int n);
}  // namespace ref

namespace {

using Launcher = void (*)(const float* in, float* out, int n);

// One element, less than a warp, lengths just past or short of a multiple of
// every block size (so a missing bound shows whatever BLOCK is), one larger
// than the L2 cache.
const std::vector<int> kRagged = {1, 31, 1000, (1 << 20) + 7};
// Multiples of 1024 (of any block, and of two elements per thread of up to
// 512 threads), up to 2^26 (256 MB: every block of the capped grid loops 64
// times). CPU mode skips 2^26.
const std::vector<int> kMultiples = {1024, 1 << 16, 1 << 20, 1 << 26};
constexpr int kSpeedLength = 1 << 26;
// Per element: 4 bytes read (the 4 bytes of out are nothing beside them).
constexpr double kBytesPerElement = 4;

// The tolerance of a sum of n floats drawn from [-1, 1). A kernel adds them
// in an order of its own, and each float addition rounds its result by up to
// 2^-24 of it, so the result is not the exact sum, and two correct kernels do
// not agree bit for bit. The order that errs most which a correct kernel may
// take is one element at a time (a loop, or an atomicAdd per element): its
// partial sums grow like a random walk, |S_k| ~ sqrt(k / 3), and its rounding
// errors add up to about 2^-24 * n / sqrt(18) = 1.4e-8 * n (one standard
// deviation); a tree's error is far smaller. The tolerance is
// 2 * FLT_EPSILON * n = 2.4e-7 * n, 17 such deviations: no correct kernel
// comes near it, whatever its order. Against the double-precision sum it is
// 2.4e-4 at n = 1000, 0.25 at 2^20 and 16 at 2^26, while the sum itself is
// of the order of sqrt(n / 3). So an element lost or counted twice (|x| up
// to 1) fails at the small lengths, a block's partial sum lost (a sum of
// hundreds of elements, of the order of 10 or more) at every length but the
// largest, and a value read past the end of `in` (the guard zone's bytes,
// -4.3e8 as a float) everywhere. A purely relative tolerance would not do:
// the sum of values of both signs may be near 0.
cudalab::Tolerance sum_tolerance(int n) {
  return {2.0 * FLT_EPSILON * n, 0.0};
}

// The exact sum, as far as double precision goes (its own error is below
// 1e-8 at 2^26).
double sum_cpu(const std::vector<float>& in) {
  double s = 0;
  for (float x : in) s += x;
  return s;
}

// Runs a sum launcher once on n seeded random floats in [-1, 1) and judges
// it: out compared with the exact sum, the guard zones and `in` checked, a
// wrong result run again on the same inputs (a race gives another one), an
// out that came back NaN tried once on an out set to 0 (a kernel that adds
// to out without setting it first).
bandwidth::Outcome run_sum(Launcher launcher, int n) {
  const std::vector<float> in_host = cudalab::random_floats(n, n);
  cudalab::Run run("reduce_sum", fmt::format("n={}", n));
  const float* in = run.input("in", in_host);
  float* out = run.output("out", 1);
  const auto launched = run.launch([&] { launcher(in, out, n); });
  return bandwidth::judge(run, launched, "out", {1, 1}, {sum_cpu(in_host)}, sum_tolerance(n));
}

std::vector<std::string> check_values(const std::vector<int>& lengths) {
  std::vector<std::string> failures;
  for (int n : lengths) {
    if (cudalab::too_big_for_sanitizer(n) || cudalab::too_big_for_cpu_mode(n)) continue;
    const auto o = run_sum(reduce_sum, n);
    if (!o.values_ok) failures.push_back(o.message);
    if (bandwidth::stop_after(o)) break;
  }
  return failures;
}

// The buffers of a timing at n = 2^26: `in`, and one float each for the
// student's out, the other launcher's and the foils'.
struct SpeedBuffers {
  bandwidth::Buffers input{{"in"}, kSpeedLength};
  bandwidth::Buffers outputs{{"out", "out_other", "out_foil"}, 1};
  const float* in() const { return input[0]; }
  float* out() const { return outputs[0]; }
  float* other() const { return outputs[1]; }
  float* foil() const { return outputs[2]; }
  // `in` rewritten with fresh values every round; out compared with other's.
  cudalab::Timed timed(const std::string& what) const {
    cudalab::Timed t;
    t.what = what;
    t.inputs = {{input[0], input.count}};
    t.outputs = {{"out", out(), other(), 1, 1, sum_tolerance(kSpeedLength)}};
    t.work = bandwidth::dram_work(kBytesPerElement * kSpeedLength);
    return t;
  }
};

// The student's reduce_sum timed side by side with `other` at n = 2^26:
// fresh inputs every round, every out verified against other's. Records the
// figures and returns other's time / the student's, or a negative value with
// the check failed (the output is wrong, or the timing invalid).
double time_against(const SpeedBuffers& b, Launcher other, const std::string& other_name) {
  const int n = kSpeedLength;
  // A speed counts only for a kernel whose output is right. In the grader's
  // runs the timing verifies every timed output itself (cudalab/replay.h).
  if (cudalab::replay::graded_timing()) {
  } else if (const auto o = run_sum(reduce_sum, n); !o.values_ok) {
    cudalab::require(false,
                     fmt::format("speed not measured: the output is wrong at n={}.\n{}", n, o.message));
    return -1;
  }
  const cudalab::Timed timed = b.timed(fmt::format("reduce_sum(n={})", n));
  const float* in = b.in();
  float *out = b.out(), *out_other = b.other();
  const auto t =
      cudalab::time_side_by_side([&] { reduce_sum(in, out, n); }, [&] { other(in, out_other, n); }, timed);
  const double bytes = kBytesPerElement * n;
  const double ratio = bandwidth::record_speed(t, bytes, other_name, n);
  if (ratio < 0) return ratio;
  cudalab::note(fmt::format("reduce_sum: {:.3f} ms, {}; the {} kernel: {:.3f} ms, {}.", t.student_ms.median,
                            bandwidth::describe_gbs(bandwidth::gbs(bytes, t.student_ms.median)), other_name,
                            t.reference_ms.median,
                            bandwidth::describe_gbs(bandwidth::gbs(bytes, t.reference_ms.median))));
  return ratio;
}

// A foil's speed against ref::reduce_sum's, briefly (the foil writes into
// its own buffer: the student's timing is over).
double foil_ratio(const SpeedBuffers& b, Launcher foil) {
  const int n = kSpeedLength;
  const float* in = b.in();
  float *out_foil = b.foil(), *out_other = b.other();
  return bandwidth::time_briefly([&] { foil(in, out_foil, n); }, [&] { ref::reduce_sum(in, out_other, n); },
                                 b.timed("").inputs)
      .ratio.median;
}

}  // namespace

TEST_CASE("sum is correct on lengths that are not multiples of the block") {
  const auto failures = check_values(kRagged);
  bandwidth::report(failures);
  // Where ragged lengths fail, one that is a multiple of the block too: the
  // leading diagnosis compares them (right there, wrong on the ragged ones:
  // a bound) and says so itself.
  if (!failures.empty() && !cudalab::context_lost()) run_sum(reduce_sum, 4096);
}

TEST_CASE("sum is correct on lengths that are multiples of the block up to 2^26") {
  bandwidth::report(check_values(kMultiples));
}

TEST_CASE("sum writes nothing outside out and leaves in unchanged") {
  for (int n : {1, 1000, (1 << 20) + 7}) {
    const auto o = run_sum(reduce_sum, n);
    if (!o.launched) cudalab::require(false, o.message);
    for (const auto& m : o.memory) cudalab::require(false, fmt::format("reduce_sum(n={}): {}", n, m));
    if (bandwidth::stop_after(o)) break;
  }
}

TEST_CASE("sum is faster than the naive interleaved reduction at 2^26 elements") {
  if (cudalab::speed_not_measurable()) return;
  const double need = cudalab::this_check().number("min_ratio");
  const SpeedBuffers b;
  const double ratio = time_against(b, ref::reduce_sum_interleaved, "naive");
  if (ratio < 0) return;
  // The reference against the same naive kernel: what the lab's steps buy.
  const float* in = b.in();
  float *out_foil = b.foil(), *out_other = b.other();
  const auto best = bandwidth::time_briefly([&] { ref::reduce_sum(in, out_foil, kSpeedLength); },
                                            [&] { ref::reduce_sum_interleaved(in, out_other, kSpeedLength); },
                                            b.timed("").inputs);
  cudalab::measure("reference_vs_naive_ratio", best.ratio.median, "x");
  cudalab::note(fmt::format(
      "For comparison, on this GPU: the reference solution runs at {:.2f}x the naive kernel's speed "
      "(ref::reduce_sum_interleaved: one element per thread, interleaved addressing, one block and one "
      "atomicAdd per 256 elements).",
      best.ratio.median));
  cudalab::require(
      ratio >= need,
      fmt::format("reduce_sum runs at {:.2f}x the speed of the naive reduction (one element per thread, "
                  "interleaved addressing); this check needs {:.2f}x. A kernel this close to the naive one "
                  "spends its time where the naive one does: in the tree's steps, once for every block of "
                  "one or two elements per thread, and in one atomicAdd per block. Let each thread add many "
                  "elements in a grid-stride loop before the tree (a grid capped at MAX_BLOCKS blocks), and "
                  "use sequential addressing in the tree (threadIdx.x < s, not threadIdx.x % (2 * s) == 0).",
                  ratio, need));
}

TEST_CASE("sum reaches the reference kernel's bandwidth at 2^26 elements") {
  if (cudalab::speed_not_measurable()) return;
  const double need = cudalab::this_check().number("min_ratio");
  const SpeedBuffers b;
  const double ratio = time_against(b, ref::reduce_sum, "reference");
  if (ratio < 0) return;
  // The foils, against the reference: each step the lab takes, undone.
  const double sequential = foil_ratio(b, ref::reduce_sum_sequential);
  const double interleaved = foil_ratio(b, ref::reduce_sum_interleaved);
  const double atomic = foil_ratio(b, ref::reduce_sum_atomic);
  cudalab::measure("sequential_ratio", sequential, "x");
  cudalab::measure("interleaved_ratio", interleaved, "x");
  cudalab::measure("atomic_ratio", atomic, "x");
  cudalab::note(fmt::format(
      "For comparison, on this GPU, against the reference: one element per thread with sequential "
      "addressing (ref::reduce_sum_sequential) {:.3f}x; the same with interleaved addressing "
      "(ref::reduce_sum_interleaved) {:.3f}x; an atomicAdd per element and no shared memory "
      "(ref::reduce_sum_atomic) {:.4f}x.",
      sequential, interleaved, atomic));
  cudalab::require(
      ratio >= need,
      fmt::format("reduce_sum runs at {:.2f}x the speed of the reference kernel; this check needs {:.2f}x. "
                  "On this GPU one element per thread with the reference's tree runs at {:.2f}x: a ratio "
                  "near that means the load phase gives each thread too little to add (one block per BLOCK "
                  "or 2 * BLOCK elements, a tree and an atomicAdd for each). Cap the grid at MAX_BLOCKS and "
                  "let a grid-stride loop add the rest in registers; keep its loads coalesced (consecutive "
                  "threads on consecutive elements, stepping by the whole grid) and the tree in sequential "
                  "addressing.",
                  ratio, need, sequential));
}
