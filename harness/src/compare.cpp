#include "cudalab/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>

#include "cudalab/buffer.h"
#include "cudalab/diagnosis.h"
#include "cudalab/evidence.h"
#include "cudalab/parallel.h"

namespace cudalab {

Tolerance Tolerance::for_sum(long long terms, double term_scale) {
  // Worst-case float rounding of a sum of n terms is about n * eps * scale;
  // 4x that leaves room for fused multiply-adds and any summation order.
  Tolerance t;
  t.atol = 4.0 * FLT_EPSILON * static_cast<double>(std::max(1LL, terms)) * term_scale;
  t.rtol = 1e-5;
  return t;
}

bool Tolerance::accepts(double got, double expected) const {
  if (!std::isfinite(got) || !std::isfinite(expected)) return false;
  return std::fabs(got - expected) <= atol + rtol * std::fabs(expected);
}

const char* to_string(ErrorPattern p) {
  switch (p) {
    case ErrorPattern::none:
      return "none";
    case ErrorPattern::never_written:
      return "never_written";
    case ErrorPattern::partly_unwritten:
      return "partly_unwritten";
    case ErrorPattern::boundary:
      return "boundary";
    case ErrorPattern::transposed:
      return "transposed";
    case ErrorPattern::scattered:
      return "scattered";
    case ErrorPattern::everywhere:
      return "everywhere";
  }
  return "?";
}

namespace {

// The last partial tile band, for the first tile size that confines all bad
// elements to it; 0 if none does.
struct Band {
  int tile = 0;
  std::size_t first_row = 0, first_col = 0;  // rows >= first_row or cols >= first_col
};

Band find_band(const std::vector<unsigned char>& bad, std::size_t rows, std::size_t cols,
               const std::vector<int>& tiles) {
  for (int t : tiles) {
    if (t <= 1) continue;
    const std::size_t rr = rows % t, cc = cols % t;
    if (rr == 0 && cc == 0) continue;
    const std::size_t r0 = rr ? rows - rr : rows, c0 = cc ? cols - cc : cols;
    // A matrix narrower than the tile is all partial tile: errors anywhere
    // would count as "confined" to it, which says nothing.
    if (r0 == 0 || c0 == 0) continue;
    bool confined = true;
    for (std::size_t i = 0; i < rows && confined; ++i)
      for (std::size_t j = 0; j < c0 && i < r0; ++j)
        if (bad[i * cols + j]) {
          confined = false;
          break;
        }
    if (confined) return {t, r0, c0};
  }
  return {};
}

std::string where(const Comparison& c, std::size_t row, std::size_t col) {
  if (c.rows == 1) return fmt::format("{}[{}]", c.name, col);
  return fmt::format("{}[{}][{}]", c.name, row, col);
}

std::string value(double v) {
  if (std::isnan(v)) return "NaN";
  return fmt::format("{:.6g}", v);
}

}  // namespace

namespace {

// Whether the poisoned elements are exactly whole last rows and/or columns;
// how many of each in last_rows and last_cols.
bool trailing_unwritten(const std::vector<float>& got, std::size_t rows, std::size_t cols,
                        std::size_t& last_rows, std::size_t& last_cols) {
  auto unwritten = [&](std::size_t i, std::size_t j) { return is_poison(got[i * cols + j]); };
  std::size_t r = rows, c = cols;  // rows >= r and cols >= c are wholly unwritten
  while (r > 0) {
    bool all = true;
    for (std::size_t j = 0; j < cols && all; ++j) all = unwritten(r - 1, j);
    if (!all) break;
    --r;
  }
  while (c > 0) {
    bool all = true;
    for (std::size_t i = 0; i < rows && all; ++i) all = unwritten(i, c - 1);
    if (!all) break;
    --c;
  }
  if (r == rows && c == cols) return false;
  for (std::size_t i = 0; i < r; ++i)
    for (std::size_t j = 0; j < c; ++j)
      if (unwritten(i, j)) return false;
  last_rows = rows - r;
  last_cols = cols - c;
  return true;
}

// Whether every poisoned element lies in a wholly poisoned row: how many
// such rows, and the first. With `by_cols`, the same for columns.
bool whole_lines_unwritten(const std::vector<float>& got, std::size_t rows, std::size_t cols, bool by_cols,
                           std::size_t& count, std::size_t& first) {
  const std::size_t lines = by_cols ? cols : rows, along = by_cols ? rows : cols;
  auto unwritten = [&](std::size_t line, std::size_t k) {
    return is_poison(by_cols ? got[k * cols + line] : got[line * cols + k]);
  };
  count = 0;
  for (std::size_t l = 0; l < lines; ++l) {
    std::size_t n = 0;
    for (std::size_t k = 0; k < along; ++k) n += unwritten(l, k);
    if (n != 0 && n != along) return false;
    if (n == along && count++ == 0) first = l;
  }
  return count > 0;
}

Comparison classify(const std::string& name, const std::vector<float>& got,
                    const std::vector<double>& expected, std::size_t rows, std::size_t cols,
                    const CompareOptions& options);

}  // namespace

Comparison compare(const std::string& name, const std::vector<float>& got,
                   const std::vector<double>& expected, std::size_t rows, std::size_t cols,
                   const CompareOptions& options) {
  // In a graded correctness check, the grader judges these same outputs again
  // outside the test process (cudalab/evidence.h).
  evidence::record_compared(name, got, expected, rows, cols, options);
  Comparison c = classify(name, got, expected, rows, cols, options);
  if (c.unwritten > 0 && c.unwritten < rows * cols)
    c.unwritten_trailing = trailing_unwritten(got, rows, cols, c.unwritten_last_rows, c.unwritten_last_cols);
  if (c.unwritten > 0 && c.unwritten < rows * cols && rows > 1 && cols > 1) {
    if (!whole_lines_unwritten(got, rows, cols, false, c.unwritten_rows, c.first_unwritten_row))
      c.unwritten_rows = 0;
    if (!whole_lines_unwritten(got, rows, cols, true, c.unwritten_cols, c.first_unwritten_col))
      c.unwritten_cols = 0;
  }
  diagnosis::compared(evidence::label(), c);
  return c;
}

namespace {

// Elements compared by one thread at a time: 2^26 of them are 64 chunks.
constexpr std::size_t kChunk = std::size_t{1} << 20;

// Whether element i is wrong: never written, not finite, or outside the
// tolerance.
bool is_bad(float got, double expected, const Tolerance& tolerance) {
  return is_poison(got) || !std::isfinite(got) || !tolerance.accepts(got, expected);
}

// What one chunk of the elements holds; merged front to back, the chunks
// give what one pass over all of them would.
struct Tally {
  std::size_t unwritten = 0, non_finite = 0, guard_nan = 0, shared_nan = 0, wrong = 0, wrong_zero = 0;
  std::size_t first_nan = SIZE_MAX;  // the index of the first non-finite value
  double max_abs_error = 0;
  std::vector<Mismatch> first;  // at most options.show
};

Tally tally(const std::vector<float>& got, const std::vector<double>& expected, std::size_t cols,
            const CompareOptions& options, std::size_t begin, std::size_t end) {
  Tally t;
  for (std::size_t i = begin; i < end; ++i) {
    const double g = got[i], e = expected[i];
    if (is_poison(got[i])) {
      ++t.unwritten;
    } else if (!std::isfinite(g)) {
      if (t.non_finite++ == 0) t.first_nan = i;
      const NanOrigin origin = nan_origin(got[i]);
      t.guard_nan += origin == NanOrigin::input_guard;
      t.shared_nan += origin == NanOrigin::shared_poison;
    } else if (options.tolerance.accepts(g, e)) {
      continue;
    } else {
      t.max_abs_error = std::max(t.max_abs_error, std::fabs(g - e));
      if (g == 0) ++t.wrong_zero;
    }
    if (t.wrong++ < options.show) t.first.push_back({i / cols, i % cols, g, e});
  }
  return t;
}

Comparison classify(const std::string& name, const std::vector<float>& got,
                    const std::vector<double>& expected, std::size_t rows, std::size_t cols,
                    const CompareOptions& options) {
  Comparison c;
  c.name = name;
  c.rows = rows;
  c.cols = cols;
  const std::size_t n = rows * cols;
  if (got.size() != n || expected.size() != n)
    throw std::logic_error(fmt::format("cudalab::compare: {} has {} values, expected {} and shape {}x{}",
                                       name, got.size(), expected.size(), rows, cols));
  if (n > 0) c.allowed = options.tolerance.atol + options.tolerance.rtol * std::fabs(expected[0]);
  for (Tally& t : map_chunks<Tally>(n, kChunk, [&](std::size_t begin, std::size_t end) {
         return tally(got, expected, cols, options, begin, end);
       })) {
    if (t.non_finite > 0 && c.non_finite == 0)
      c.first_nan_row = t.first_nan / cols, c.first_nan_col = t.first_nan % cols;
    c.unwritten += t.unwritten;
    c.non_finite += t.non_finite;
    c.guard_nan += t.guard_nan;
    c.shared_nan += t.shared_nan;
    c.wrong += t.wrong;
    c.wrong_zero += t.wrong_zero;
    c.max_abs_error = std::max(c.max_abs_error, t.max_abs_error);
    for (const Mismatch& m : t.first)
      if (c.first.size() < options.show) c.first.push_back(m);
  }
  if (c.wrong == 0) return c;

  if (c.unwritten == n) {
    c.pattern = ErrorPattern::never_written;
    return c;
  }
  if (rows == cols && rows > 1) {
    const std::vector<std::size_t> matches = map_chunks<std::size_t>(
        rows, std::max<std::size_t>(1, kChunk / cols), [&](std::size_t r0, std::size_t r1) {
          std::size_t match = 0;
          for (std::size_t i = r0; i < r1; ++i)
            for (std::size_t j = 0; j < cols; ++j)
              match += options.tolerance.accepts(got[i * cols + j], expected[j * cols + i]);
          return match;
        });
    std::size_t match = 0;
    for (std::size_t m : matches) match += m;
    if (match == n) {
      c.pattern = ErrorPattern::transposed;
      return c;
    }
  }
  // Which elements are wrong, for the tile bands: only a wrong output needs it.
  std::vector<unsigned char> bad(n);
  parallel_for(n, kChunk, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) bad[i] = is_bad(got[i], expected[i], options.tolerance);
  });
  const Band band = find_band(bad, rows, cols, options.tiles);
  if (c.unwritten > 0) {
    c.pattern = ErrorPattern::partly_unwritten;
  } else if (band.tile) {
    c.pattern = ErrorPattern::boundary;
  } else if (c.wrong * 10 >= n * 9) {
    c.pattern = ErrorPattern::everywhere;
  } else {
    c.pattern = ErrorPattern::scattered;
  }
  return c;
}

}  // namespace

