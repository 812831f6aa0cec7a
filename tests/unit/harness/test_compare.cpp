#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "cudalab/catch.h"
#include "cudalab/compare.h"
#include "testbed.h"

using namespace cudalab;

namespace {

std::vector<double> ramp(std::size_t n) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = 1.0 + 0.25 * static_cast<double>(i % 97);
  return v;
}

std::vector<float> as_float(const std::vector<double>& v) {
  return {v.begin(), v.end()};
}

}  // namespace

TEST_CASE("An exact copy of the expected values passes", "[compare][harness]") {
  const auto e = ramp(33 * 65);
  const auto c = compare("C", as_float(e), e, 33, 65);
  CHECK(c.ok());
  CHECK(c.pattern == ErrorPattern::none);
}

TEST_CASE("An all-zero output fails even though every difference is small in absolute terms",
          "[compare][harness]") {
  std::vector<double> e(100, 1e-3);
  const auto c = compare("C", std::vector<float>(100, 0.f), e, 10, 10);
  CHECK_FALSE(c.ok());
  CHECK(c.wrong == 100);
}

TEST_CASE("NaN and Inf in the output are always wrong", "[compare][harness]") {
  auto e = ramp(16);
  auto g = as_float(e);
  g[3] = std::nanf("");
  g[7] = INFINITY;
  const auto c = compare("C", g, e, 4, 4);
  CHECK(c.wrong == 2);
  CHECK(c.non_finite == 2);
}

TEST_CASE("An output that was never written is classified as such", "[compare][harness]") {
  const auto e = ramp(64);
  const auto c = compare("C", std::vector<float>(64, testbed::poison()), e, 8, 8);
  CHECK(c.pattern == ErrorPattern::never_written);
  CHECK(c.unwritten == 64);
  CHECK_THAT(c.describe(), Catch::Contains("launch"));
}

TEST_CASE("Cells left unwritten at the edge point at the grid computation", "[compare][harness]") {
  const std::size_t rows = 20, cols = 20;
  const auto e = ramp(rows * cols);
  auto g = as_float(e);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 16; j < cols; ++j) g[i * cols + j] = testbed::poison();
  const auto c = compare("C", g, e, rows, cols);
  CHECK(c.pattern == ErrorPattern::partly_unwritten);
  CHECK_THAT(c.describe(), Catch::Contains("ceiling division"));
}

TEST_CASE("Errors only in the last partial tile are classified as a boundary problem", "[compare][harness]") {
  const std::size_t rows = 40, cols = 37;  // partial tiles of 16: rows 32.., cols 32..
  const auto e = ramp(rows * cols);
  auto g = as_float(e);
  g[35 * cols + 3] += 1.0f;
  g[5 * cols + 33] += 1.0f;
  const auto c = compare("C", g, e, rows, cols);
  CHECK(c.pattern == ErrorPattern::boundary);
  CHECK_THAT(c.describe(), Catch::Contains("boundary"));
}

TEST_CASE("A transposed square output is recognised", "[compare][harness]") {
  const std::size_t n = 9;
  std::vector<double> e(n * n);
  for (std::size_t i = 0; i < n * n; ++i) e[i] = static_cast<double>(i);
  std::vector<float> g(n * n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) g[i * n + j] = static_cast<float>(e[j * n + i]);
  const auto c = compare("out", g, e, n, n);
  CHECK(c.pattern == ErrorPattern::transposed);
}

TEST_CASE("A few wrong elements in full tiles look like a race", "[compare][harness]") {
  const std::size_t n = 64;
  const auto e = ramp(n * n);
  auto g = as_float(e);
  g[5 * n + 5] += 2;
  g[17 * n + 40] -= 3;
  const auto c = compare("C", g, e, n, n);
  CHECK(c.pattern == ErrorPattern::scattered);
  CHECK_THAT(c.describe(), Catch::Contains("__syncthreads"));
}

TEST_CASE("When every element is wrong the pattern says so", "[compare][harness]") {
  const auto e = ramp(100);
  auto g = as_float(e);
  for (auto& x : g) x += 1;
  CHECK(compare("C", g, e, 10, 10).pattern == ErrorPattern::everywhere);
}

TEST_CASE("The report lists the first mismatches with their coordinates", "[compare][harness]") {
  const auto e = ramp(30);
  auto g = as_float(e);
  g[13] = -5.f;  // row 1, col 3 of a 3 x 10 matrix
  const auto c = compare("C", g, e, 3, 10);
  REQUIRE(c.first.size() == 1);
  CHECK(c.first[0].row == 1);
  CHECK(c.first[0].col == 3);
  CHECK_THAT(c.describe(), Catch::Contains("C[1][3] = -5"));
  CHECK_THAT(c.describe(), Catch::Contains("1 of 30 elements are wrong"));
}

TEST_CASE("The sum tolerance grows with the number of terms but stays far below one wrong term",
          "[compare][harness]") {
  const auto t1 = Tolerance::for_sum(1), t2048 = Tolerance::for_sum(2048);
  CHECK(t2048.atol > t1.atol);
  CHECK(t2048.atol < 0.01);
  CHECK(t2048.accepts(10.0 + 1e-4, 10.0));
  CHECK_FALSE(t2048.accepts(10.0 + 0.05, 10.0));
  CHECK_FALSE(t1.accepts(NAN, 1.0));
}

