// course/include/common/matmul.h: the matrix-multiplication checks of labs 02 and 03.
//
// A launcher is run on seeded random inputs in [-1, 1) on guarded buffers.
// Small shapes are checked against a double-precision CPU product; shapes too
// big for the CPU to multiply quickly are checked against the reference
// kernel's output on the GPU (itself checked against the CPU by the
// framework's own tests).
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "cudalab/diagnosis.h"
#include "cudalab/evidence.h"
#include "cudalab/replay.h"
#include "cudalab/testing.h"

namespace matmul {

// The labs' contract: C (M x N) = A (M x K) . B (K x N), row-major, device pointers.
using Launcher = void (*)(const float* A, const float* B, float* C, int M, int N, int K);

struct Shape {
  int M, N, K;
  std::string str() const { return fmt::format("{}x{}x{}", M, N, K); }
  std::string args() const { return fmt::format("M={} N={} K={}", M, N, K); }
  long long flops() const { return 2LL * M * N * K; }
};

// Shapes up to this many multiply-adds are checked against the CPU.
inline constexpr long long kCpuLimit = 1LL << 28;

// C = A . B in double precision; big products split their rows over the
// CPU's cores (1000^3 in CPU mode, where it replaces the simulated reference).
// terms >= 0: only the first `terms` products of each sum (A is still M x K).
inline std::vector<double> matmul_cpu(const std::vector<float>& A, const std::vector<float>& B, int M, int N,
                                      int K, int terms = -1) {
  const int upto = terms < 0 ? K : std::min(terms, K);
  std::vector<double> C(static_cast<std::size_t>(M) * N, 0.0);
  const auto rows = [&](int begin, int end) {
    for (int i = begin; i < end; ++i)
      for (int k = 0; k < upto; ++k) {
        const double a = A[static_cast<std::size_t>(i) * K + k];
        const float* b = &B[static_cast<std::size_t>(k) * N];
        double* c = &C[static_cast<std::size_t>(i) * N];
        for (int j = 0; j < N; ++j) c[j] += a * b[j];
      }
  };
  const long long work = static_cast<long long>(M) * N * upto;
  const int threads = work < (1LL << 24) ? 1
                                         : std::clamp(static_cast<int>(std::thread::hardware_concurrency()),
                                                      1, std::min(M, 16));
  // Thread t multiplies rows [first(t), first(t + 1)); this one takes t = 0.
  const auto first = [&](int t) { return static_cast<int>(static_cast<long long>(M) * t / threads); };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(rows, first(t), first(t + 1));
  rows(first(0), first(1));
  for (auto& th : pool) th.join();
  return C;
}

struct Inputs {
  std::vector<float> A, B;
};

inline Inputs random_inputs(Shape s) {
  const std::uint64_t stream =
      (static_cast<std::uint64_t>(s.M) << 42) ^ (static_cast<std::uint64_t>(s.N) << 21) ^ s.K;
  return {cudalab::random_floats(static_cast<std::size_t>(s.M) * s.K, 2 * stream),
          cudalab::random_floats(static_cast<std::size_t>(s.K) * s.N, 2 * stream + 1)};
}

struct Outcome {
  bool launched = false;
  bool values_ok = false;
  std::string message;              // why values_ok is false
  std::vector<std::string> memory;  // guard zones written, inputs changed
  cudalab::Comparison comparison;
};

// The expected C: from the CPU for small shapes, else from `reference` on the
// GPU. In CPU mode always from the CPU: there the reference kernel would run
// on simulated threads, slower than the CPU's own product. So too in the
// grader's runs, which write evidence: a submission's process has no
// reference to run (cudalab::reference_linked()), and the reference's own run
// must compare the same outputs the same way, launch for launch.
inline std::vector<double> expected_c(const Inputs& in, Shape s, Launcher reference) {
  if (cudalab::cpu_mode() || !cudalab::reference_linked() || cudalab::evidence::enabled() ||
      static_cast<long long>(s.M) * s.N * s.K <= kCpuLimit)
    return matmul_cpu(in.A, in.B, s.M, s.N, s.K);
  cudalab::Run run("reference matmul", s.args());
  const float* A = run.input("A", in.A);
  const float* B = run.input("B", in.B);
  float* C = run.output("C", static_cast<std::size_t>(s.M) * s.N);
  const auto launched = run.launch([&] { reference(A, B, C, s.M, s.N, s.K); });
  if (!launched.ok) throw std::runtime_error("the reference kernel failed: " + launched.message);
  return cudalab::to_double(run.result("C"));
}

// Where C is wrong and K is not a multiple of a tile: is C exactly the
// product over K rounded down to that multiple (a loop over K that stops
// before its last, partial tile)? Tells the diagnosis, for the sizes a tile
// may have; shapes too big to multiply again in a moment are not tested.
inline void note_short_k_loop(const Inputs& in, Shape s, const std::vector<float>& got,
                              const std::string& label) {
  if (!cudalab::diagnosis::collecting()) return;
  const cudalab::Tolerance tolerance = cudalab::Tolerance::for_sum(s.K);
  std::vector<long long> tiles;
  bool tested = false;
  for (const int tile : {8, 16, 32, 64}) {
    if (s.K % tile == 0) continue;
    const int terms = s.K / tile * tile;
    if (static_cast<long long>(s.M) * s.N * std::max(terms, 1) > (1LL << 26)) return;  // too dear: not tested
    tested = true;
    const std::vector<double> partial = matmul_cpu(in.A, in.B, s.M, s.N, s.K, terms);
    bool same = got.size() == partial.size();
    for (std::size_t i = 0; same && i < got.size(); ++i) same = tolerance.accepts(got[i], partial[i]);
    if (same) tiles.push_back(tile);
  }
  if (tested) cudalab::diagnosis::loop_stops_short(label, "K", tiles);
}

// Runs `launcher` (named `name` in messages) once on shape s and checks it.
inline Outcome run_and_check(Launcher launcher, const std::string& name, Shape s, Launcher reference) {
  Outcome out;
  const Inputs in = random_inputs(s);
  cudalab::Run run(name, s.args());
  const float* A = run.input("A", in.A);
  const float* B = run.input("B", in.B);
  float* C = run.output("C", static_cast<std::size_t>(s.M) * s.N);
  const auto launched = run.launch([&] { launcher(A, B, C, s.M, s.N, s.K); });
  if (!launched.ok) {
    out.message = launched.message;
    if (!launched.context_lost) out.memory = run.memory_problems();
    return out;
  }
  out.launched = true;
  out.memory = run.memory_problems();
  cudalab::CompareOptions options;
  options.tolerance = cudalab::Tolerance::for_sum(s.K);
  const std::vector<double> expected = expected_c(in, s, reference);
  out.comparison = cudalab::compare("C", run.result("C"), expected, s.M, s.N, options);
  out.values_ok = out.comparison.ok();
  if (!out.values_ok) out.message = fmt::format("{}({}): {}", name, s.args(), out.comparison.describe());
  if (!out.values_ok) note_short_k_loop(in, s, run.result("C"), fmt::format("{}({})", name, s.args()));
  // Wrong: the same inputs once more tell a race (different results) apart.
  if (!out.values_ok && out.comparison.unwritten < out.comparison.rows * out.comparison.cols)
    run.rerun_changed("C");
  // Whole last rows or columns missing: is the grid short, or does a bound
  // stop threads that ran? The reference's own launch tells.
  run.note_reference_launch(out.comparison, [&](float* scratch) { reference(A, B, scratch, s.M, s.N, s.K); });
  // All of it unwritten or NaN: right when C starts at 0 (C += into it)?
  const bool accumulates = run.check_accumulates(out.comparison, expected, options.tolerance);
  // Writing nothing outside C proves nothing for a launch that wrote nothing
  // (one that added to C did write it).
  if (out.comparison.unwritten == out.comparison.rows * out.comparison.cols && !accumulates)
    out.memory.push_back(cudalab::evidence::nothing_written("C", out.comparison.unwritten));
  return out;
}

// A student's CPU-mode stand-in for a shape left to the grader
// (cudalab::left_to_grader): every side divided by the same factor until the
// product fits, keeping which sides are equal and which are multiples of 16
// (a tile), since those decide a diagnosis (a width mixed up is right only
// where the sides it mixes are equal; a missing bound only where a side is
// ragged), and small enough (2^21 multiply-adds) to cost a few hundredths of
// a second on simulated threads: 1000^3 runs as 125^3, 2047x129x513 as
// 511x33x129, 512^3 as 128^3. (At 2^23, 200^3 and 682x43x171, `--check
// ragged` took 1.48 s after an edit on two cores, worst 1.70 s.)
inline Shape cpu_stand_in(Shape s) {
  constexpr double kStandInWork = double(1 << 21);
  int f = 2;
  while (static_cast<double>(s.M / f) * (s.N / f) * (s.K / f) > kStandInWork) ++f;
  const auto side = [f](int v) {
    int w = std::max(1, v / f);
    if (v % 16 == 0) return std::max(16, w / 16 * 16);
    return w % 16 == 0 ? w + 1 : w;
  };
  return {side(s.M), side(s.N), side(s.K)};
}

// Checks the values at every shape; returns the failure messages.
inline std::vector<std::string> check_values(Launcher launcher, const std::string& name,
                                             const std::vector<Shape>& shapes, Launcher reference) {
  std::vector<std::string> failures, left;
  for (Shape s : shapes) {
    const double work = static_cast<double>(s.M) * s.N * s.K;
    if (cudalab::too_big_for_sanitizer(work)) continue;
    if (cudalab::left_to_grader(work)) {
      const Shape small = cpu_stand_in(s);
      left.push_back(fmt::format("{} as {}", s.str(), small.str()));
      const auto same = [&](const Shape& o) { return o.M == small.M && o.N == small.N && o.K == small.K; };
      if (std::any_of(shapes.begin(), shapes.end(), same)) continue;  // run as itself already
      s = small;
    }
    const Outcome o = run_and_check(launcher, name, s, reference);
    if (!o.values_ok) failures.push_back(o.message);
    if (cudalab::context_lost()) break;
  }
  cudalab::note_left_to_grader(left);
  return failures;
}

// Where the grader counts a kernel's global-memory traffic for the report's
// roofline (cudalab::traffic_of): one call in CPU mode at 128^3, with simt's
// access report counting the 32-byte sectors it requests. A matmul's
// traffic per FLOP hardly depends on the size once it spans a few tiles:
// the loads per FLOP are the same at any size (a 16 x 16 tiled kernel reads
// each element of A and B once per tile of 16 uses), and C's stores add 4
// bytes per 2K FLOP. The solutions counted 3.76 (tiled) and 0.496 (naive)
// FLOP/B at 128^3, 3.88 and 0.498 at 256^3, as 4K/(K+8) and K/(2K+2) say;
// 3.97 and 0.4995 at the timed 1024^3. At 128^3 each runs in half a second,
// instrumented, on simulated threads.
inline constexpr Shape kTrafficShape = {128, 128, 128};

// In a run that counts traffic: runs the kernel it names once at
// kTrafficShape (the launcher as "student", or other as other_name) and
// records the shape's work; a name it does not know runs nothing, so the
// grader finds no traffic_flops. True in such a run: the speed check does
// nothing else.
inline bool count_traffic(Launcher launcher, Launcher other, const std::string& other_name) {
  const std::string& who = cudalab::traffic_of();
  if (who.empty()) return false;
  const Launcher kernel = who == "student" ? launcher : who == other_name ? other : nullptr;
  if (kernel) {
    const Shape s = kTrafficShape;
    const Inputs in = random_inputs(s);
    cudalab::Run run(who, s.args());
    const float* A = run.input("A", in.A);
    const float* B = run.input("B", in.B);
    float* C = run.output("C", static_cast<std::size_t>(s.M) * s.N);
    if (run.launch([&] { kernel(A, B, C, s.M, s.N, s.K); }).ok) {
      cudalab::measure("traffic_flops", static_cast<double>(s.flops()), "FLOP");
      cudalab::measure("traffic_m", s.M);
      cudalab::measure("traffic_n", s.N);
      cudalab::measure("traffic_k", s.K);
    }
  }
  cudalab::speed_not_measurable();  // CPU mode: the check is "not run"
  return true;
}

// Times launcher against other at shape s, after checking the launcher's
// output there: a speed counts only for a kernel whose output is right.
// The timing gives both fresh inputs in every round and checks every output
// of the launcher against other's of the same round (other must compute the
// same product: the reference, the naive kernel), and fails the check if an
// output was wrong or the measured rate is above the GPU's FP32 peak.
// Records the measurements; returns the median ratio other/launcher (> 1:
// the launcher is faster), or a negative value if nothing was measured.
inline double speed_ratio(Launcher launcher, const std::string& name, Launcher other,
                          const std::string& other_name, Shape s, Launcher reference) {
  if (count_traffic(launcher, other, other_name) || cudalab::speed_not_measurable()) return -1;
  // In the grader's runs the replay's timing verifies the outputs (replay.h).
  const bool graded = cudalab::replay::graded_timing();
  const Outcome o = graded ? Outcome{} : run_and_check(launcher, name, s, reference);
  if (!graded && !o.values_ok) {
    cudalab::require(false,
                     fmt::format("speed not measured: the output is wrong at {}.\n{}", s.str(), o.message));
    return -1;
  }
  // No uploads: the timing writes the inputs itself, new ones every round.
  const std::size_t a_count = static_cast<std::size_t>(s.M) * s.K,
                    b_count = static_cast<std::size_t>(s.K) * s.N,
                    c_count = static_cast<std::size_t>(s.M) * s.N;
  cudalab::GuardedBuffer A("A", a_count, sizeof(float)), B("B", b_count, sizeof(float));
  cudalab::GuardedBuffer C1("C", c_count, sizeof(float)), C2("C2", c_count, sizeof(float));
  const float* a = static_cast<const float*>(A.data());
  const float* b = static_cast<const float*>(B.data());
  float* c1 = static_cast<float*>(C1.data());
  float* c2 = static_cast<float*>(C2.data());
  cudalab::Timed timed;
  timed.what = fmt::format("{}({})", name, s.args());
  timed.inputs = {{static_cast<float*>(A.data()), a_count}, {static_cast<float*>(B.data()), b_count}};
  timed.outputs = {{"C", c1, c2, static_cast<std::size_t>(s.M), static_cast<std::size_t>(s.N),
                    cudalab::Tolerance::for_sum(s.K)}};
  timed.work.flops = static_cast<double>(s.flops());
  const auto t = cudalab::time_side_by_side([&] { launcher(a, b, c1, s.M, s.N, s.K); },
                                            [&] { other(a, b, c2, s.M, s.N, s.K); }, timed);
  if (!t.valid()) {
    // No ratio recorded: the grader's partial credit reads it even from a failed check.
    cudalab::require(false, "speed not measured: " + t.invalid);
    return -1;
  }
  const auto& g = cudalab::gpu();
  const double gflops = s.flops() / (t.student_ms.median * 1e-3) / 1e9;
  cudalab::measure("student_ms", t.student_ms.median, "ms");
  cudalab::measure(other_name + "_ms", t.reference_ms.median, "ms");
  cudalab::measure("ratio", t.ratio.median, "x");
  cudalab::measure("gflops", gflops, "GFLOP/s");
  if (g.peak_fp32_gflops > 0) cudalab::measure("pct_peak_fp32", 100 * gflops / g.peak_fp32_gflops, "%");
  cudalab::measure("noise", 100 * t.ratio.rel_noise, "%");
  cudalab::measure("rounds", static_cast<double>(t.ratio.n));
  cudalab::chart_work(4.0 * (static_cast<double>(a_count) + b_count + c_count),
                      static_cast<double>(s.flops()));
  if (!t.remark.empty()) cudalab::note(t.remark);
  return t.ratio.median;
}

}  // namespace matmul