std::string Comparison::describe() const {
  if (single()) return describe_single();
  if (ok()) return fmt::format("{} ({} x {}): all {} elements correct", name, rows, cols, rows * cols);
  std::string s =
      fmt::format("{} ({} x {}): {} of {} elements are wrong", name, rows, cols, wrong, rows * cols);
  std::vector<std::string> parts;
  if (unwritten) parts.push_back(fmt::format("{} never written", unwritten));
  if (non_finite) parts.push_back(fmt::format("{} NaN or Inf", non_finite));
  if (max_abs_error > 0) parts.push_back(fmt::format("largest error {:.3g}", max_abs_error));
  if (!parts.empty()) s += fmt::format(" ({})", fmt::join(parts, ", "));
  // The first failing shape of a check lists its first wrong elements; the
  // others say where the first one is, on the same line.
  if (!first.empty() && !diagnosis::list_samples()) {
    const Mismatch& m = first.front();
    return s + fmt::format("; first at {} = {} (expected {}).", where(*this, m.row, m.col),
                           is_poison(static_cast<float>(m.got)) ? "never written" : value(m.got),
                           value(m.expected));
  }
  s += ".";
  for (const auto& m : first) {
    s += fmt::format("\n  {} = {}", where(*this, m.row, m.col),
                     is_poison(static_cast<float>(m.got)) ? "never written" : value(m.got));
    s += fmt::format(" (expected {})", value(m.expected));
  }
  if (wrong > first.size()) s += fmt::format("\n  ... and {} more", wrong - first.size());
  // In a check, the cause comes once, from all its shapes (diagnosis.h).
  if (diagnosis::collecting()) return s;
  s += "\nLikely cause: ";
  switch (pattern) {
    case ErrorPattern::never_written:
      s += fmt::format(
          "no element of {} was written. Does the launcher launch the kernel, with a "
          "grid that is not empty?",
          name);
      break;
    case ErrorPattern::partly_unwritten:
      s += fmt::format(
          "{} elements still hold the poison value, so no thread wrote them: the grid "
          "does not cover all of {} (compute it by ceiling division), or some threads "
          "return before writing.",
          unwritten, name);
      break;
    case ErrorPattern::boundary:
      s += "only elements in the last partial tile (the rows or columns past the last multiple of "
           "the tile) are wrong: check the boundary conditions for sizes that are not a multiple "
           "of the tile.";
      break;
    case ErrorPattern::transposed:
      s += fmt::format(
          "{} holds the transpose of the expected result: a row and a column index are "
          "swapped.",
          name);
      break;
    case ErrorPattern::scattered:
      s += "a minority of elements here and there are wrong, the signature of a race between "
           "threads (a missing __syncthreads) or of an off-by-one at tile edges.";
      break;
    case ErrorPattern::everywhere:
      s += "(nearly) every element is wrong: check the index arithmetic and the loop bounds.";
      break;
    case ErrorPattern::none:
      break;
  }
  return s;
}