TEST_CASE("Bands of whole rows never written between written ones are counted as such",
          "[compare][harness]") {
  // The row index with blockDim.x (32) where blockDim.y (8) belongs: rows 8
  // to 31 of each 32 are never written.
  const std::size_t rows = 33, cols = 65;
  const auto e = ramp(rows * cols);
  auto g = as_float(e);
  for (std::size_t i = 8; i < 32; ++i)
    for (std::size_t j = 0; j < cols; ++j) g[i * cols + j] = testbed::poison();
  auto c = compare("C", g, e, rows, cols);
  CHECK_FALSE(c.unwritten_trailing);
  CHECK(c.unwritten_rows == 24);
  CHECK(c.first_unwritten_row == 8);
  CHECK(c.unwritten_cols == 0);
  // One more unwritten element outside the bands: not whole rows any more.
  g[0] = testbed::poison();
  c = compare("C", g, e, rows, cols);
  CHECK(c.unwritten_rows == 0);
}

namespace {

// No word of a matrix or vector in a message about a single value.
bool speaks_of_the_value_only(const std::string& s) {
  for (const char* w : {"element", "row", "column", "[0]", "1 x 1", "x 1)"})
    if (s.find(w) != std::string::npos) return false;
  return true;
}

}  // namespace

TEST_CASE("A single value is described as the value, without elements, rows or columns",
          "[compare][harness]") {
  CompareOptions o;
  o.tolerance = {0.01, 0};
  const auto wrong = compare("out", {11.0f}, {12.5}, 1, 1, o);
  CHECK(wrong.single());
  CHECK_FALSE(wrong.ok());
  INFO(wrong.describe());
  CHECK_THAT(wrong.describe(),
             Catch::Contains("out = 11, expected 12.5: 1.5 too small (the tolerance here is 0.01)"));
  CHECK_THAT(wrong.describe(), Catch::Contains("Likely cause: out is one value computed from many"));
  CHECK(speaks_of_the_value_only(wrong.describe()));

  const auto unwritten = compare("out", {testbed::poison()}, {3.0}, 1, 1, o);
  CHECK(unwritten.pattern == ErrorPattern::never_written);
  CHECK_THAT(unwritten.describe(), Catch::StartsWith("out was never written"));
  CHECK(speaks_of_the_value_only(unwritten.describe()));

  const auto nan = compare("out", {NAN}, {3.0}, 1, 1, o);
  CHECK_THAT(nan.describe(), Catch::StartsWith("out = NaN (expected 3)"));

  const auto right = compare("out", {12.505f}, {12.5}, 1, 1, o);
  CHECK(right.ok());
  CHECK(right.describe() == "out is right");
  // A vector of one element is the same thing: one value.
  CHECK(compare("c", {1.0f}, {2.0}, 1, 1, o).single());
  CHECK_FALSE(compare("c", {1.0f, 2.0f}, {1.0, 2.0}, 1, 2, o).single());
}

TEST_CASE("A comparison split over threads counts and lists what one pass over the elements would",
          "[compare][harness]") {
  // Three chunks of the comparison and a tail; errors on both sides of each
  // boundary, NaNs first in a later chunk, unwritten ones at the end.
  const std::size_t chunk = std::size_t{1} << 20, n = 3 * chunk + 17;
  const std::vector<double> e = ramp(n);
  std::vector<float> got = as_float(e);
  for (std::size_t i : {chunk - 1, chunk, 2 * chunk - 2, 2 * chunk + 5, 3 * chunk}) got[i] += 1.0f;
  got[chunk + 3] = 0.0f;
  got[2 * chunk + 1] = std::nanf("");
  got[3 * chunk + 2] = INFINITY;
  got[n - 1] = testbed::poison();
  got[n - 2] = testbed::poison();
  // The serial pass over the same elements.
  Tolerance tol;
  std::size_t wrong = 0, unwritten = 0, non_finite = 0, first_nan = 0, wrong_zero = 0;
  double max_abs = 0;
  std::vector<std::size_t> first;
  for (std::size_t i = 0; i < n; ++i) {
    if (is_poison(got[i])) {
      ++unwritten;
    } else if (!std::isfinite(got[i])) {
      if (non_finite++ == 0) first_nan = i;
    } else if (tol.accepts(got[i], e[i])) {
      continue;
    } else {
      max_abs = std::max(max_abs, std::fabs(got[i] - e[i]));
      wrong_zero += got[i] == 0;
    }
    if (wrong++ < 5) first.push_back(i);
  }
  const auto c = compare("C", got, e, 1, n);
  CHECK(c.wrong == wrong);
  CHECK(c.wrong == 10);
  CHECK(c.unwritten == unwritten);
  CHECK(c.non_finite == non_finite);
  CHECK(c.first_nan_col == first_nan);
  CHECK(c.wrong_zero == wrong_zero);
  CHECK(c.max_abs_error == max_abs);
  REQUIRE(c.first.size() == first.size());
  for (std::size_t k = 0; k < first.size(); ++k) {
    CHECK(c.first[k].col == first[k]);
    CHECK(c.first[k].expected == e[first[k]]);
  }
  CHECK(c.pattern == ErrorPattern::partly_unwritten);
}

TEST_CASE("A large square output transposed is named so, split over threads", "[compare][harness]") {
  const std::size_t side = 1500;  // more elements than one chunk, rows not a power of two
  std::vector<double> e(side * side);
  for (std::size_t i = 0; i < e.size(); ++i) e[i] = static_cast<double>(i % 1009) * 0.5;
  std::vector<float> got(e.size());
  for (std::size_t i = 0; i < side; ++i)
    for (std::size_t j = 0; j < side; ++j) got[i * side + j] = static_cast<float>(e[j * side + i]);
  const auto c = compare("C", got, e, side, side);
  CHECK_FALSE(c.ok());
  CHECK(c.pattern == ErrorPattern::transposed);
}
