// Lab 2's checks. Each TEST_CASE is one graded check; lab.toml gives its
// points and thresholds. Run them with `./cudalab test 02_naive_matmul`.
#include <fmt/format.h>

#include "common/matmul.h"
#include "cudalab/testing.h"

// The student's launcher (labs/02_naive_matmul/matmul_naive.cu).
void matmul_naive(const float* A, const float* B, float* C, int M, int N, int K);

// The reference, in namespace ref: compiled from solutions/ in the course
// repository, prebuilt (prebuilt/02_naive_matmul/) in the student release.
namespace ref {
void matmul_naive(const float* A, const float* B, float* C, int M, int N, int K);
}  // namespace ref

namespace {

using matmul::Shape;

const std::vector<Shape> kSquare = {{16, 16, 16}, {64, 64, 64}, {256, 256, 256}, {512, 512, 512}};
// M != N != K, sizes that are not multiples of the block, and a single element.
const std::vector<Shape> kRagged = {{1, 1, 1},       {17, 33, 9},      {31, 17, 47},
                                    {513, 257, 129}, {2047, 129, 513}, {1000, 1000, 1000}};
const Shape kSpeedShape = {2048, 2048, 2048};

void report(const std::vector<std::string>& failures) {
  for (const auto& f : failures) cudalab::require(false, f);
}

}  // namespace

TEST_CASE("naive matmul is correct on square matrices") {
  report(matmul::check_values(matmul_naive, "matmul_naive", kSquare, ref::matmul_naive));
}

TEST_CASE("naive matmul is correct on ragged and rectangular shapes") {
  report(matmul::check_values(matmul_naive, "matmul_naive", kRagged, ref::matmul_naive));
}

TEST_CASE("naive matmul writes nothing outside C and leaves A and B unchanged") {
  for (const Shape& s : {Shape{17, 33, 9}, Shape{513, 257, 129}, Shape{64, 64, 64}}) {
    const auto o = matmul::run_and_check(matmul_naive, "matmul_naive", s, ref::matmul_naive);
    if (!o.launched) cudalab::require(false, o.message);
    for (const auto& m : o.memory) cudalab::require(false, fmt::format("matmul_naive({}): {}", s.args(), m));
    if (cudalab::context_lost()) break;
  }
}

TEST_CASE("naive matmul reaches the reference naive kernel's speed at 2048x2048x2048") {
  const double need = cudalab::this_check().number("min_ratio");
  const double ratio = matmul::speed_ratio(matmul_naive, "matmul_naive", ref::matmul_naive, "reference",
                                           kSpeedShape, ref::matmul_naive);
  if (ratio < 0) return;
  cudalab::require(ratio >= need,
                   fmt::format("matmul_naive runs at {:.2f}x the speed of the reference naive kernel; "
                               "this check needs {:.2f}x. Does threadIdx.x run along a row of C "
                               "(the column index)? If it runs down a column, the reads of B and "
                               "the writes of C are not coalesced.",
                               ratio, need));
}