std::string Comparison::describe_single() const {
  const double expected = first.empty() ? 0 : first.front().expected;
  const double got = first.empty() ? 0 : first.front().got;
  if (ok()) return fmt::format("{} is right", name);
  std::string s;
  if (unwritten)
    s = fmt::format(
        "{} was never written: it still holds the NaN it was filled with before the launch "
        "(expected {})",
        name, value(expected));
  else if (non_finite)
    s = fmt::format("{} = {} (expected {})", name, value(got), value(expected));
  else
    s = fmt::format("{} = {}, expected {}: {} too {} (the tolerance here is {:.2g})", name, value(got),
                    value(expected), value(std::fabs(got - expected)), got < expected ? "small" : "large",
                    allowed);
  s += ".";
  // In a check, the cause comes once, from all its shapes (diagnosis.h).
  if (diagnosis::collecting()) return s;
  s += "\nLikely cause: ";
  if (unwritten)
    s += fmt::format(
        "no thread stored into {0}, or what it stored was computed from {0}'s own fill (`{0} += ...` with "
        "nothing setting {0} first). Does the launcher launch the kernels, and does one thread store the "
        "result?",
        name);
  else if (shared_nan)
    s += fmt::format(
        "{0} was computed from shared memory that no thread wrote (its NaN is the one CPU mode fills shared "
        "memory with): a step reads a slot past what the threads stored, or before they stored it.",
        name);
  else if (guard_nan)
    s += "a load read past the end of an input (its NaN is the one the checks put past the end of every "
         "buffer): check the bound of every load.";
  else
    s += fmt::format(
        "{0} is one value computed from many: check that every input is counted exactly once (the bound of "
        "every load), that the threads of a block wait for each other (__syncthreads) before they read what "
        "others wrote, and that the partial result of every block reaches {0} (atomicAdd).",
        name);
  return s;
}

}  // namespace cudalab
