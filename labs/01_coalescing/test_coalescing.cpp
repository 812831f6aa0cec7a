// Lab 1's checks. Each TEST_CASE is one graded check; lab.toml gives its
// points and thresholds. Run them with `./cudalab test 01_coalescing`.
#include <fmt/format.h>

#include "common/bandwidth.h"
#include "cudalab/parallel.h"
#include "cudalab/testing.h"

// The student's launchers (labs/01_coalescing/coalescing.cu).
void vector_add(const float* a, const float* b, float* c, int n);
void matrix_add(const float* A, const float* B, float* C, int rows, int cols);

// The references and the foils (uncoalesced on purpose), in namespace ref:
// compiled from solutions/ in the course repository, prebuilt
// (prebuilt/01_coalescing/) in the student release.
namespace ref {
void vector_add(const float* a, const float* b, float* c, int n);
void matrix_add(const float* A, const float* B, float* C, int rows, int cols);
void vector_add_chunked(const float* a, const float* b, float* c, int n);
void matrix_add_swapped(const float* A, const float* B, float* C, int rows, int cols);
}  // namespace ref

namespace {

using bandwidth::Shape;
using VectorLauncher = void (*)(const float* a, const float* b, float* c, int n);
using MatrixLauncher = void (*)(const float* A, const float* B, float* C, int rows, int cols);

// One element, less than a warp, lengths that are not multiples of the block,
// and 2^26 (768 MB moved: far more than any L2 cache holds).
const std::vector<int> kLengths = {1, 31, 1000, (1 << 20) + 7, 1 << 26};
// A single element, sizes that are not multiples of the 32 x 8 block, a tall
// thin matrix.
const std::vector<Shape> kShapes = {{1, 1}, {33, 65}, {1000, 1000}, {4097, 31}};
constexpr int kSpeedLength = 1 << 26;
const Shape kSpeedShape = {8192, 8192};

// Each element of the output is a sum of two floats.
const cudalab::Tolerance kTolerance = cudalab::Tolerance::for_sum(2);
// Per element: 4 bytes read from each input, 4 written.
constexpr double kBytesPerElement = 12;

struct Inputs {
  std::vector<float> a, b;
};

Inputs random_inputs(std::size_t count, std::uint64_t stream) {
  return {cudalab::random_floats(count, 2 * stream), cudalab::random_floats(count, 2 * stream + 1)};
}

std::uint64_t stream_of(Shape s) {
  return (static_cast<std::uint64_t>(s.rows) << 32) ^ s.cols;
}

// a + b in double precision; 2^26 of them in chunks on a few threads.
std::vector<double> add_cpu(const std::vector<float>& a, const std::vector<float>& b) {
  std::vector<double> c(a.size());
  cudalab::parallel_for(a.size(), 1 << 20, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) c[i] = static_cast<double>(a[i]) + b[i];
  });
  return c;
}

// Runs a vector add launcher once on n seeded random elements and judges it.
bandwidth::Outcome run_vector_add(VectorLauncher launcher, const std::string& name, int n) {
  const Inputs in = random_inputs(n, n);
  cudalab::Run run(name, fmt::format("n={}", n));
  const float* a = run.input("a", in.a);
  const float* b = run.input("b", in.b);
  float* c = run.output("c", n);
  const auto launched = run.launch([&] { launcher(a, b, c, n); });
  return bandwidth::judge(run, launched, "c", {1, n}, add_cpu(in.a, in.b), kTolerance,
                          [&](float* scratch) { ref::vector_add(a, b, scratch, n); });
}

bandwidth::Outcome run_matrix_add(MatrixLauncher launcher, const std::string& name, Shape s) {
  const Inputs in = random_inputs(s.count(), stream_of(s));
  cudalab::Run run(name, s.args());
  const float* A = run.input("A", in.a);
  const float* B = run.input("B", in.b);
  float* C = run.output("C", s.count());
  const auto launched = run.launch([&] { launcher(A, B, C, s.rows, s.cols); });
  return bandwidth::judge(run, launched, "C", s, add_cpu(in.a, in.b), kTolerance,
                          [&](float* scratch) { ref::matrix_add(A, B, scratch, s.rows, s.cols); });
}

