// cudalab/compare.h: compares a kernel's output with the expected values and
// says what the pattern of errors suggests. Host-only.
//
// Tolerance is absolute plus relative (an absolute tolerance alone lets an
// all-zero output pass small expected values); NaN and Inf always fail.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace cudalab {

struct Tolerance {
  double atol = 1e-5;
  double rtol = 1e-5;

  // For values that are sums of `terms` float products of magnitude about
  // `term_scale`: float rounding grows with the number of terms, so the
  // absolute part does too. Errors a wrong kernel makes (a missing or doubled
  // product) are of the order of term_scale and stay far above it.
  static Tolerance for_sum(long long terms, double term_scale = 1.0);
  bool accepts(double got, double expected) const;
};

enum class ErrorPattern {
  none,              // all correct
  never_written,     // every element still holds the poison
  partly_unwritten,  // some elements still hold the poison
  boundary,          // only the last partial tile rows/columns are wrong
  transposed,        // the output equals the transpose of the expected one
  scattered,         // a few elements here and there
  everywhere,        // (nearly) every element is wrong
};

const char* to_string(ErrorPattern pattern);

struct Mismatch {
  std::size_t row = 0, col = 0;
  double got = 0, expected = 0;
};

struct Comparison {
  std::string name;  // e.g. "C"
  std::size_t rows = 0, cols = 0;
  std::size_t wrong = 0;       // elements outside the tolerance (incl. the next two)
  std::size_t unwritten = 0;   // still the poison pattern
  std::size_t non_finite = 0;  // NaN or Inf that is not the poison
  // Of those, NaNs whose bits say where they came from (CPU mode keeps them,
  // cudalab/buffer.h nan_origin): a guard zone's (a read past the end of a
  // buffer), and CPU mode's fill of shared memory (read where no thread wrote).
  std::size_t guard_nan = 0, shared_nan = 0;
  std::size_t first_nan_row = 0, first_nan_col = 0;  // the first non-finite one, with non_finite
  std::size_t wrong_zero = 0;                        // written, wrong, and exactly 0
  std::vector<Mismatch> first;                       // the first few, in row-major order
  ErrorPattern pattern = ErrorPattern::none;
  double max_abs_error = 0;
  // The unwritten elements are whole last rows and/or columns (a grid too
  // small), not positions here and there.
  bool unwritten_trailing = false;
  // With unwritten_trailing: how many last rows and last columns are wholly
  // unwritten (one: an off-by-one in a condition; more: a grid too small).
  std::size_t unwritten_last_rows = 0, unwritten_last_cols = 0;
  // Every unwritten element lies in a wholly unwritten row (or column): how
  // many such rows (columns), and the first. Bands of rows between written
  // ones are an index that steps past them, not a grid too small.
  std::size_t unwritten_rows = 0, unwritten_cols = 0, first_unwritten_row = 0, first_unwritten_col = 0;
  // The largest difference the tolerance accepts at the first element: for
  // a single value, what describe() says it was held to.
  double allowed = 0;

  bool ok() const { return wrong == 0; }
  // A single value (1 x 1: a sum, a maximum): its messages speak of the
  // value, not of elements, rows or columns.
  bool single() const { return rows * cols == 1; }
  // Several lines for the student: counts, first mismatches, likely cause
  // (not while a check collects its diagnosis: see cudalab/diagnosis.h).
  std::string describe() const;

 private:
  std::string describe_single() const;
};

struct CompareOptions {
  Tolerance tolerance;
  // Tile sizes the lab's kernels are likely to use; the classifier looks for
  // errors confined to a last partial tile of one of them.
  std::vector<int> tiles = {8, 16, 32, 64};
  std::size_t show = 5;  // mismatches to list
};

// got: the kernel's output, rows x cols, row-major; expected: the same shape.
Comparison compare(const std::string& name, const std::vector<float>& got,
                   const std::vector<double>& expected, std::size_t rows, std::size_t cols,
                   const CompareOptions& options = {});

}  // namespace cudalab
