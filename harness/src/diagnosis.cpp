// The leading diagnosis of a failing check (cudalab/diagnosis.h): diagnose()
// tries its rules in order, and the first whose facts hold leads. A check of
// one value has rules of its own (diagnosis_one_value.cpp); the facts are
// collected in diagnosis_facts.cpp, and what the rules share is in
// diagnosis_rules.h.
#include "cudalab/diagnosis.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "diagnosis_rules.h"

namespace cudalab::diagnosis::detail {

namespace {

bool multiple_of(const ShapeFacts& f, long long t) {
  for (const auto& [name, v] : f.dims)
    if (v % t != 0) return false;
  return true;
}

// The smallest tile t for which the shapes split exactly: every shape whose
// dimensions are all multiples of t is right, every wrong one has a
// dimension that is not. 0 if none does, or if no shape was a multiple.
//
// The block's side where the shapes split by it: a check whose shapes split
// by 8 as well (lab 03's memory check: right at 64^3, wrong at 17x33x9 and
// 513x257x129) must not speak of multiples of 8 while the ragged check of the
// same kernel, whose 1000^3 rules 8 out, speaks of multiples of 16. Without
// a launch (the grader's evidence), the smallest tile that splits.
long long dividing_tile(const std::vector<ShapeFacts>& facts) {
  const auto splits = [&](long long t) {
    bool any_multiple_ok = false, split = true;
    for (const auto& f : facts) {
      if (f.dims.empty()) return false;
      const bool mult = multiple_of(f, t);
      if (mult && failed(f)) split = false;
      if (mult && !failed(f)) any_multiple_ok = true;
    }
    return split && any_multiple_ok;
  };
  for (const auto& f : facts)
    if (const long long side = block_side(f); side > 1) {
      if (splits(side)) return side;
      break;
    }
  for (long long t : {8, 16, 32, 64})
    if (splits(t)) return t;
  return 0;
}

// The dimensions that are ragged (not multiples of t) in every failing shape.
std::vector<std::string> ragged_in_every_failure(const std::vector<ShapeFacts>& facts, long long t) {
  std::vector<std::string> out;
  const ShapeFacts* first = nullptr;
  for (const auto& f : facts)
    if (failed(f)) {
      first = &f;
      break;
    }
  if (!first) return out;
  for (const auto& [name, v] : first->dims) {
    bool everywhere = true, passes_when_ragged = false;
    for (const auto& f : facts)
      for (const auto& [n2, v2] : f.dims)
        if (n2 == name) {
          if (failed(f) && v2 % t == 0) everywhere = false;
          if (!failed(f) && v2 % t != 0) passes_when_ragged = true;
        }
    if (everywhere && !passes_when_ragged) out.push_back(name);
  }
  return out;
}

std::string race_lead(const ShapeFacts& f) {
  // Two counts, each said for what it is: the wrong elements are the first
  // run's against the reference, the changed ones the second run's against
  // the first (right ones that came out wrong count there too).
  const std::string counts =
      f.elements > 0 && f.wrong > 0
          ? fmt::format(
                "{} of {} elements of {} wrong on the first run, against the reference; {} elements came "
                "out different on the second run, against the first",
                f.wrong, f.elements, f.output, f.rerun_changed)
          : fmt::format("{} elements of {} came out different on the second run", f.rerun_changed, f.output);
  return fmt::format(
      "a race between threads. Run twice on the same inputs at {}{}, the kernel gave different results ({}), "
      "which only happens when threads read data that other threads have not "
      "written yet or have already overwritten: {}.{}",
      args_of(f),
      f.rerun_reordered ? " (the second time with the threads of each block in another order)" : "", counts,
      fix(Cause::race,
          "in a kernel with shared memory, look for a missing __syncthreads() after the tile is loaded or "
          "before it is loaded again"),
      racecheck_advice());
}

// "grid (8, 2, 1), block (32, 8, 1)" of a launch as describe_launch says it
// ("transpose_kernel<<<grid (8, 2, 1), block (32, 8, 1)>>>"); "" without one.
std::string launch_config(const std::string& launch) {
  const auto from = launch.find("<<<"), to = launch.rfind(">>>");
  return from == std::string::npos || to == std::string::npos || to < from + 3
             ? std::string()
             : launch.substr(from + 3, to - from - 3);
}

// What is never written at a shape whose unwritten elements are its last
// ones, as the leads say it: "the last 2 rows and the last column", with its
// verb, and the output's size ("17 rows x 33 columns").
struct Missing {
  bool vector;  // the output is a row or a column
  std::string what;
  const char* verb;
  std::string shape;
};

Missing missing_at(const ShapeFacts& ex) {
  const bool vector = ex.rows == 1 || ex.cols == 1;
  auto count = [](std::size_t n, const char* what) {
    return fmt::format("{} {}{}", n, what, n == 1 ? "" : "s");
  };
  std::string missing;
  if (vector)
    missing = ex.unwritten == 1 ? "the last element" : fmt::format("the last {} elements", ex.unwritten);
  else if (ex.last_rows && ex.last_cols)
    missing =
        fmt::format("the last {} and the last {}", count(ex.last_rows, "row"), count(ex.last_cols, "column"));
  else
    missing =
        fmt::format("the last {}", ex.last_rows ? count(ex.last_rows, "row") : count(ex.last_cols, "column"));
  const char* verb =
      (vector ? ex.unwritten > 1 : ex.last_rows > 1 || ex.last_cols > 1 || (ex.last_rows && ex.last_cols))
          ? "are"
          : "is";
  const std::string shape = vector ? fmt::format("{} elements", ex.elements)
                                   : fmt::format("{} rows x {} columns", ex.rows, ex.cols);
  return {vector, missing, verb, shape};
}

// The reference solution launched the same grid and blocks (`cfg`) at this
// shape: threads ran for the missing part, and none stored there. Unseen
// kernels (CPU mode, 2026-11-25) showed three ways: a transpose whose store
// checked in's sides, a tiled matmul with blockIdx.x and .y swapped, a vector
// add indexed by threadIdx.x alone; the output alone cannot tell any of them
// from a short grid (a swapped grid leaves the same rows unwritten).
Lead threads_ran_for_missing(const ShapeFacts& ex, const Missing& m, const std::string& cfg) {
  const std::size_t written = ex.elements - ex.unwritten;
  long long blocks = 0;
  std::sscanf(cfg.c_str(), "grid (%lld", &blocks);
  const long long side = block_side(ex);
  if (m.vector && blocks > 1 && side > 0 && written == static_cast<std::size_t>(side))
    return {
        Cause::block_left_out,
        fmt::format(
            "every block stores into the same elements: at {} only the first {} elements of {} are "
            "written, "
            "one "
            "block's worth, though your grid and blocks are the reference solution's ({}), so {} blocks "
            "ran. "
            "The "
            "index leaves out the block: `blockIdx.x * blockDim.x + threadIdx.x`, not `threadIdx.x` alone",
            args_of(ex), written, ex.output, cfg, blocks)};
  const char* part = ex.last_rows && ex.last_cols ? "rows and columns" : ex.last_rows ? "rows" : "elements";
  return {Cause::index_misses_end,
          fmt::format(
              "no thread stores into {0}'s last {1}: at {2} {3} of {0} {4} never written (and every other "
              "element "
              "is right), though your grid and blocks are the reference solution's ({5}; {0} is {6}), so "
              "threads "
              "ran for them. Either their index does not reach those {1} (blockIdx.x where blockIdx.y "
              "belongs, or "
              "the block left out: `blockIdx.y * blockDim.y + threadIdx.y` for a row) or the condition "
              "before the "
              "store stops them (an index compared with the wrong dimension, or the input's side where the "
              "output's belongs)",
              ex.output, part, args_of(ex), m.what, m.verb, cfg, m.shape)};
}

// What every failing shape's unwritten last rows or columns say, or nothing:
// one row or column (or the last element) at each is an off-by-one in the
// condition before the store; more, a grid that does not reach them.
std::optional<Lead> unwritten_edge(const Shapes& s) {
  const auto& bad = s.bad;
  bool one_each = true;
  for (const auto* f : bad) {
    const bool single = f->elements == 1 && f->unwritten == 1;  // n=1: all of it, and its last element
    if (f->values_ok || !f->memory.empty() || f->rerun_changed > 0 || f->wrong != f->unwritten ||
        !(f->unwritten_trailing || single))
      return std::nullopt;
    one_each &= single || f->last_rows + f->last_cols == 1;
  }
  // The example: the largest failing shape shows most.
  const ShapeFacts& ex = **std::max_element(
      bad.begin(), bad.end(), [](const auto* a, const auto* b) { return a->elements < b->elements; });
  const Missing m = missing_at(ex);
  const std::string yours =
      ex.launch.empty() ? "" : fmt::format(" (your launch: {}; {} is {})", ex.launch, ex.output, m.shape);
  if (const std::string cfg = launch_config(ex.launch);
      !one_each && !cfg.empty() && cfg == launch_config(ex.reference_launch))
    return threads_ran_for_missing(ex, m, cfg);
  if (one_each)
    return Lead{
        Cause::off_by_one_store,
        fmt::format("an off-by-one before the store: at {} {} of {} {} never written, and at every "
                    "failing shape exactly "
                    "one "
                    "last {} is missing, nothing else is wrong{}. {}",
                    args_of(ex), m.what, ex.output, m.verb, m.vector ? "element" : "row or column", yours,
                    fix(Cause::off_by_one_store,
                        "A condition stops the last thread(s) before they store: `i < n - 1` or `row "
                        "< M "
                        "- 1` where `i < "
                        "n` or `row < M` is meant"))};
  return Lead{
      Cause::grid_short,
      fmt::format(
          "the grid does not cover all of {}: at {} {} of {} {} never written (and every other element is "
          "right), "
          "so no thread was launched for them{}. {}",
          ex.output, args_of(ex), m.what, ex.output, m.verb, yours,
          fix(Cause::grid_short,
              "Compute the grid by ceiling division in each dimension, x from the columns and y from the "
              "rows: "
              "(cols + block.x - 1) / block.x, (rows + block.y - 1) / block.y"))};
}

// "1 element of c is never written", "12288 elements of out are never written".
std::string never_written(std::size_t n, const std::string& output) {
  return n == 1 ? fmt::format("1 element of {} is never written", output)
                : fmt::format("{} elements of {} are never written", n, output);
}

// The fact of a write outside a buffer, without its guessed cause.
std::string outside_fact(const ShapeFacts& f) {
  std::string s = f.memory.empty() ? "" : f.memory.front();
  if (const auto cut = s.find("): "); cut != std::string::npos) s.resize(cut + 1);
  // "(first at C[1]), which holds one value: a thread past the end ... or a
  // store at an index like C[blockIdx.x]": a one-value output's guess too.
  if (const auto cut = s.find("), which holds"); cut != std::string::npos) s.resize(cut + 1);
  return s;
}

// Whole rows (or columns) never written between written ones, and nothing
// else wrong, at every failing shape, with at least one shape where they
// are not just the last ones: no thread stores there, because an index steps
// past them (an unseen matrix add with `row = blockIdx.y * blockDim.x +
// threadIdx.y`, or a transpose whose loop over the tile's rows stops early,
// on an H100 2026-11-24: "at scattered positions ... some threads return").
std::optional<Lead> unwritten_bands(const Shapes& s) {
  const auto& bad = s.bad;
  bool rows = true, cols = true, inside = false;
  for (const auto* f : bad) {
    if (f->launch_failed || f->values_ok || !f->memory.empty() || f->rerun_changed > 0 ||
        f->wrong != f->unwritten || f->unwritten == 0)
      return std::nullopt;
    rows &= f->whole_rows > 0;
    cols &= f->whole_cols > 0;
    inside |= !f->unwritten_trailing;
  }
  if (!(rows || cols) || !inside) return std::nullopt;
  // The example: a shape where the bands are not only at the end.
  const ShapeFacts* ex = bad.front();
  for (const auto* f : bad)
    if (!f->unwritten_trailing) {
      ex = f;
      break;
    }
  const char* line = rows ? "row" : "column";
  const std::size_t n = rows ? ex->whole_rows : ex->whole_cols, of = rows ? ex->rows : ex->cols;
  const std::size_t first = rows ? ex->first_row : ex->first_col;
  return Lead{
      Cause::rows_skipped,
      fmt::format(
          "whole {0}s of {1} are never written, between {0}s that are right: at {2}, {3} of the {4} {0}s of "
          "{1} "
          "(the first is {0} {5}), and nothing else is wrong{6}. No thread stores into them, so an index "
          "steps "
          "past them: {7}",
          line, ex->output, args_of(*ex), n, of, first,
          ex->launch.empty() ? "" : fmt::format(" (your launch: {})", ex->launch),
          fix(Cause::rows_skipped,
              fmt::format(
                  "the {0} index (blockIdx.{1} * blockDim.{1} + threadIdx.{1}: the block's size in the same "
                  "dimension as the block's index), or a loop over a tile's {0}s that stops early or steps "
                  "too far (j < TILE, in steps of the block's height)",
                  line, rows ? "y" : "x")))};
}

// Stores that land in the wrong places: at every compared failing shape some
// elements are never written and others written with wrong values, the same
// on a rerun, and no whole last rows or columns missing (a grid too small).
// A store index with the wrong width does this (gallery-style kernel not in
// the repository, on an H100: `out[(row + j) * cols + col]` in a transpose
// led with "some threads return" before). Threads that skip a barrier do it
// too on a GPU: the grader's second look in CPU mode tells those apart.
const ShapeFacts* misplaced_example(const std::vector<const ShapeFacts*>& bad) {
  const ShapeFacts* ex = nullptr;
  for (const auto* f : bad) {
    if (f->launch_failed) continue;  // judged with the others below
    // One element, never written, says nothing about where stores land
    // (an unseen `c[i + 1] = ...` on an H100 led from its n=1 shape with
    // "never written ... some threads return", 2026-11-24).
    if (f->elements == 1 && f->unwritten == 1) continue;
    if (f->values_ok || f->unwritten == 0 || f->wrong <= f->unwritten || f->unwritten_trailing ||
        f->rerun_changed > 0)
      return nullptr;
    if (!ex || f->elements > ex->elements) ex = f;
  }
  return ex;
}

std::string misplaced_lead(const ShapeFacts& ex, const ShapeFacts* crashed) {
  // Only the fact of a write outside, not its own guess at a cause.
  const std::string outside = outside_fact(ex);
  std::string s =
      fmt::format("the stores land in the wrong places: at {}, {} and {} others hold wrong values{}{}",
                  args_of(ex), never_written(ex.unwritten, ex.output), ex.wrong - ex.unwritten,
                  ex.rerun_changed == 0 ? ", the same on a rerun" : "",
                  outside.empty() ? "" : ", and the kernel " + outside);
  if (crashed)
    s += fmt::format("; at {} the launch fails ({}), a store far outside {}", args_of(*crashed),
                     crashed->launch_error, ex.output);
  s += ". Threads store into other elements' places (or past the end), so some elements are stored twice and "
       "others never: ";
  if (ex.rows <= 1 || ex.cols <= 1)
    s += fix(Cause::misplaced_stores,
             fmt::format(
                 "check the index of the store ({} has {} elements, the thread for element i stores {}[i])",
                 ex.output, ex.elements, ex.output));
  else
    s += fix(
        Cause::misplaced_stores,
        fmt::format("check the index arithmetic of the store, row * width + col with {}'s own width ({} is "
                    "{} rows x {} columns), and which index runs along a row",
                    ex.output, ex.output, ex.rows, ex.cols));
  return s;
}

long long dim(const ShapeFacts& f, const std::string& name) {
  for (const auto& [n, v] : f.dims)
    if (n == name) return v;
  return -1;
}

// The dimensions whose equality splits the shapes exactly: every shape where
// they are equal is right, every shape where they differ is wrong, none
// changes on a rerun. An index that uses one dimension where another belongs
// (a row width of K where B's is N, rows for cols) cannot show while they are
// equal. Unseen kernels on an H100 (2026-11-24) led with "the boundary checks"
// before, because the labs' square shapes are mostly multiples of the tile:
// `B[k * K + col]` in a naive matmul, `row * rows + col` in a matrix add. A
// ragged square shape (1 x 1, 17 x 17) tells the two apart: a missing
// boundary check fails there, a mixed-up width does not. Empty: no such split.
// Each pair found: {a, b}; the labs' square shapes have M = N = K, so
// several pairs often split the shapes the same way.
std::vector<std::pair<std::string, std::string>> equal_dims_split(const std::vector<ShapeFacts>& facts) {
  std::vector<std::pair<std::string, std::string>> pairs;
  if (facts.empty() || facts.front().dims.size() < 2) return pairs;
  const auto& first = facts.front().dims;
  for (std::size_t i = 0; i < first.size(); ++i)
    for (std::size_t j = i + 1; j < first.size(); ++j) {
      const std::string &a = first[i].first, &b = first[j].first;
      bool exact = true, any_equal = false, any_differ = false;
      for (const auto& f : facts) {
        const long long x = dim(f, a), y = dim(f, b);
        // A width mixed up moves most of the output: a few wrong elements
        // here and there are something else (a race that hid on the square
        // multiples, gallery 23 on an H100).
        const bool few_wrong =
            !f.launch_failed && f.memory.empty() && !f.values_ok && f.wrong * 4 < f.elements;
        if (x < 0 || y < 0 || f.rerun_changed > 0 || few_wrong || (x == y) == failed(f)) {
          exact = false;
          break;
        }
        // At 1 x 1 every index is 0: right there says nothing about widths.
        any_equal |= x == y && x > 1;
        any_differ |= x != y;
      }
      if (exact && any_equal && any_differ) pairs.emplace_back(a, b);
    }
  return pairs;
}

// The pairs of dimensions mixed up, where they explain the shapes better
// than the boundary checks. Both can split the shapes alike: lab 02's ragged
// check is right at 1 x 1 x 1 and 1000^3 only, squares and (1000) a multiple
// of 8. A missing boundary check shows wherever threads run past the edge, so
// a right shape that is not a multiple of the block's side (1000 with blocks
// of 16) rules it out; where every right shape is a multiple of the block
// (no_boundary's memory check: 64^3 with blocks of 16) the boundary leads.
std::vector<std::pair<std::string, std::string>> mixed_dims(const std::vector<ShapeFacts>& facts) {
  auto pairs = equal_dims_split(facts);
  if (pairs.empty() || !dividing_tile(facts)) return pairs;
  for (const auto& f : facts) {
    const long long side = block_side(f);
    if (failed(f) || side <= 1) continue;
    for (const auto& [n, v] : f.dims)
      if (v > 1 && v % side != 0) return pairs;
  }
  return {};
}

// Every failing shape writes outside a buffer, and at some the values are
// wrong as well: the condition before the store lets threads past the edge
// through. An unseen naive matmul with `if (row > M || col > N) return;`
// (H100, 2026-11-24) led with "the values are right" from its 1 x 1 x 1
// shape, while at the others a thread one column past the edge stored into
// the next row.
std::optional<Lead> edge_threads_store(const Shapes& shapes) {
  const auto& bad = shapes.bad;
  const ShapeFacts* wrong = nullptr;
  for (const auto* f : bad) {
    if (f->launch_failed || f->memory.empty() || f->memory.front().find("wrote ") != 0) return std::nullopt;
    if (!f->values_ok && !wrong) wrong = f;
  }
  // A few wrong elements next to the edge, not stores all over the place
  // (those are the store's index: misplaced_lead).
  if (!wrong || wrong->wrong * 4 >= wrong->elements || misplaced_example(bad)) return std::nullopt;
  const ShapeFacts& first = *bad.front();
  std::string s = fmt::format(
      "threads past the edge store: at every failing shape the kernel writes outside its output (at {}: {})",
      args_of(first), outside_fact(first));
  s +=
      fmt::format(", and at {} {} of {} elements of {} are wrong as well{}", args_of(*wrong), wrong->wrong,
                  wrong->elements, wrong->output,
                  wrong->rerun_changed > 0 ? fmt::format(" ({} of them changed on a rerun: two threads store "
                                                         "into one element, in either order)",
                                                         wrong->rerun_changed)
                                           : "");
  s += ". " +
       fix(Cause::edge_threads_store,
           "The condition before the store must stop every thread whose row or column is past the edge: "
           "`row < M && col < N` (an off-by-one, `<=` or `>` where `<` or `>=` belongs, lets the "
           "threads one past the edge through, and one a column past the last stores into the next "
           "row)");
  return Lead{Cause::edge_threads_store, std::move(s)};
}

// The dimensions that split the shapes at the block's side: every shape
// where they are at most one block (one tile) is right, every shape where one
// is larger is wrong, the same on a rerun. Only one tile's worth counts: an
// unseen tiled matmul resetting its accumulator inside the loop over tiles
// (H100, 2026-11-24) was told "check the index arithmetic" before; it is
// right at every K <= 16. A right shape counts only where the dimension is
// more than 1: at 1 the loop runs once whatever it does, so an unseen tiled
// matmul reading B's tile with threadIdx.x for its row (CPU mode,
// 2026-11-25), wrong everywhere but at 1 x 1 x 1, was told that only one
// tile's worth counts.
std::vector<std::string> one_tile_dims(const std::vector<ShapeFacts>& facts, long long& side) {
  side = 0;
  for (const auto& f : facts) side = std::max(side, block_side(f));
  std::vector<std::string> names;
  if (side <= 1 || facts.empty()) return names;
  for (const auto& f : facts)
    if (f.dims.empty() || f.launch_failed || !f.memory.empty() || f.rerun_changed > 0) return names;
  for (const auto& [name, v0] : facts.front().dims) {
    bool split = true, any_good = false, any_bad = false;
    for (const auto& f : facts) {
      const long long v = dim(f, name);
      if (v < 0 || (v <= side) == failed(f)) split = false;
      if (failed(f))
        any_bad = true;
      else
        any_good |= v > 1;
    }
    if (split && any_good && any_bad) names.push_back(name);
  }
  return names;
}

std::string one_tile_lead(const std::vector<std::string>& names, long long side,
                          const std::vector<const ShapeFacts*>& bad,
                          const std::vector<const ShapeFacts*>& good) {
  const ShapeFacts& ex = *bad.front();
  const bool one = names.size() == 1;
  const std::string which = join_names(names);
  return fmt::format(
      "only one tile's worth of {0} counts: right on every shape where {0} {1} at most {2} ({3}), wrong on "
      "every shape where {4} larger (at {5}, {6} of {7} elements of {8} are wrong, the same on a rerun). Up "
      "to {2} the loop over the tiles along {0} runs once; past that the tiles' partial results are lost: "
      "{9}",
      which, one ? "is" : "are", side, right_examples(good), one ? "it is" : "one is", args_of(ex), ex.wrong,
      ex.elements, ex.output,
      fix(Cause::one_tile_only,
          fmt::format("look for an accumulator reset inside the loop over tiles, a store that overwrites the "
                      "result of the tiles before, a loop that stops after the first tile, or an index that "
                      "reads the tiles after the first from the wrong place (the tile's offset along {})",
                      which)));
}

std::string mixed_dims_lead(const std::vector<std::pair<std::string, std::string>>& pairs,
                            const std::vector<const ShapeFacts*>& bad,
                            const std::vector<const ShapeFacts*>& good, const ShapeFacts* crashed) {
  // The names in the shapes' order; "M = N = K" where every pair of them
  // splits the shapes, else the first pair and the others as the same shapes.
  std::vector<std::string> names;
  for (const auto& [n, v] : bad.front()->dims)
    for (const auto& [a, b] : pairs)
      if ((n == a || n == b) && std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  std::string equal, same;
  if (pairs.size() == names.size() * (names.size() - 1) / 2) {
    for (const auto& n : names) equal += (equal.empty() ? "" : " = ") + n;
  } else {
    equal = pairs.front().first + " = " + pairs.front().second;
    for (std::size_t i = 1; i < pairs.size(); ++i)
      same += fmt::format("; the same shapes as where {} = {}", pairs[i].first, pairs[i].second);
  }
  // The example: the first failing shape whose output was compared wrong or
  // that wrote outside; the smallest usually, the easiest to follow by hand.
  const ShapeFacts* ex = nullptr;
  for (const auto* f : bad)
    if (!f->launch_failed && (!f->values_ok || !f->memory.empty())) {
      ex = f;
      break;
    }
  std::string s = fmt::format(
      "{} mixed up in an index: right on every shape where {} ({}), wrong on every shape where they differ",
      join_names(names), equal, right_examples(good) + same);
  if (ex) {
    if (!ex->values_ok && ex->unwritten > 0 && ex->wrong > ex->unwritten)
      s += fmt::format(". At {}, the stores land in the wrong places: {} and {} others hold wrong values",
                       args_of(*ex), never_written(ex->unwritten, ex->output), ex->wrong - ex->unwritten);
    else if (!ex->values_ok)
      s += fmt::format(". At {}, {} of {} elements of {} are wrong", args_of(*ex), ex->wrong, ex->elements,
                       ex->output);
    else
      s += fmt::format(". At {} the values are right", args_of(*ex));
    if (const std::string outside = outside_fact(*ex); !outside.empty()) s += ", and the kernel " + outside;
  }
  if (crashed)
    s += fmt::format("; at {} the launch fails ({}): an access far outside the buffers", args_of(*crashed),
                     crashed->launch_error);
  s += fmt::format(
      ". An index that uses one of {} where another belongs gives the right answer while they are "
      "equal: {}",
      join_names(names),
      fix(Cause::dims_mixed_up,
          "check the width in every row * width + col (a row-major matrix of R rows and C columns "
          "has width C, and each matrix has its own), the bound each index is checked against, "
          "and which of x and y runs along which dimension"));
  return s;
}

// Every failing shape's wrong elements are NaN (none unwritten, none finite),
// at least some of them with `pred`, and nothing was written outside.
template <class Pred>
const ShapeFacts* all_wrong_nan(const std::vector<const ShapeFacts*>& bad, Pred pred) {
  for (const auto* f : bad)
    if (f->launch_failed || f->values_ok || !f->memory.empty() || f->unwritten > 0 ||
        f->non_finite != f->wrong || !pred(*f))
      return nullptr;
  // The example: a shape with rows and columns both (at M=1 N=1 K=1, C[0]
  // reads as a vector's element), the first such.
  for (const auto* f : bad)
    if (f->rows > 1 && f->cols > 1) return f;
  return bad.empty() ? nullptr : bad.front();
}

// "C[3][7]" (or "c[7]") of a shape's first NaN.
std::string first_nan(const ShapeFacts& f) {
  if (f.rows == 1) return fmt::format("{}[{}]", f.output, f.first_nan_col);
  return fmt::format("{}[{}][{}]", f.output, f.first_nan_row, f.first_nan_col);
}

std::string others_too(const std::vector<const ShapeFacts*>& bad) {
  return bad.size() > 1 ? fmt::format(", and likewise at the {} other failing shape{}", bad.size() - 1,
                                      bad.size() > 2 ? "s" : "")
                        : "";
}

// A read past the end of an input: the guard zones hold NaN, so what it
// feeds is NaN (an unseen tiled matmul whose B load lacked its row bound
// passed every check while the zones held a finite float: 0 x finite = 0).
std::string read_past_end_lead(const ShapeFacts& ex, const std::vector<const ShapeFacts*>& bad) {
  return fmt::format(
      "{0} is NaN{1}: the kernel read past the end of {2} ({10}). At {3}, {4} of {5} elements of "
      "{6} are NaN{7}{8}. The checks put NaN past the end of every buffer{9}, so a read there poisons every "
      "sum it reaches, even where it is multiplied by 0",
      first_nan(ex), though_inputs_hold_none(ex), inputs_or(ex), args_of(ex), ex.non_finite, ex.elements,
      ex.output, others_too(bad), ex.launch.empty() ? "" : fmt::format(" (your launch: {})", ex.launch),
      ex.guard_nan > 0 ? fmt::format(", and {}'s NaNs carry its bits", ex.output) : "",
      fix(Cause::reads_past_end,
          "a load whose index is not bounded: each load tests every index it uses, a tile load both its row "
          "and its column"));
}

// CPU mode fills shared memory with a NaN of its own: a NaN computed from
// it is not an output never written (a tile of 32 loaded by 16 x 16 threads
// stored NaN that read exactly as C's fill before).
std::string unwritten_shared_lead(const ShapeFacts& ex, const std::vector<const ShapeFacts*>& bad) {
  return fmt::format(
      "{0} is NaN, computed from shared memory that no thread wrote: at {1}, {2} of {3} elements of {4} are "
      "NaN{5}. Their bits are those CPU mode fills shared memory with before each block, so the kernel "
      "stored them: they are not the NaN {4} was filled with. {6}",
      first_nan(ex), args_of(ex), ex.non_finite, ex.elements, ex.output, others_too(bad),
      fix(Cause::unwritten_shared,
          "A step reads a shared element that no thread stored: a loop that reads past the tile (`k <= "
          "TILE`), a tile larger than the block that loads it, or a load skipped (a thread that returns, or "
          "an `if` without its `else` 0)"));
}

// --- The rules diagnose() tries, in its order.

// Every failing shape, `pred` of each.
template <class Pred>
bool all_bad(const std::vector<const ShapeFacts*>& bad, Pred pred) {
  for (const auto* f : bad)
    if (!pred(*f)) return false;
  return true;
}

std::optional<Lead> not_implemented_yet(const Shapes& s) {
  for (const auto* f : s.bad)
    if (f->not_implemented) return Lead{Cause::not_implemented, ""};  // the message says what to do
  return std::nullopt;
}

std::optional<Lead> one_value(const Shapes& s) {
  if (!single_value_check(s.all)) return std::nullopt;
  return single_value_lead(s);
}

// A launch that fails with an illegal address, where the other failing
// shapes show dimensions mixed up or stores in the wrong places: both are
// that one mistake.
std::optional<Lead> crash_of_misplaced_stores(const Shapes& s) {
  for (const auto* f : s.bad)
    if (f->launch_failed && f->launch_cause == Cause::illegal_address &&
        f->launch_advice.find(kSharedOverrun) == std::string::npos) {
      if (const auto pairs = mixed_dims(s.all); !pairs.empty())
        return Lead{Cause::dims_mixed_up, mixed_dims_lead(pairs, s.bad, s.good, f)};
      if (const ShapeFacts* ex = misplaced_example(s.bad))
        return Lead{Cause::misplaced_stores, misplaced_lead(*ex, f)};
    }
  return std::nullopt;
}

// CPU mode stopped the launch at a __syncthreads() that not every thread
// of a block reaches (simt's words begin the advice): the barrier leads, in
// the words of the barrier lead below (the grader knows them).
std::optional<Lead> launch_stopped_at_barrier(const Shapes& s) {
  for (const auto* f : s.bad)
    if (f->launch_failed && f->launch_advice.rfind(kBarrierNotReached, 0) == 0)
      return Lead{
          Cause::barrier_skipped,
          fmt::format("{}: at {}, {}. CPU mode stopped the kernel there ({})", kBarrierNotReached,
                      args_of(*f), f->launch_advice.substr(std::string(kBarrierNotReached).size() + 2),
                      f->launch_error)};
  return std::nullopt;
}

// A launch that fails: the error and the configuration say it all.
std::optional<Lead> launch_fails(const Shapes& s) {
  for (const auto* f : s.bad)
    if (f->launch_failed) {
      std::string text = launch_failure(*f);
      std::vector<std::string> fine;
      for (const auto* g : s.good) fine.push_back(args_of(*g));
      if (!fine.empty() && fine.size() <= 3) text += fmt::format(" (it works at {})", join_names(fine));
      // simt saw the store past the kernel's shared memory: that is the cause.
      const bool shared = f->launch_advice.find(kSharedOverrun) != std::string::npos;
      return Lead{shared ? Cause::shared_overrun : f->launch_cause, text};
    }
  return std::nullopt;
}

// An output that is right only when it starts at 0: the kernel adds to it.
std::optional<Lead> adds_to_output(const Shapes& s) {
  for (const auto* f : s.bad)
    if (f->accumulates)
      return Lead{
          Cause::accumulates,
          fmt::format(
              "{0} is right only when it starts at 0: at {1} every element of {0} came back {2}, and the "
              "same "
              "launch "
              "on a {0} filled with 0 gives the right result. The kernel adds its result to what {0} held "
              "(`{0}[i] += ...`) instead of storing it; the checks fill every output with NaN before a "
              "launch, "
              "as memory from cudaMalloc may hold anything. {3}",
              f->output, args_of(*f),
              f->unwritten == f->wrong ? "as it was (NaN plus anything is NaN)" : "NaN",
              fix(Cause::accumulates, "Accumulate in a local variable and store it with `=`"))};
  return std::nullopt;
}

// Threads that returned before a barrier the rest of their block reached
// (CPU mode sees it): their part of the tile is never loaded.
std::optional<Lead> threads_skip_barrier(const Shapes& s) {
  for (const auto* f : s.bad)
    if (!f->barrier_skip.empty() && !f->values_ok)
      return Lead{
          Cause::barrier_skipped,
          fmt::format(
              "a __syncthreads() that some threads never reach: at {}, {}. Those threads returned early or "
              "skipped the barrier inside an `if`, so the block's threads no longer wait for each other "
              "there, "
              "and some read shared memory that is not filled yet. Every thread of a block must reach every "
              "__syncthreads(): {}",
              args_of(*f), f->barrier_skip,
              fix(Cause::barrier_skipped,
                  fmt::format(
                      "keep each one out of any `if` (or loop, or early `return`) that depends on the "
                      "thread's index, let the threads past the edge of {} run the loop too (loading 0 past "
                      "the edges), and guard only the loads and the store",
                      f->output.empty() ? std::string("the output") : f->output)))};
  return std::nullopt;
}

// NaN where the inputs hold none, and nothing else wrong: a read past the
// end of an input (the guard zones hold NaN).
std::optional<Lead> nan_read_past_end(const Shapes& s) {
  if (const ShapeFacts* ex = all_wrong_nan(s.bad, [](const ShapeFacts& f) { return read_nan(f); }))
    return Lead{Cause::reads_past_end, read_past_end_lead(*ex, s.bad)};
  return std::nullopt;
}

// The length of the dimension a shape's loop was tested over, 0 where none.
long long short_loop_length(const ShapeFacts& f) {
  for (const auto& [name, v] : f.dims)
    if (name == f.short_loop_dim) return v;
  return 0LL;
}

// The tile size of a loop that stops before its last, partial tile, at
// every failing shape the test could multiply again; 0 where none.
long long short_loop_tile(const std::vector<const ShapeFacts*>& bad) {
  // The tile sizes every tested failing shape agrees on, the smallest first.
  std::vector<long long> common;
  bool first = true;
  for (const auto* f : bad) {
    if (!f->short_loop_tested) continue;
    if (first) common = f->short_loop_tiles, first = false;
    std::vector<long long> both;
    for (long long t : common)
      if (std::find(f->short_loop_tiles.begin(), f->short_loop_tiles.end(), t) != f->short_loop_tiles.end())
        both.push_back(t);
    common = both;
  }
  std::sort(common.begin(), common.end());
  // A tile size some tested shape keeps terms of: an output of 0 where the
  // tile is larger than K is as much a kernel that stores nothing but 0
  // (gallery 53, K=16 against tiles of 32 and 64), and proves no loop.
  long long t = 0;
  for (long long c : common)
    for (const auto* f : bad)
      if (!t && f->short_loop_tested && short_loop_length(*f) / c * c > 0) t = c;
  return t;
}

// The output is exactly the sum over K rounded down to a multiple of the
// tile, at every failing shape the test could multiply again: the loop
// over K stops before its last, partial tile.
std::optional<Lead> last_tile_never_added(const Shapes& s) {
  const long long t = short_loop_tile(s.bad);
  if (!t) return std::nullopt;
  // The example: the tested shape with the most terms kept.
  const ShapeFacts* ex = nullptr;
  for (const auto* f : s.bad)
    if (f->short_loop_tested && (!ex || short_loop_length(*f) / t * t > short_loop_length(*ex) / t * t))
      ex = f;
  const std::string out = ex->output.empty() ? std::string("the output") : ex->output;
  const std::string& d = ex->short_loop_dim;
  const long long full = short_loop_length(*ex), kept = full / t * t;
  return Lead{
      Cause::loop_stops_short,
      fmt::format(
          "the loop over {0} stops before the last, partial tile: at {1} every element of {2} is exactly "
          "the "
          "sum "
          "of the first {3} of its {4} terms ({0} rounded down to a multiple of {5}), so the last {6} "
          "are "
          "never added. {7}",
          d, args_of(*ex), out, kept, full, t, full - kept,
          fix(Cause::loop_stops_short,
              fmt::format(
                  "Run the loop while the tile's start is below {0} (`t < {0}`, not `t + TILE <= {0}`), "
                  "loading 0 for the part of the last tile past the end",
                  d)))};
}

// A few elements here and there at every wrong shape, values that change on
// a rerun and nothing written outside: the race's signature.
std::optional<Lead> race_by_signature(const Shapes& s) {
  bool race_signature = !s.bad.empty();
  bool rerun_differs = false;
  for (const auto* f : s.bad) {
    race_signature &= f->pattern == ErrorPattern::scattered && f->memory.empty();
    rerun_differs |= f->rerun_changed > 0;
  }
  if (race_signature && rerun_differs)
    for (const auto* f : s.bad)
      if (f->rerun_changed > 0) return Lead{Cause::race, race_lead(*f)};
  return std::nullopt;
}

// Right exactly where two dimensions are equal.
std::optional<Lead> dims_mixed(const Shapes& s) {
  if (const auto pairs = mixed_dims(s.all); !pairs.empty())
    return Lead{Cause::dims_mixed_up, mixed_dims_lead(pairs, s.bad, s.good, nullptr)};
  return std::nullopt;
}

// The shapes split by a tile size: the boundary checks.
std::optional<Lead> ragged_shapes_fail(const Shapes& shapes) {
  const auto& facts = shapes.all;
  const auto& bad = shapes.bad;
  const long long t = dividing_tile(facts);
  if (!(t && bad.size() < facts.size())) return std::nullopt;
  const auto dims = ragged_in_every_failure(facts, t);
  std::vector<std::string> all;
  for (const auto& [name, v] : bad.front()->dims) all.push_back(name);
  const ShapeFacts& ex = *bad.front();
  std::string which;
  for (const auto& [name, v] : ex.dims)
    if (v % t != 0) {
      which = fmt::format("{}={}", name, v);
      break;
    }
  // One dimension ragged in every failure: the sentence names it, and its
  // example is a shape where it is ragged.
  const bool one_dim = dims.size() == 1 && all.size() > 1;
  const ShapeFacts* example = &ex;
  if (one_dim) {
    bool found = false;
    for (const auto* f : bad)
      for (const auto& [name, v] : f->dims)
        if (!found && name == dims.front() && v % t != 0) example = f, found = true;
    for (const auto& [name, v] : example->dims)
      if (name == dims.front()) which = fmt::format("{}={}", name, v);
  }
  std::string s = fmt::format(
      "the boundary checks. Right on every shape where {} {} multiples of {}, wrong on every shape where "
      "{} "
      "not ({} at {})",
      join_names(all), all.size() == 1 ? "is a" : "are", t,
      one_dim           ? dims.front() + " is"
      : all.size() == 1 ? "it is"
                        : "one is",
      which, args_of(*example));
  if (one_dim)
    s += ". " + fix(Cause::boundary_checks,
                    fmt::format("The loop over {0} in steps of the tile must load 0 for the part of the last "
                                "tile past the end (and still reach every __syncthreads)",
                                dims.front()));
  else
    s += ": " + fix(Cause::boundary_checks,
                    "threads of the last partial tile must load 0 for elements past the edge of the inputs, "
                    "and store only inside the output");
  bool wrote_outside = false, changes = false;
  for (const auto* f : bad) wrote_outside |= !f->memory.empty(), changes |= f->rerun_changed > 0;
  // The fact itself: the per-shape lines under the lead need not hold it
  // (lab 03's ragged check compares values; its memory check writes).
  if (wrote_outside)
    for (const auto* f : bad)
      if (!f->memory.empty()) {
        s += fmt::format("; and they write outside the buffers there (at {}: {})", args_of(*f),
                         outside_fact(*f));
        break;
      }
  if (changes)
    s += ". (The wrong values even change from run to run: the threads past the edge read memory outside "
         "the inputs.)";
  return Lead{Cause::boundary_checks, s};
}

// A kernel that writes into its inputs.
std::optional<Lead> writes_into_input(const Shapes& s) {
  for (const auto* f : s.bad)
    for (const auto& m : f->memory)
      if (m.find("changed the input") != std::string::npos)
        return Lead{Cause::writes_input,
                    fmt::format("at {} {}. A kernel that writes into its inputs also computes from values it "
                                "changed (and from different ones each run): check every store's index",
                                args_of(*f), m)};
  return std::nullopt;
}

// Different results on the same inputs: a race, whatever the pattern.
std::optional<Lead> changes_on_rerun(const Shapes& s) {
  for (const auto* f : s.bad)
    if (f->rerun_changed > 0) return Lead{Cause::race, race_lead(*f)};
  return std::nullopt;
}

// NaN with the bits of CPU mode's shared-memory fill: computed from shared
// memory no thread wrote (not a race: the same on a rerun).
std::optional<Lead> nan_from_unwritten_shared(const Shapes& s) {
  if (const ShapeFacts* ex = all_wrong_nan(s.bad, [](const ShapeFacts& f) { return f.shared_nan > 0; }))
    return Lead{Cause::unwritten_shared, unwritten_shared_lead(*ex, s.bad)};
  return std::nullopt;
}

// Writes outside the buffers at a shape whose values are right, where
// another failing shape has wrong values: "the values are right" would sit
// above "225 of 561 elements are wrong" (gallery 20 in CPU mode): both are
// said, each at its shape.
std::optional<Lead> writes_outside_and_wrong(const Shapes& s) {
  const ShapeFacts* wrong_values = nullptr;
  for (const auto* f : s.bad)
    if (!f->values_ok && f->compared && f->wrong > 0 && !wrong_values) wrong_values = f;
  for (const auto* f : s.bad)
    if (!f->memory.empty() && f->values_ok && wrong_values)
      return Lead{
          Cause::writes_outside,
          fmt::format(
              "threads write outside the buffers, and values are wrong: at {} the values are right but the "
              "kernel "
              "{}, and at {} {} of {} elements of {} are wrong. {}",
              args_of(*f), outside_fact(*f), args_of(*wrong_values), wrong_values->wrong,
              wrong_values->elements, wrong_values->output,
              fix(Cause::writes_outside,
                  "A thread whose index is past the end of a buffer must not write or compute: check the "
                  "condition before every store"))};
  return std::nullopt;
}

// Writes outside the buffers or changed inputs, with right values.
std::optional<Lead> writes_outside(const Shapes& s) {
  for (const auto* f : s.bad)
    if (!f->memory.empty() && f->values_ok)
      return Lead{
          Cause::writes_outside,
          fmt::format("the values are right, but at {} {}. {}", args_of(*f), f->memory.front(),
                      fix(Cause::writes_outside,
                          "A thread whose index is past the end of a buffer must not write, and inputs "
                          "are read-only: "
                          "check the condition before every store"))};
  return std::nullopt;
}

// --- The pattern of the wrong values, the same at every failing shape; the
// example is the first failing shape.

std::optional<Lead> transposed(const Shapes& s) {
  if (!all_bad(s.bad, [](const ShapeFacts& f) { return f.pattern == ErrorPattern::transposed; }))
    return std::nullopt;
  const ShapeFacts& ex = *s.bad.front();
  return Lead{
      Cause::transposed,
      fmt::format("{} holds the transpose of the expected result at {}: a row and a column index are swapped",
                  ex.output, args_of(ex))};
}

std::optional<Lead> nothing_written(const Shapes& s) {
  if (!all_bad(s.bad, [](const ShapeFacts& f) { return f.pattern == ErrorPattern::never_written; }))
    return std::nullopt;
  const ShapeFacts& ex = *s.bad.front();
  const std::string others =
      s.bad.size() > 1 ? fmt::format(" (nor at the {} other failing shapes)", s.bad.size() - 1) : "";
  // A launch was seen, so asking whether there is one misleads: an unseen
  // tiled matmul with TILE 32 and blocks of 16 x 16 threads (CPU mode,
  // 2026-11-25) stored NaN computed from the tile's unfilled part, which
  // reads exactly as the output's fill.
  if (!ex.launch.empty())
    return Lead{
        Cause::never_written,
        fmt::format(
            "no element of {0} is written at {1}{2}, though the kernel ran (your launch: {3}): every "
            "element "
            "still holds the NaN {0} was filled with. Either no thread reaches the store (a condition none "
            "of them meets), or each stores NaN computed from shared memory that no thread filled (a loop "
            "that reads past the tile, `k <= TILE`, or a tile larger than the block that loads it)",
            ex.output, args_of(ex), others, ex.launch)};
  return Lead{Cause::never_written,
              fmt::format("no element of {} is written at {}{}: does the launcher launch "
                          "the kernel, with a grid that is not "
                          "empty, and does the kernel store its result?",
                          ex.output, args_of(ex), others)};
}

// Every element written and wrong is exactly 0, at every failing shape:
// not an index error (those move values around), a result never stored
// (gallery 53: a launcher that only clears C).
std::optional<Lead> zeros_where_wrong(const Shapes& s) {
  if (!all_bad(s.bad, [](const ShapeFacts& f) {
        return f.wrong > f.unwritten && f.wrong_zero == f.wrong - f.unwritten;
      }))
    return std::nullopt;
  const ShapeFacts& ex = *s.bad.front();
  return Lead{
      Cause::stores_zero,
      fmt::format(
          "{} holds 0 wherever it is wrong at {}{}: the kernel stores 0 instead of its result (an "
          "accumulator "
          "that is never added to, or declared int, which truncates each small product to 0; a store "
          "before "
          "the loop; or a launcher that only clears {})",
          ex.output, args_of(ex),
          s.bad.size() > 1 ? fmt::format(" (and at the {} other failing shapes)", s.bad.size() - 1) : "",
          ex.output)};
}

// Elements never written, all at the output's end.
std::optional<Lead> end_never_written(const Shapes& s) {
  if (!all_bad(s.bad, [](const ShapeFacts& f) { return f.unwritten > 0 && f.unwritten_trailing; }))
    return std::nullopt;
  const ShapeFacts& ex = *s.bad.front();
  // With the reference's own grid and blocks, threads ran for the
  // unwritten end: an unseen transpose whose second phase kept in's block
  // offsets (H100, 2026-11-25) was told "the grid does not cover" at 33 x 65.
  if (const std::string cfg = launch_config(ex.launch);
      !cfg.empty() && cfg == launch_config(ex.reference_launch))
    return Lead{
        Cause::index_misses_end,
        fmt::format(
            "{} at {}, all at its end{}, though your grid and blocks are the reference "
            "solution's ({}), so threads ran for every element: their index does not reach the last ones. "
            "Look "
            "for an offset taken from the wrong block index (blockIdx.x where blockIdx.y belongs, or a "
            "tile's "
            "offset not swapped where the tile is stored transposed) or a condition before the store that "
            "compares with the wrong dimension",
            never_written(ex.unwritten, ex.output), args_of(ex),
            ex.wrong > ex.unwritten ? fmt::format(", and {} more are wrong", ex.wrong - ex.unwritten) : "",
            cfg)};
  return Lead{
      Cause::grid_short,
      fmt::format("the grid does not cover all of {}: at {} the last {} never written, so no thread was "
                  "launched for "
                  "them. {}",
                  ex.output, args_of(ex), ex.unwritten == 1 ? "element is" : "elements are",
                  fix(Cause::grid_short,
                      "Compute the grid by ceiling division, (n + block - 1) / block, in each dimension"))};
}

std::optional<Lead> misplaced_stores(const Shapes& s) {
  if (const ShapeFacts* m = misplaced_example(s.bad))
    return Lead{Cause::misplaced_stores, misplaced_lead(*m, nullptr)};
  return std::nullopt;
}

std::optional<Lead> scattered_unwritten(const Shapes& s) {
  if (!all_bad(s.bad, [](const ShapeFacts& f) { return f.unwritten > 0; })) return std::nullopt;
  const ShapeFacts& ex = *s.bad.front();
  return Lead{Cause::scattered_unwritten,
              fmt::format("{} at {}, at scattered positions rather than whole last rows or columns: some "
                          "threads return (or "
                          "skip their store) before writing, or read shared memory that was never filled",
                          never_written(ex.unwritten, ex.output), args_of(ex))};
}

// Only one tile's worth along some dimension counts.
std::optional<Lead> one_tile_counts(const Shapes& s) {
  long long side = 0;
  if (const auto names = one_tile_dims(s.all, side); !names.empty())
    return Lead{Cause::one_tile_only, one_tile_lead(names, side, s.bad, s.good)};
  return std::nullopt;
}

// Only the larger shapes fail.
std::optional<Lead> larger_shapes_only(const Shapes& s) {
  if (s.good.empty()) return std::nullopt;
  std::size_t largest_good = 0, smallest_bad = SIZE_MAX;
  // A one-element shape is right under most index mistakes: it shows
  // nothing about size.
  for (const auto* g : s.good) largest_good = std::max(largest_good, g->elements > 1 ? g->elements : 0);
  for (const auto* f : s.bad) smallest_bad = std::min(smallest_bad, f->elements);
  bool sizes_known = true;
  for (const auto& f : s.all) sizes_known &= f.compared && f.elements > 0;
  if (!(sizes_known && largest_good > 0 && smallest_bad > largest_good)) return std::nullopt;
  return Lead{Cause::large_shapes_only, fmt::format("only the larger shapes are wrong (from {} up; every "
                                                    "smaller one is right): a race that needs many "
                                                    "blocks in flight to show (a missing __syncthreads), or "
                                                    "an index computed in int that overflows",
                                                    args_of(*s.bad.front()))};
}

std::optional<Lead> wrong_everywhere(const Shapes& s) {
  if (!all_bad(s.bad, [](const ShapeFacts& f) { return f.pattern == ErrorPattern::everywhere; }))
    return std::nullopt;
  const ShapeFacts& ex = *s.bad.front();
  return Lead{Cause::index_arithmetic,
              fmt::format("(nearly) every element of {} is wrong at {}{}: {}", ex.output, args_of(ex),
                          s.good.empty() ? ", and at every shape" : "",
                          fix(Cause::index_arithmetic,
                              "check the index arithmetic (row * width + col, with the right width for each "
                              "matrix) and the "
                              "loop bounds"))};
}

std::optional<Lead> last_partial_tile(const Shapes& s) {
  if (!all_bad(s.bad, [](const ShapeFacts& f) { return f.pattern == ErrorPattern::boundary; }))
    return std::nullopt;
  const ShapeFacts& ex = *s.bad.front();
  return Lead{
      Cause::boundary_checks,
      fmt::format("only elements in the last partial tile of {} are wrong at {}: {}", ex.output, args_of(ex),
                  fix(Cause::boundary_checks,
                      "check the boundary conditions for sizes that are not a multiple of the tile"))};
}

// Most elements wrong at every failing shape, the same on a rerun: values
// in the wrong places or computed from the wrong elements, not a few
// threads at the edges (a tile not transposed in shared memory: all but
// its diagonal; a row-major index with the wrong width on a ragged shape).
std::optional<Lead> mostly_wrong(const Shapes& s) {
  if (!all_bad(s.bad,
               [](const ShapeFacts& f) { return f.rerun_changed <= 0 && f.wrong * 4 >= f.elements * 3; }))
    return std::nullopt;
  const ShapeFacts& ex = *s.bad.front();
  return Lead{
      Cause::index_arithmetic,
      fmt::format(
          "most of {} is wrong at every failing shape ({} of {} elements at {}), the same on a rerun: the "
          "values land in the wrong places or are computed from the wrong elements. {}",
          ex.output, ex.wrong, ex.elements, args_of(ex),
          fix(Cause::index_arithmetic,
              "Check the index arithmetic (row * width + col, with the right width for each matrix, and "
              "which "
              "index a shared-memory tile is read with)"))};
}

// A few elements wrong here and there, by no pattern the rules know.
Lead here_and_there(const Shapes& s) {
  const ShapeFacts& ex = *s.bad.front();
  return {
      Cause::wrong_values,
      fmt::format(
          "{} of {} elements of {} are wrong at {}, here and there{}: {}", ex.wrong, ex.elements, ex.output,
          args_of(ex), ex.rerun_changed == 0 ? " (a rerun on the same inputs gave the same result)" : "",
          fix(Cause::wrong_values,
              "look first for an off-by-one at the tile edges, then for a race (a missing __syncthreads)"))};
}

}  // namespace

}  // namespace cudalab::diagnosis::detail

namespace cudalab::diagnosis {

Lead diagnose(const std::vector<ShapeFacts>& facts, const Words* words) {
  using namespace detail;
  // The lab's words for this call, on this thread (the grader judges checks
  // of several labs side by side).
  const WordsScope scope(words);
  Shapes s{facts, {}, {}};
  for (const auto& f : facts) (failed(f) ? s.bad : s.good).push_back(&f);
  if (s.bad.empty()) return {};
  // The first rule whose facts hold leads; each says why it comes where it does.
  const Rule rules[] = {
      // A launcher that still says it is not implemented: nothing else the
      // shapes show matters yet.
      not_implemented_yet,
      // A check of one value speaks of the value, never of elements, rows or
      // columns: its rules are its own (diagnosis_one_value.cpp).
      one_value,
      // A launch that fails: the error and the configuration say it all,
      // unless it is an illegal address and the other failing shapes show
      // stores in the wrong places: then both are that one mistake.
      crash_of_misplaced_stores,
      // CPU mode's barrier not reached, before any other failed launch: the
      // barrier is why the launch failed.
      launch_stopped_at_barrier,
      launch_fails,
      // Unwritten-looking in CPU mode (NaN + x keeps the poison's bits
      // there), NaN everywhere on a GPU: neither is what happened, so this
      // comes before the rules that read NaN or elements never written.
      adds_to_output,
      // Seen as it happened (CPU mode): the skipped barrier is what makes
      // the values wrong, however they look.
      threads_skip_barrier,
      // Before the split by the tile: a load without its bound is wrong
      // exactly on the ragged shapes.
      nan_read_past_end,
      // The loop that stops short: before the split by the tile
      // (ragged_shapes_fail), which would tell it to load 0 past the end,
      // which it does.
      last_tile_never_added,
      // The split by the tile comes before the race (changes_on_rerun, below),
      // but a race can hide on the multiples too (gallery 23, a missing
      // second __syncthreads, on an H100: right at every multiple of 16, 130
      // of 131841 elements wrong at 513x257x129): a few elements here and
      // there at every wrong shape, values that change on a rerun and nothing
      // written outside is the race's signature, not the boundary's (a
      // missing boundary check makes whole edge tiles, or all of C, wrong).
      race_by_signature,
      // Right wherever written, and what is not written is whole last rows or
      // columns: before the split by the tile (a grid swapped between x and y is
      // right on every square shape, a multiple or not), which would blame the
      // boundary checks.
      unwritten_edge,
      unwritten_bands,
      // Right exactly where two dimensions are equal: before the split by the
      // tile, which the labs' square multiples satisfy too.
      dims_mixed,
      // The shapes split by a tile size: the boundary checks. Before the
      // race: a kernel without them also gives different results on a rerun
      // (on an H100, tiled and naive matmuls alike), the race does not split.
      ragged_shapes_fail,
      // A kernel that writes into its inputs: that explains wrong values and
      // results that change between runs alike, so before the race.
      writes_into_input,
      // Threads past the edge that store, past the end and into other
      // elements: before the race, as two of them may store into one element
      // (on an H100 the off-by-one variant's rerun changed 10 elements).
      edge_threads_store,
      // Different results on the same inputs: a race, whatever the pattern
      // (unless the shapes split by the tile, above: threads past the edge then
      // read memory outside the inputs, whose contents change between runs).
      changes_on_rerun,
      // After the race: this NaN is the same on a rerun.
      nan_from_unwritten_shared,
      // Writes outside the buffers or changed inputs, with right values;
      // where another failing shape has wrong values, both are said first.
      writes_outside_and_wrong,
      writes_outside,
      // The pattern of the wrong values, the same at every failing shape:
      // the patterns that name one mistake first, then the unwritten
      // elements by where they are, then the splits of the shapes by size,
      // then how much of the output is wrong.
      transposed,
      nothing_written,
      zeros_where_wrong,
      end_never_written,
      misplaced_stores,
      scattered_unwritten,
      one_tile_counts,
      larger_shapes_only,
      wrong_everywhere,
      last_partial_tile,
      mostly_wrong,
  };
  for (const Rule rule : rules)
    if (auto lead = rule(s)) return *lead;
  // None of them: the wrong elements here and there.
  return here_and_there(s);
}

std::string lead(const std::vector<ShapeFacts>& facts) {
  return diagnose(facts).text;
}

bool takes_words(Cause cause) {
  // Every cause a lead passes through fix() (here and in
  // diagnosis_one_value.cpp).
  switch (cause) {
    case Cause::race:
    case Cause::barrier_skipped:
    case Cause::unwritten_shared:
    case Cause::grid_short:
    case Cause::off_by_one_store:
    case Cause::rows_skipped:
    case Cause::misplaced_stores:
    case Cause::dims_mixed_up:
    case Cause::index_arithmetic:
    case Cause::boundary_checks:
    case Cause::loop_stops_short:
    case Cause::reads_past_end:
    case Cause::edge_threads_store:
    case Cause::writes_outside:
    case Cause::accumulates:
    case Cause::one_tile_only:
    case Cause::one_block_only:
    case Cause::stores_per_block:
    case Cause::wrong_values:
      return true;
    default:
      return false;
  }
}

}  // namespace cudalab::diagnosis