// Fails the check for a launch that failed, and for every guard zone written
// or input changed.
void report_memory(const bandwidth::Outcome& o, const std::string& call) {
  if (!o.launched) cudalab::require(false, o.message);
  for (const auto& m : o.memory) cudalab::require(false, fmt::format("{}: {}", call, m));
}

}  // namespace

TEST_CASE("vector add is correct for lengths from 1 to 2^26 elements") {
  for (int n : kLengths) {
    if (cudalab::too_big_for_sanitizer(n) || cudalab::too_big_for_cpu_mode(n)) continue;
    const auto o = run_vector_add(vector_add, "vector_add", n);
    if (!o.values_ok) cudalab::require(false, o.message);
    if (bandwidth::stop_after(o)) break;
  }
}

TEST_CASE("matrix add is correct on ragged and rectangular shapes") {
  for (const Shape& s : kShapes) {
    const auto o = run_matrix_add(matrix_add, "matrix_add", s);
    if (!o.values_ok) cudalab::require(false, o.message);
    if (bandwidth::stop_after(o)) break;
  }
}

TEST_CASE("vector add and matrix add write nothing outside c and C and leave their inputs unchanged") {
  // Lengths and shapes whose last block reaches past the end of the data.
  for (int n : {1, 1000, (1 << 20) + 7}) {
    const auto o = run_vector_add(vector_add, "vector_add", n);
    report_memory(o, fmt::format("vector_add(n={})", n));
    if (bandwidth::stop_after(o)) break;
  }
  if (cudalab::context_lost()) return;
  for (const Shape& s : {Shape{1, 1}, Shape{33, 65}, Shape{4097, 31}}) {
    const auto o = run_matrix_add(matrix_add, "matrix_add", s);
    report_memory(o, fmt::format("matrix_add({})", s.args()));
    if (bandwidth::stop_after(o)) break;
  }
}

TEST_CASE("vector add reaches the reference kernel's bandwidth at 2^26 elements") {
  if (cudalab::speed_not_measurable()) return;
  const double need = cudalab::this_check().number("min_ratio");
  const int n = kSpeedLength;
  // A speed counts only for a kernel whose output is right.
  // In the grader's runs the timing verifies every timed output itself (cudalab/replay.h).
  if (cudalab::replay::graded_timing()) {
  } else if (const auto o = run_vector_add(vector_add, "vector_add", n); !o.values_ok) {
    cudalab::require(false,
                     fmt::format("speed not measured: the output is wrong at n={}.\n{}", n, o.message));
    return;
  }
  // The timing writes fresh inputs before every round and checks every c
  // against the reference's c of the same round.
  bandwidth::Buffers buf({"a", "b", "c", "c_reference", "c_chunked"}, n);
  const float *a = buf[0], *b = buf[1];
  float *c = buf[2], *c_ref = buf[3], *c_foil = buf[4];
  const double bytes = kBytesPerElement * n;
  cudalab::Timed timed;
  timed.what = fmt::format("vector_add(n={})", n);
  timed.inputs = {{buf[0], buf.count}, {buf[1], buf.count}};
  timed.outputs = {{"c", c, c_ref, 1, buf.count, kTolerance}};
  timed.work = bandwidth::dram_work(bytes);
  const auto t = cudalab::time_side_by_side([&] { vector_add(a, b, c, n); },
                                            [&] { ref::vector_add(a, b, c_ref, n); }, timed);
  const double ratio = bandwidth::record_speed(t, bytes, "reference", bytes / kBytesPerElement);
  if (ratio < 0) return;
  cudalab::note(fmt::format("vector_add: {:.3f} ms, {}; the reference kernel: {}.", t.student_ms.median,
                            bandwidth::describe_gbs(bandwidth::gbs(bytes, t.student_ms.median)),
                            bandwidth::describe_gbs(bandwidth::gbs(bytes, t.reference_ms.median))));

  // The foil: the same sum with each thread adding a contiguous chunk of its own.
  const auto foil = bandwidth::time_briefly([&] { ref::vector_add_chunked(a, b, c_foil, n); },
                                            [&] { ref::vector_add(a, b, c_ref, n); }, timed.inputs);
  cudalab::measure("chunked_ratio", foil.ratio.median, "x");
  cudalab::note(
      fmt::format("For comparison, on this GPU: each thread adding a contiguous chunk of its own "
                  "(ref::vector_add_chunked) runs at {:.3f}x the reference's speed, {}.",
                  foil.ratio.median, bandwidth::describe_gbs(bandwidth::gbs(bytes, foil.student_ms.median))));

  cudalab::require(ratio >= need,
                   fmt::format("vector_add runs at {:.2f}x the speed of the reference kernel; this "
                               "check needs {:.2f}x. Do consecutive threads (consecutive threadIdx.x) "
                               "add consecutive elements? If each thread walks through a chunk of its "
                               "own, or indices are multiplied by a stride, the 32 loads of a warp "
                               "touch up to 32 sectors of memory instead of 4: the accesses are not "
                               "coalesced.",
                               ratio, need));
}

TEST_CASE("matrix add reaches the reference kernel's bandwidth at 8192x8192") {
  if (cudalab::speed_not_measurable()) return;
  const double need = cudalab::this_check().number("min_ratio");
  const Shape s = kSpeedShape;
  // In the grader's runs the timing verifies every timed output itself (cudalab/replay.h).
  if (cudalab::replay::graded_timing()) {
  } else if (const auto o = run_matrix_add(matrix_add, "matrix_add", s); !o.values_ok) {
    cudalab::require(false,
                     fmt::format("speed not measured: the output is wrong at {}.\n{}", s.str(), o.message));
    return;
  }
  bandwidth::Buffers buf({"A", "B", "C", "C_reference", "C_swapped"}, s.count());
  const float *A = buf[0], *B = buf[1];
  float *C = buf[2], *C_ref = buf[3], *C_foil = buf[4];
  const double bytes = kBytesPerElement * static_cast<double>(s.count());
  cudalab::Timed timed;
  timed.what = fmt::format("matrix_add({})", s.args());
  timed.inputs = {{buf[0], buf.count}, {buf[1], buf.count}};
  timed.outputs = {
      {"C", C, C_ref, static_cast<std::size_t>(s.rows), static_cast<std::size_t>(s.cols), kTolerance}};
  timed.work = bandwidth::dram_work(bytes);
  const auto t = cudalab::time_side_by_side([&] { matrix_add(A, B, C, s.rows, s.cols); },
                                            [&] { ref::matrix_add(A, B, C_ref, s.rows, s.cols); }, timed);
  const double ratio = bandwidth::record_speed(t, bytes, "reference", bytes / kBytesPerElement);
  if (ratio < 0) return;
  cudalab::note(fmt::format("matrix_add: {:.3f} ms, {}; the reference kernel: {}.", t.student_ms.median,
                            bandwidth::describe_gbs(bandwidth::gbs(bytes, t.student_ms.median)),
                            bandwidth::describe_gbs(bandwidth::gbs(bytes, t.reference_ms.median))));

  // The foil: the reference with row and column swapped in the thread mapping.
  const auto foil =
      bandwidth::time_briefly([&] { ref::matrix_add_swapped(A, B, C_foil, s.rows, s.cols); },
                              [&] { ref::matrix_add(A, B, C_ref, s.rows, s.cols); }, timed.inputs);
  cudalab::measure("swapped_ratio", foil.ratio.median, "x");
  cudalab::note(fmt::format(
      "For comparison, on this GPU: the reference with row and column swapped, threadIdx.x "
      "running down a column (ref::matrix_add_swapped, 32 x 8 blocks), runs at {:.3f}x its speed, {}.",
      foil.ratio.median, bandwidth::describe_gbs(bandwidth::gbs(bytes, foil.student_ms.median))));

  cudalab::require(ratio >= need,
                   fmt::format("matrix_add runs at {:.2f}x the speed of the reference kernel; this "
                               "check needs {:.2f}x. Does threadIdx.x run along a row (the column "
                               "index)? If it runs down a column, the 32 floats a warp touches are "
                               "cols * 4 bytes apart and need 32 sectors of memory instead of 4. With "
                               "BLOCK_X = 32, each warp covers 32 consecutive floats of one row.",
                               ratio, need));
}
