// One leading diagnosis per failing check, from the facts of all its shapes
// (harness/include/cudalab/diagnosis.h). Host-only: made-up facts.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "cudalab/buffer.h"
#include "cudalab/compare.h"
#include "cudalab/diagnosis.h"
#include "testbed.h"

using cudalab::Cause;
using cudalab::ErrorPattern;
using cudalab::diagnosis::diagnose;
using cudalab::diagnosis::lead;
using cudalab::diagnosis::ShapeFacts;

namespace {

ShapeFacts shape(const std::string& args, bool ok, ErrorPattern pattern = ErrorPattern::everywhere,
                 std::size_t elements = 100, std::size_t wrong = 90) {
  ShapeFacts f;
  f.label = "matmul_tiled(" + args + ")";
  f.dims = cudalab::diagnosis::parse_dims(args);
  f.compared = true;
  f.elements = elements;
  f.output = "C";
  if (!ok) {
    f.values_ok = false;
    f.pattern = pattern;
    f.wrong = wrong;
  }
  return f;
}

}  // namespace

TEST_CASE("A shape's dimensions are read from its label", "[diagnosis][harness]") {
  const auto d = cudalab::diagnosis::parse_dims("M=17 N=33 K=9");
  REQUIRE(d.size() == 3);
  CHECK(d[0] == std::make_pair(std::string("M"), 17LL));
  CHECK(d[2] == std::make_pair(std::string("K"), 9LL));
  CHECK(cudalab::diagnosis::parse_dims("rows=32 cols=1000").size() == 2);
  CHECK(cudalab::diagnosis::parse_dims("no shape").empty());
}

TEST_CASE("Right on multiples of the tile and wrong elsewhere leads with the boundary checks",
          "[diagnosis][harness]") {
  // A missing boundary check on K: the error is spread over all of C at
  // 17x33x9 (C[0][0] too), so no shape alone points at the boundary.
  const std::vector<ShapeFacts> facts = {shape("M=1 N=1 K=1", false), shape("M=17 N=33 K=9", false),
                                         shape("M=64 N=64 K=100", false), shape("M=64 N=64 K=64", true),
                                         shape("M=1000 N=1000 K=1000", false)};
  const std::string s = lead(facts);
  INFO(s);
  CHECK_THAT(
      s, Catch::StartsWith("the boundary checks. Right on every shape where M, N and K are multiples of 16, "
                           "wrong on every shape where K is not (K=1 at M=1 N=1 K=1)"));
  CHECK_THAT(s, !Catch::Contains("race"));
}

TEST_CASE("Two checks of one kernel without boundary checks name the same tile, its block's side",
          "[unit][diagnosis]") {
  // Lab 03's checks on a tiled matmul without boundary checks: the memory
  // check's shapes split by 8 as well (right at 64^3 only), the ragged check's
  // do not (1000^3 is a multiple of 8 and wrong). Both launch 16 x 16 blocks.
  const auto launched = [](ShapeFacts f) {
    f.launch = "matmul_tiled_kernel<<<grid (4, 4, 1), block (16, 16, 1)>>>";
    return f;
  };
  std::vector<ShapeFacts> memory = {launched(shape("M=17 N=33 K=9", false)),
                                    launched(shape("M=513 N=257 K=129", false)),
                                    launched(shape("M=64 N=64 K=64", true))};
  memory[0].memory = {"wrote 4 bytes past the end of C (4 bytes after it): threads past the edge store"};
  std::vector<ShapeFacts> ragged = {
      launched(shape("M=1 N=1 K=1", false)), launched(shape("M=17 N=33 K=9", false)),
      launched(shape("M=64 N=64 K=100", false)), launched(shape("M=1000 N=1000 K=1000", false)),
      launched(shape("M=64 N=64 K=64", true))};
  const std::string m = lead(memory), r = lead(ragged);
  INFO(m);
  INFO(r);
  CHECK_THAT(m, Catch::Contains("multiples of 16"));
  CHECK_THAT(r, Catch::Contains("multiples of 16"));
  // The write outside is said where it is said, not promised "(below)":
  // the lines under a lead need not hold it.
  CHECK_THAT(m, !Catch::Contains("(below)"));
  CHECK_THAT(m,
             Catch::Contains("write outside the buffers there (at M=17 N=33 K=9: wrote 4 bytes past the end "
                             "of C (4 bytes after it))"));
  // A one-value output's write says the fact, not its two guesses.
  memory[0].memory = {
      "wrote 30 floats past the end of C (first at C[1]), which holds one value: a thread past "
      "the end of the data was not stopped by a boundary check, or a store at an index like "
      "C[blockIdx.x] where only C itself (index 0) exists"};
  CHECK_THAT(lead(memory),
             Catch::Contains("(at M=17 N=33 K=9: wrote 30 floats past the end of C (first at C[1]))"));
  CHECK_THAT(lead(memory), !Catch::Contains("blockIdx.x"));
  // Without a launch (the grader's evidence), the smallest tile that splits.
  for (auto& f : memory) f.launch.clear();
  CHECK_THAT(lead(memory), Catch::Contains("multiples of 8"));
}

TEST_CASE("A split by the tile leads with the boundary checks even when a rerun changes the values",
          "[diagnosis][harness]") {
  // Threads past the edge read memory outside A and B, which differs between
  // runs (seen on an H100 for tiled and naive matmuls without boundary checks).
  auto facts = std::vector<ShapeFacts>{shape("M=17 N=33 K=9", false, ErrorPattern::scattered, 561, 30),
                                       shape("M=513 N=257 K=129", false), shape("M=64 N=64 K=64", true)};
  facts[0].rerun_changed = 30;
  const std::string s = lead(facts);
  CHECK_THAT(s, Catch::StartsWith("the boundary checks."));
  CHECK(diagnose(facts).cause == Cause::boundary_checks);
  CHECK_THAT(s, Catch::Contains("change from run to run"));
}

TEST_CASE("A race that hides on the multiples of the tile still leads as a race", "[diagnosis][harness]") {
  // Gallery 23 on an H100: no __syncthreads after the inner product, right at
  // every multiple of 16, a few elements wrong elsewhere, changing on a rerun.
  auto facts = std::vector<ShapeFacts>{
      shape("M=64 N=64 K=64", true), shape("M=513 N=257 K=129", false, ErrorPattern::scattered, 131841, 130),
      shape("M=17 N=33 K=9", false, ErrorPattern::scattered, 561, 3)};
  facts[1].rerun_changed = 241;
  CHECK_THAT(lead(facts), Catch::StartsWith("a race between threads"));
  CHECK(diagnose(facts).cause == Cause::race);
  // The same without a rerun that differs: nothing tells a race.
  facts[1].rerun_changed = 0;
  CHECK_THAT(lead(facts), Catch::StartsWith("the boundary checks."));
  CHECK(diagnose(facts).cause == Cause::boundary_checks);
  // Or with writes outside C: threads past the edge store there.
  facts[1].rerun_changed = 241;
  facts[1].memory = {"wrote 12 bytes past the end of C"};
  CHECK_THAT(lead(facts), Catch::StartsWith("the boundary checks."));
  CHECK(diagnose(facts).cause == Cause::boundary_checks);
}

TEST_CASE(
    "An output that is 0 wherever it is wrong leads with a result never stored, not the index arithmetic",
    "[diagnosis][harness]") {
  auto facts = std::vector<ShapeFacts>{shape("M=17 N=33 K=9", false), shape("M=64 N=64 K=64", false)};
  for (auto& f : facts) f.wrong_zero = f.wrong;
  CHECK_THAT(lead(facts), Catch::StartsWith("C holds 0 wherever it is wrong at M=17 N=33 K=9"));
  CHECK(diagnose(facts).cause == Cause::stores_zero);
  facts[1].wrong_zero = facts[1].wrong - 1;  // one wrong value that is not 0: another cause
  CHECK_THAT(lead(facts), !Catch::Contains("holds 0"));
}

TEST_CASE("Only K ragged in every failure says so", "[diagnosis][harness]") {
  const std::vector<ShapeFacts> facts = {shape("M=16 N=16 K=16", true), shape("M=17 N=33 K=16", true),
                                         shape("M=64 N=64 K=104", false), shape("M=32 N=48 K=9", false)};
  const std::string s = lead(facts);
  CHECK_THAT(s, Catch::Contains("wrong on every shape where K is not (K=104 at M=64 N=64 K=104)"));
  CHECK_THAT(s, !Catch::Contains("one is not"));
}

TEST_CASE("A loop over K that stops before its last, partial tile leads as such, not as the boundary checks",
          "[diagnosis][harness]") {
  std::vector<ShapeFacts> facts = {shape("M=16 N=16 K=16", true), shape("M=17 N=33 K=9", false),
                                   shape("M=64 N=64 K=100", false), shape("M=1000 N=1000 K=1000", false)};
  // K=9 is 0 terms for tiles of 16, 32 and 64; K=100 is 96 for 8, 16 and 32: a tile of 16 or 32.
  facts[1].short_loop_tested = true, facts[1].short_loop_tiles = {16, 32, 64}, facts[1].short_loop_dim = "K";
  facts[2].short_loop_tested = true, facts[2].short_loop_tiles = {8, 16, 32}, facts[2].short_loop_dim = "K";
  // 1000^3 was too big to multiply again: it neither confirms nor refutes.
  const std::string s = lead(facts);
  CHECK_THAT(s, Catch::StartsWith("the loop over K stops before the last, partial tile: at M=64 N=64 K=100"));
  CHECK(diagnose(facts).cause == Cause::loop_stops_short);
  CHECK_THAT(s, Catch::Contains("the first 96 of its 100 terms"));
  CHECK_THAT(s, !Catch::Contains("boundary"));
  // 0 everywhere at K=16, against tiles of 32 and 64 only (the other shapes are multiples of
  // every tile): that keeps no term, and a kernel that stores 0 looks the same (gallery 53).
  {
    std::vector<ShapeFacts> zero = {shape("M=16 N=16 K=16", false), shape("M=64 N=64 K=64", false)};
    zero[0].short_loop_tested = true, zero[0].short_loop_tiles = {32, 64}, zero[0].short_loop_dim = "K";
    CHECK_THAT(lead(zero), !Catch::Contains("the loop over K stops"));
  }
  // One shape tested and not so: the boundary checks again.
  facts[3].short_loop_tested = true, facts[3].short_loop_dim = "K";
  CHECK_THAT(lead(facts), Catch::StartsWith("the boundary checks."));
  CHECK(diagnose(facts).cause == Cause::boundary_checks);
}

TEST_CASE("Different results on a rerun lead with a race, whatever the pattern", "[diagnosis][harness]") {
  auto facts = std::vector<ShapeFacts>{shape("M=16 N=16 K=16", false, ErrorPattern::scattered, 256, 64),
                                       shape("M=17 N=33 K=9", false, ErrorPattern::boundary)};
  facts[0].rerun_changed = 40;
  const std::string s = lead(facts);
  CHECK_THAT(s, Catch::StartsWith("a race between threads. Run twice on the same inputs at M=16 N=16 K=16"));
  CHECK(diagnose(facts).cause == Cause::race);
  CHECK_THAT(s, Catch::Contains("__syncthreads"));
  CHECK_THAT(s, !Catch::Contains("boundary"));
}

TEST_CASE("A lab's words for a cause replace the general fix, and only that cause's",
          "[diagnosis][harness]") {
  // The boundary split of a matmul-like check: right on multiples of 16.
  const std::vector<ShapeFacts> facts = {shape("M=16 N=16 K=16", true, ErrorPattern::none, 256),
                                         shape("M=17 N=33 K=9", false, ErrorPattern::boundary, 561)};
  const std::string general = lead(facts);
  REQUIRE_THAT(general, Catch::StartsWith("the boundary checks.") && Catch::Contains("partial tile"));
  const cudalab::diagnosis::Words words = {
      {Cause::boundary_checks, "a thread whose row or column is past the edge of C must not store"},
      {Cause::race, "never used here"}};
  const auto worded = diagnose(facts, &words);
  CHECK(worded.cause == Cause::boundary_checks);
  CHECK_THAT(worded.text,
             Catch::StartsWith("the boundary checks. Right on every shape where") &&
                 Catch::EndsWith(": a thread whose row or column is past the edge of C must not store") &&
                 !Catch::Contains("tile"));
  // Another lab's words (an empty list) leave the general ones.
  const cudalab::diagnosis::Words none;
  CHECK(diagnose(facts, &none).text == general);
}

TEST_CASE("A failed launch's cause is what its values say, so a zero grid and a huge block are two causes",
          "[diagnosis][harness]") {
  ShapeFacts grid = shape("n=1", true), block = shape("n=1", true);
  grid.launch_failed = block.launch_failed = true;
  grid.launch_error = block.launch_error = "the kernel launch failed: invalid configuration argument";
  grid.launch_cause = cudalab::Cause::empty_grid;
  block.launch_cause = cudalab::Cause::block_too_large;
  CHECK(diagnose({grid, shape("n=1000", true)}).cause == Cause::empty_grid);
  CHECK(diagnose({block, shape("n=1000", true)}).cause == Cause::block_too_large);
  // Nothing failed: no cause at all.
  CHECK(diagnose({shape("n=1000", true)}).cause == Cause::none);
}

TEST_CASE("A failed launch leads with its configuration's problem", "[diagnosis][harness]") {
  ShapeFacts f = shape("n=1", true);
  f.launch_failed = true;
  f.launch_error = "the kernel launch failed: invalid argument (cudaErrorInvalidValue)";
  f.launch_advice =
      "a block of more than 1024 threads (4096 x 1 x 1 = 4096): a block has at most 1024 (your launch: "
      "vector_add_kernel<<<grid (1, 1, 1), block (4096, 1, 1)>>>)";
  const std::string s = lead({f, shape("n=1000", true)});
  CHECK_THAT(s, Catch::StartsWith("the launch fails at n=1 (the kernel launch failed: invalid argument"));
  CHECK(diagnose({f, shape("n=1000", true)}).cause == Cause::launch_fails);
  CHECK_THAT(s,
             Catch::Contains("block (4096, 1, 1)") && Catch::Contains("a block of more than 1024 threads"));
}

TEST_CASE("A store past the end of shared memory that CPU mode saw leads over a guess from the shapes",
          "[diagnosis][harness]") {
  // An unseen transpose whose load loop steps by 1 (CPU mode, 2026-11-25):
  // right at 32 x 32, the only square shape, so the shapes alone suggested
  // rows and cols mixed up.
  ShapeFacts crashed = shape("rows=64 cols=256", false);
  crashed.launch_failed = true;
  crashed.launch_error =
      "the kernel failed while running: an illegal memory access was encountered (cudaErrorIllegalAddress)";
  crashed.launch_cause = Cause::illegal_address;
  crashed.launch_advice = std::string("threads of block (0, 0, 0) ") + cudalab::diagnosis::kSharedOverrun +
                          " static __shared__ variables (4224 bytes): 894 bytes after them changed";
  ShapeFacts wrong = shape("rows=64 cols=32", false, ErrorPattern::transposed);
  const std::string s = lead({shape("rows=32 cols=32", true), crashed, wrong});
  INFO(s);
  CHECK_THAT(s, Catch::StartsWith("the launch fails at rows=64 cols=256") &&
                    Catch::Contains("wrote past the end of the kernel's static __shared__ variables") &&
                    !Catch::Contains("mixed up"));
  CHECK(diagnose({shape("rows=32 cols=32", true), crashed, wrong}).cause == Cause::shared_overrun);
}

TEST_CASE("Unwritten elements in whole last rows mean a grid too small; scattered ones do not",
          "[diagnosis][harness]") {
  ShapeFacts f = shape("rows=33 cols=65", false, ErrorPattern::partly_unwritten);
  f.unwritten = 65;
  f.unwritten_trailing = true;
  CHECK_THAT(lead({f}), Catch::StartsWith("the grid does not cover all of C"));
  // The same under the reference's own grid and blocks (an unseen transpose
  // whose second phase kept in's block offsets, H100 2026-11-25): threads ran
  // for the end, so the grid is not short.
  ShapeFacts same = f;
  same.launch = same.reference_launch = "transpose_kernel<<<grid (3, 2, 1), block (32, 8, 1)>>>";
  const std::string s = lead({same});
  INFO(s);
  CHECK_THAT(
      s, Catch::StartsWith("65 elements of C are never written at rows=33 cols=65, all at its end, and 25 "
                           "more are wrong, though your grid and blocks are the reference solution's "
                           "(grid (3, 2, 1), block (32, 8, 1))") &&
             Catch::Contains("the wrong block index") && !Catch::Contains("grid does not cover"));
  CHECK(diagnose({same}).cause == Cause::index_misses_end);
  same.reference_launch = "transpose_kernel<<<grid (2, 3, 1), block (32, 8, 1)>>>";
  CHECK_THAT(lead({same}), Catch::StartsWith("the grid does not cover all of C"));
  f.unwritten_trailing = false;
  f.wrong = f.unwritten;  // only unwritten: threads that skip their store
  CHECK_THAT(lead({f}), Catch::StartsWith("65 elements of C are never written") &&
                            Catch::Contains("at scattered positions") &&
                            !Catch::Contains("grid does not cover"));
  CHECK(diagnose({f}).cause == Cause::scattered_unwritten);
}

TEST_CASE("Whole last rows unwritten under the reference's own grid lead with a bound, not the grid",
          "[diagnosis][harness]") {
  // A transpose whose store checks in's sides instead of out's (unseen
  // kernel, CPU mode 2026-11-25): at 64 x 256 out's last 192 rows are never
  // written, as with a swapped grid, but the grid is the reference's.
  ShapeFacts f = shape("rows=64 cols=256", false, ErrorPattern::partly_unwritten, 16384, 12288);
  f.output = "out";
  f.unwritten = 12288;
  f.unwritten_trailing = true;
  f.rows = 256, f.cols = 64, f.last_rows = 192;
  f.launch = "transpose_kernel<<<grid (8, 2, 1), block (32, 8, 1)>>>";
  f.reference_launch = "transpose_kernel<<<grid (8, 2, 1), block (32, 8, 1)>>>";
  const std::string s = lead({f});
  INFO(s);
  CHECK_THAT(s,
             Catch::StartsWith("no thread stores into out's last rows: at rows=64 cols=256 the last "
                               "192 rows of out are never written") &&
                 Catch::Contains("the condition before the store stops them") &&
                 Catch::Contains("your grid and blocks are the reference solution's (grid (8, 2, 1), block "
                                 "(32, 8, 1); out is 256 rows x 64 columns)") &&
                 !Catch::Contains("grid does not cover"));
  // A swapped grid differs from the reference's: the grid leads.
  f.launch = "transpose_kernel<<<grid (2, 8, 1), block (32, 8, 1)>>>";
  CHECK_THAT(lead({f}), Catch::StartsWith("the grid does not cover all of out"));
  // A vector add indexed by threadIdx.x alone: one block's worth written.
  ShapeFacts v = shape("n=1048583", false, ErrorPattern::partly_unwritten, 1048583, 1048327);
  v.output = "c";
  v.unwritten = 1048327;
  v.unwritten_trailing = true;
  v.rows = 1, v.cols = 1048583;
  v.launch = v.reference_launch = "vector_add_kernel<<<grid (4097, 1, 1), block (256, 1, 1)>>>";
  const std::string t = lead({v});
  INFO(t);
  CHECK_THAT(t,
             Catch::StartsWith("every block stores into the same elements: at n=1048583 only the first 256 "
                               "elements of c are written, one block's worth") &&
                 Catch::Contains("`blockIdx.x * blockDim.x + threadIdx.x`"));
  // Without the reference's launch, as before.
  f.launch = f.reference_launch;
  f.reference_launch.clear();
  CHECK_THAT(lead({f}), Catch::StartsWith("the grid does not cover all of out"));
}

TEST_CASE("Elements never written next to wrong ones, the same on a rerun, lead with the store's index",
          "[diagnosis][harness]") {
  // A transpose storing with in's width: out[(row + j) * cols + col].
  ShapeFacts f = shape("rows=64 cols=256", false, ErrorPattern::partly_unwritten, 16384, 16320);
  f.output = "out";
  f.rows = 256;
  f.cols = 64;
  f.unwritten = 12288;
  f.rerun_changed = 0;
  f.memory = {
      "wrote 4096 floats past the end of out (first at out[16384], 16384 elements long): a thread "
      "outside the data was not stopped by a boundary check"};
  // Right at a shape that is not square: no mix-up of rows and cols (below).
  const std::string s = lead({f, shape("rows=128 cols=64", true)});
  INFO(s);
  CHECK_THAT(
      s, Catch::StartsWith("the stores land in the wrong places: at rows=64 cols=256, 12288 elements of "
                           "out are never written and 4032 others hold wrong values, the same on a rerun"));
  CHECK_THAT(s, Catch::Contains("out is 256 rows x 64 columns") && Catch::Contains("(first at out[16384]") &&
                    !Catch::Contains("boundary check"));

  SECTION("with an illegal address at another shape, both are that one mistake") {
    ShapeFacts crash = shape("rows=1000 cols=3000", true);
    crash.launch_failed = true;
    crash.launch_error =
        "the kernel failed while running: an illegal memory access was encountered (cudaErrorIllegalAddress)";
    crash.launch_cause = Cause::illegal_address;
    const std::string t = lead({f, crash});
    INFO(t);
    CHECK_THAT(t, Catch::StartsWith("the stores land in the wrong places") &&
                      Catch::Contains("at rows=1000 cols=3000 the launch fails"));
    // Alone, the crash leads with itself.
    CHECK_THAT(lead({crash}), Catch::StartsWith("the launch fails at rows=1000 cols=3000"));
  }
  SECTION("but not when a rerun changes the values: that is a race") {
    f.rerun_changed = 300;
    CHECK_THAT(lead({f}), Catch::StartsWith("a race between threads"));
  }
  SECTION("nor when what is missing is whole last rows: that is the grid") {
    f.unwritten_trailing = true;
    f.memory.clear();
    CHECK_THAT(lead({f}), !Catch::StartsWith("the stores land in the wrong places"));
  }
}

TEST_CASE("Only the larger shapes wrong, with the smaller right, is said as such", "[diagnosis][harness]") {
  const std::vector<ShapeFacts> facts = {
      shape("M=16 N=16 K=16", true, ErrorPattern::none, 256),
      shape("M=256 N=256 K=256", true, ErrorPattern::none, 65536),
      shape("M=512 N=512 K=512", false, ErrorPattern::scattered, 262144, 40)};
  CHECK_THAT(lead(facts), Catch::StartsWith("only the larger shapes are wrong (from M=512 N=512 K=512 up"));
  CHECK(diagnose(facts).cause == Cause::large_shapes_only);
}

TEST_CASE("Not implemented yet needs no diagnosis, and a passing check gets none", "[diagnosis][harness]") {
  ShapeFacts f = shape("n=1", true);
  f.launch_failed = f.not_implemented = true;
  CHECK(lead({f}).empty());
  CHECK(lead({shape("n=1", true)}).empty());
}

TEST_CASE("Whole last rows unwritten are told apart from scattered ones by compare", "[diagnosis][harness]") {
  const std::size_t rows = 4, cols = 5;
  std::vector<float> got(rows * cols, 1.0f);
  const std::vector<double> expected(rows * cols, 1.0);
  for (std::size_t j = 0; j < cols; ++j) got[3 * cols + j] = testbed::poison();
  CHECK(cudalab::compare("C", got, expected, rows, cols).unwritten_trailing);
  got.assign(rows * cols, 1.0f);
  got[1 * cols + 2] = testbed::poison();
  CHECK_FALSE(cudalab::compare("C", got, expected, rows, cols).unwritten_trailing);
}

TEST_CASE("A matrix narrower than the tile is not called a boundary error", "[diagnosis][harness]") {
  // 17 x 1: all of it is a partial tile of 32 columns; wrong at [0][0].
  std::vector<float> got(17, 1.0f);
  const std::vector<double> expected(17, 1.0);
  got[0] = 5.0f;
  CHECK(cudalab::compare("C", got, expected, 17, 1).pattern != cudalab::ErrorPattern::boundary);
}

namespace {

// A failing shape whose only wrong elements are its last rows / columns, never written.
ShapeFacts unwritten_edge(const std::string& args, std::size_t rows, std::size_t cols, std::size_t last_rows,
                          std::size_t last_cols) {
  ShapeFacts f = shape(args, false, ErrorPattern::partly_unwritten, rows * cols);
  f.rows = rows;
  f.cols = cols;
  f.last_rows = last_rows;
  f.last_cols = last_cols;
  f.unwritten = f.wrong = last_rows * cols + last_cols * rows - last_rows * last_cols;
  f.unwritten_trailing = true;
  f.rerun_changed = 0;
  return f;
}

}  // namespace

TEST_CASE("One last element or row missing at every failing shape is an off-by-one before the store",
          "[diagnosis][harness]") {
  ShapeFacts one = shape("n=1", false, ErrorPattern::never_written, 1, 1);
  one.unwritten = 1;
  one.rows = one.cols = 1;
  const std::vector<ShapeFacts> facts = {one, unwritten_edge("n=1000", 1, 1000, 0, 1),
                                         shape("n=4", true, ErrorPattern::none, 4)};
  const std::string s = lead(facts);
  CHECK_THAT(s, Catch::StartsWith(
                    "an off-by-one before the store: at n=1000 the last element of C is never written"));
  CHECK_THAT(s, !Catch::Contains("grid does not cover") && !Catch::Contains("boundary"));
  CHECK(diagnose(facts).cause == Cause::off_by_one_store);
}

TEST_CASE("Last rows missing, more than one at some shape, are a grid that does not cover the output",
          "[diagnosis][harness]") {
  // The grid's x and y swapped (x from M, y from N): right on every square
  // shape, multiples of the tile or not; a split by the tile would wrongly
  // blame the boundary checks.
  ShapeFacts big = unwritten_edge("M=513 N=257 K=129", 513, 257, 241, 0);
  big.launch = "matmul_tiled_kernel<<<grid (33, 17, 1), block (16, 16, 1)>>>";
  const std::vector<ShapeFacts> facts = {shape("M=16 N=16 K=16", true, ErrorPattern::none, 256),
                                         shape("M=17 N=17 K=9", true, ErrorPattern::none, 289),
                                         unwritten_edge("M=33 N=17 K=9", 33, 17, 1, 0), big};
  const std::string s = lead(facts);
  CHECK_THAT(
      s, Catch::StartsWith("the grid does not cover all of C: at M=513 N=257 K=129 the last 241 rows of C "
                           "are never written"));
  CHECK(diagnose(facts).cause == Cause::grid_short);
  CHECK_THAT(
      s, Catch::Contains("your launch: matmul_tiled_kernel<<<grid (33, 17, 1), block (16, 16, 1)>>>; C is "
                         "513 rows x 257 columns"));
}

TEST_CASE("Most elements wrong and the same on a rerun lead with the index arithmetic, not 'here and there'",
          "[diagnosis][harness]") {
  ShapeFacts f = shape("rows=32 cols=32", false, ErrorPattern::scattered, 1024, 992);
  f.rerun_changed = 0;
  CHECK_THAT(lead({f}),
             Catch::StartsWith("most of C is wrong at every failing shape (992 of 1024 elements at "
                               "rows=32 cols=32), the same on a rerun"));
  f.wrong = 40;  // a few: still here and there
  CHECK_THAT(lead({f}), Catch::Contains("here and there"));
}

TEST_CASE("An output never written by a kernel that ran names the launch, not a missing one",
          "[diagnosis][harness]") {
  // TILE 32 with blocks of 16 x 16 threads (unseen kernel, CPU mode
  // 2026-11-25): the tile's unfilled part is NaN, and so is every C.
  ShapeFacts f = shape("M=16 N=16 K=16", false, ErrorPattern::never_written, 256, 256);
  f.unwritten = 256;
  CHECK_THAT(lead({f}), Catch::Contains("does the launcher launch the kernel"));
  f.launch = "matmul_tiled_kernel<<<grid (1, 1, 1), block (16, 16, 1)>>>";
  const std::string s = lead({f});
  INFO(s);
  CHECK_THAT(s, Catch::StartsWith("no element of C is written at M=16 N=16 K=16, though the kernel ran (your "
                                  "launch: matmul_tiled_kernel<<<grid (1, 1, 1), block (16, 16, 1)>>>)"));
  CHECK(diagnose({f}).cause == Cause::never_written);
  CHECK_THAT(s, Catch::Contains("a tile larger than the block") &&
                    !Catch::Contains("does the launcher launch the kernel"));
}

TEST_CASE("An output right only when it starts at 0 leads with += into it, not with 'never written'",
          "[diagnosis][harness]") {
  ShapeFacts f = shape("M=16 N=16 K=16", false, ErrorPattern::never_written, 256, 256);
  f.unwritten = 256;
  f.memory = {"wrote nothing into C"};
  CHECK_THAT(lead({f}), Catch::StartsWith("no element of C is written"));
  f.accumulates = true;
  const std::string s = lead({f});
  CHECK_THAT(s, Catch::StartsWith("C is right only when it starts at 0: at M=16 N=16 K=16"));
  CHECK(diagnose({f}).cause == Cause::accumulates);
  CHECK_THAT(s, Catch::Contains("`C[i] += ...`"));
}

namespace {

// A matmul's shape, launched with blocks of 16 x 16.
ShapeFacts matmul(int m, int n, int k, bool ok) {
  ShapeFacts f = shape("M=" + std::to_string(m) + " N=" + std::to_string(n) + " K=" + std::to_string(k), ok,
                       ErrorPattern::everywhere, std::size_t(m) * n, std::size_t(m) * n);
  f.launch = "matmul_naive_kernel<<<grid (" + std::to_string((n + 15) / 16) + ", " +
             std::to_string((m + 15) / 16) + ", 1), block (16, 16, 1)>>>";
  return f;
}

}  // namespace

TEST_CASE("Right exactly where two dimensions are equal leads with them mixed up, not the boundary checks",
          "[diagnosis][harness]") {
  // A naive matmul reading B with K as its width, `B[k * K + col]` (unseen
  // kernel, H100 2026-11-24): lab 02's ragged shapes are right only where
  // N = K, and those (1x1x1, 1000^3) are square, so M = N = K splits them too.
  std::vector<ShapeFacts> facts = {matmul(1, 1, 1, true),         matmul(17, 33, 9, false),
                                   matmul(31, 17, 47, false),     matmul(513, 257, 129, false),
                                   matmul(2047, 129, 513, false), matmul(1000, 1000, 1000, true)};
  for (auto& f : facts) f.rerun_changed = f.values_ok ? -1 : 0;
  std::string s = lead(facts);
  INFO(s);
  CHECK_THAT(s,
             Catch::StartsWith("M, N and K mixed up in an index: right on every shape where M = N = K (M=1 "
                               "N=1 K=1 and M=1000 N=1000 K=1000), wrong on every shape where they differ. "
                               "At M=17 N=33 K=9, 561 of 561 elements of C are wrong"));
  CHECK_THAT(s, !Catch::Contains("boundary checks") && Catch::Contains("row * width + col"));

  SECTION("a shape with M = N but K apart (lab 03's 64x64x100) no longer says M = N") {
    facts.push_back(matmul(64, 64, 100, false));
    s = lead(facts);
    CHECK_THAT(s,
               Catch::StartsWith("M, N and K mixed up in an index: right on every shape where M = K (M=1 N=1 "
                                 "K=1 and M=1000 N=1000 K=1000; the same shapes as where N = K), wrong on "
                                 "every shape where they differ"));
  }
  SECTION("right only where every side is a multiple of the block is the boundary checks' sign") {
    // no_boundary's memory check: 64^3 right, blocks of 16.
    facts = {matmul(17, 33, 9, false), matmul(513, 257, 129, false), matmul(64, 64, 64, true)};
    CHECK_THAT(lead(facts), Catch::StartsWith("the boundary checks."));
    CHECK(diagnose(facts).cause == Cause::boundary_checks);
  }
  SECTION("a ragged square shape that fails is the boundary checks' sign, not a mix-up") {
    facts[0] = matmul(1, 1, 1, false);
    facts.push_back(matmul(64, 64, 64, true));
    CHECK_THAT(lead(facts), !Catch::Contains("mixed up"));
  }
  SECTION("right only at 1x1x1, where every index is 0, is no evidence of a mix-up") {
    facts.pop_back();
    CHECK_THAT(lead(facts), !Catch::Contains("mixed up"));
  }
  SECTION("results that change on a rerun are not a mix-up") {
    facts[1].rerun_changed = 20;
    CHECK_THAT(lead(facts), !Catch::Contains("mixed up"));
  }
}

TEST_CASE("Rows and cols mixed up, with misplaced stores and a crash at another shape, is one lead",
          "[diagnosis][harness]") {
  // A matrix add indexing with row * rows + col, in CPU mode: right at 1x1 and
  // 1000x1000, misplaced at 33x65, an illegal address at 4097x31.
  ShapeFacts wrong = shape("rows=33 cols=65", false, ErrorPattern::partly_unwritten, 2145, 2100);
  wrong.unwritten = 1000;
  wrong.rerun_changed = 0;
  ShapeFacts crash = shape("rows=4097 cols=31", true);
  crash.launch_failed = true;
  crash.launch_error =
      "the kernel failed while running: an illegal memory access was encountered (cudaErrorIllegalAddress)";
  crash.launch_cause = Cause::illegal_address;
  ShapeFacts square = shape("rows=1000 cols=1000", true);
  square.launch = "matrix_add_kernel<<<grid (32, 125, 1), block (32, 8, 1)>>>";  // 1000: not a multiple of 32
  const std::string s = lead({shape("rows=1 cols=1", true), wrong, square, crash});
  INFO(s);
  CHECK_THAT(s,
             Catch::StartsWith("rows and cols mixed up in an index: right on every shape where rows = cols "
                               "(rows=1 cols=1 and rows=1000 cols=1000)"));
  CHECK_THAT(s, Catch::Contains("At rows=33 cols=65, the stores land in the wrong places: 1000 elements of C "
                                "are never written and 1100 others hold wrong values") &&
                    Catch::Contains("at rows=4097 cols=31 the launch fails"));
}

TEST_CASE("Threads that skip a barrier are told to keep it out of branches, in the output's own name",
          "[diagnosis][harness]") {
  ShapeFacts f = shape("rows=33 cols=65", false, ErrorPattern::scattered, 2145, 300);
  f.output = "out";
  f.barrier_skip =
      "in transpose_kernel, 248 of the 256 threads of block (2, 0, 0) had finished the kernel (thread (1, 0, "
      "0) first) without the __syncthreads() that the other 8 waited at";
  const std::string s = lead({f});
  INFO(s);
  CHECK_THAT(s, Catch::StartsWith("a __syncthreads() that some threads never reach: at rows=33 cols=65, in "
                                  "transpose_kernel, 248 of the 256"));
  CHECK(diagnose({f}).cause == Cause::barrier_skipped);
  CHECK_THAT(s, Catch::Contains("returned early or skipped the barrier inside an `if`") &&
                    Catch::Contains("past the edge of out") && !Catch::Contains("outside C"));
}

TEST_CASE("A launch CPU mode stopped at a barrier not every thread reaches leads with that barrier",
          "[diagnosis][harness]") {
  // What harness/src/run.cpp records for simt's error (its words from
  // kBarrierNotReached on), at a ragged shape of a tiled matmul whose first
  // __syncthreads() sits inside `if (t + tx < K)`.
  ShapeFacts f = shape("M=17 N=33 K=9", false);
  f.launch_failed = true;
  f.launch_error = "the kernel failed while running: unspecified launch failure (cudaErrorLaunchFailure)";
  f.launch_advice =
      std::string(cudalab::diagnosis::kBarrierNotReached) +
      ": the __syncthreads() at matmul_tiled.cu:45 was reached by 144 of the 256 threads of block "
      "(0, 0, 0), while threads 9..15, 25..31 wait at another __syncthreads() at "
      "matmul_tiled.cu:51: a barrier inside a branch (or a loop) that not every thread of the "
      "block takes (your launch: matmul_tiled_kernel<<<grid (3, 2, 1), block (16, 16, 1)>>>)";
  const std::string s = lead({matmul(16, 16, 16, true), f});
  INFO(s);
  CHECK_THAT(s, Catch::StartsWith("a __syncthreads() that some threads never reach: at M=17 N=33 K=9, the "
                                  "__syncthreads() at matmul_tiled.cu:45 was reached by 144 of the 256"));
  CHECK(diagnose({matmul(16, 16, 16, true), f}).cause == Cause::barrier_skipped);
  CHECK_THAT(s, Catch::Contains("CPU mode stopped the kernel there (the kernel failed while running: "
                                "unspecified launch failure (cudaErrorLaunchFailure))") &&
                    !Catch::Contains("the launch fails"));
}

TEST_CASE("Writes past the end at every failing shape, with a few wrong values, lead with the edge threads",
          "[diagnosis][harness]") {
  // A naive matmul with `if (row > M || col > N) return;` (unseen kernel, H100
  // 2026-11-24): at 1x1x1 the values are right but 2 floats land past the
  // end; at 17x33x9 a thread one column past the edge also stores into the
  // next row.
  ShapeFacts one = matmul(1, 1, 1, true);
  one.memory = {
      "wrote 2 floats past the end of C (first at C[1], 1 elements long): a thread outside the data "
      "was not stopped by a boundary check"};
  ShapeFacts small = matmul(17, 33, 9, false);
  small.wrong = 16;
  small.memory = {
      "wrote 34 floats past the end of C (first at C[561], 561 elements long): a thread outside "
      "the data was not stopped by a boundary check"};
  ShapeFacts square = matmul(1000, 1000, 1000, false);
  square.wrong = 999;
  square.memory = {
      "wrote 1001 floats past the end of C (first at C[1000000], 1000000 elements long): a "
      "thread outside the data was not stopped by a boundary check"};
  const std::string s = lead({one, small, square});
  INFO(s);
  CHECK_THAT(
      s, Catch::StartsWith("threads past the edge store: at every failing shape the kernel writes outside "
                           "its output (at M=1 N=1 K=1: wrote 2 floats past the end of C (first at C[1], "
                           "1 elements long)), and at M=17 N=33 K=9 16 of 561 elements of C are wrong"));
  CHECK_THAT(s, !Catch::Contains("the values are right"));
  // On the GPU the thread past the edge and the next row's first thread
  // store into one element in either order: a rerun differs, not a race.
  small.rerun_changed = 10;
  const std::string t = lead({one, small, square});
  INFO(t);
  CHECK_THAT(t, Catch::StartsWith("threads past the edge store") &&
                    Catch::Contains("(10 of them changed on a rerun: two threads store into one element"));
  small.rerun_changed = -1;
  // With right values everywhere it is still only the writes outside.
  small.values_ok = square.values_ok = true;
  CHECK_THAT(lead({one, small, square}), Catch::StartsWith("the values are right, but at M=1 N=1 K=1"));
}

TEST_CASE(
    "Writes past the end at one shape and wrong values at another say both, not that the values are right",
    "[unit][diagnosis]") {
  // Gallery 20 (a naive matmul without a boundary check) in CPU mode: its
  // ragged check's lead said "the values are right, but at M=1 N=1 K=1 ..."
  // above "C (17 x 33): 225 of 561 elements are wrong".
  ShapeFacts one = matmul(1, 1, 1, true);
  one.memory = {
      "wrote 30 floats past the end of C (first at C[1]), which holds one value: a thread past the end "
      "of the data was not stopped by a boundary check, or a store at an index like C[blockIdx.x]"};
  ShapeFacts small = matmul(17, 33, 9, false);
  small.wrong = 225;
  const std::string s = lead({one, small});
  INFO(s);
  CHECK_THAT(s,
             Catch::StartsWith("threads write outside the buffers, and values are wrong: at M=1 N=1 K=1 the "
                               "values are right but the kernel wrote 30 floats past the end of C (first at "
                               "C[1]), and at M=17 N=33 K=9 225 of 561 elements of C are wrong"));
  CHECK_THAT(s, !Catch::Contains("blockIdx.x"));
}

TEST_CASE("Right wherever a dimension fits in one tile and wrong past it leads with only one tile counting",
          "[diagnosis][harness]") {
  // A tiled matmul resetting its accumulator inside the loop over tiles
  // (unseen kernel, H100 2026-11-24): lab 03's ragged shapes are right where
  // K <= 16 and wrong everywhere else, the same on a rerun.
  std::vector<ShapeFacts> facts = {matmul(1, 1, 1, true),          matmul(17, 33, 9, true),
                                   matmul(64, 64, 100, false),     matmul(31, 17, 47, false),
                                   matmul(513, 257, 129, false),   matmul(2047, 129, 513, false),
                                   matmul(1000, 1000, 1000, false)};
  for (auto& f : facts) f.rerun_changed = f.values_ok ? -1 : 0;
  const std::string s = lead(facts);
  INFO(s);
  CHECK_THAT(
      s, Catch::StartsWith("only one tile's worth of K counts: right on every shape where K is at most 16 "
                           "(M=1 N=1 K=1 and M=17 N=33 K=9), wrong on every shape where it is larger (at "
                           "M=64 N=64 K=100, 4096 of 4096 elements of C are wrong"));
  CHECK_THAT(s, Catch::Contains("accumulator reset inside the loop over tiles") &&
                    !Catch::Contains("index arithmetic"));
  // Without the block's size nothing says where one tile ends.
  for (auto& f : facts) f.launch.clear();
  CHECK_THAT(lead(facts), !Catch::Contains("one tile's worth"));
}

TEST_CASE("A right 1 x 1 x 1 alone is no sign that only one tile's worth counts or that size matters",
          "[diagnosis][harness]") {
  // A tiled matmul reading B's tile with threadIdx.x for its row (unseen
  // kernel, CPU mode 2026-11-25): at 1 x 1 x 1 the one thread reads the
  // right element, every other shape is wrong all over, the same on a rerun.
  std::vector<ShapeFacts> facts = {matmul(1, 1, 1, true), matmul(17, 33, 9, false),
                                   matmul(64, 64, 100, false), matmul(2047, 129, 513, false)};
  for (auto& f : facts) f.rerun_changed = f.values_ok ? -1 : 0;
  const std::string s = lead(facts);
  INFO(s);
  CHECK_THAT(s, !Catch::Contains("one tile's worth") && !Catch::Contains("only the larger shapes"));
  CHECK_THAT(s, Catch::Contains("index arithmetic"));
  // A right shape larger than one element is evidence again.
  facts.push_back(matmul(9, 12, 5, true));
  CHECK_THAT(lead(facts), Catch::StartsWith("only one tile's worth of M and N counts"));
  CHECK(diagnose(facts).cause == Cause::one_tile_only);
}

TEST_CASE("A one-element shape does not hide stores that land in the wrong places at the others",
          "[diagnosis][harness]") {
  // vector add storing c[i + 1] (unseen kernel, H100 2026-11-24): at n=1 the
  // one element is never written, at every other shape c[0] is never
  // written and the rest hold their neighbour's sum.
  auto vec = [](long long n) {
    ShapeFacts f = shape("n=" + std::to_string(n), false, ErrorPattern::scattered, n, n);
    f.output = "c";
    f.rows = 1;
    f.cols = n;
    f.unwritten = 1;
    f.rerun_changed = 0;
    f.memory = {"wrote 1 float past the end of c (first at c[" + std::to_string(n) + "], " +
                std::to_string(n) + " elements long): a thread outside the data was not stopped"};
    return f;
  };
  ShapeFacts one = vec(1);
  one.unwritten_trailing = true;
  const std::string s = lead({one, vec(31), vec(1000)});
  INFO(s);
  CHECK_THAT(s, Catch::StartsWith("the stores land in the wrong places: at n=1000, 1 element of c is never "
                                  "written and 999 others hold wrong values, the same on a rerun, and the "
                                  "kernel wrote 1 float past the end of c"));
  CHECK(diagnose({one, vec(31), vec(1000)}).cause == Cause::misplaced_stores);
}

TEST_CASE("Whole rows never written between right ones lead with an index that steps past them",
          "[diagnosis][harness]") {
  // A matrix add with `row = blockIdx.y * blockDim.x + threadIdx.y` (unseen
  // kernel, H100 2026-11-24): rows 8 to 31 of each 32 are never written.
  auto bands = [](const std::string& args, std::size_t rows, std::size_t cols, std::size_t unwritten_rows,
                  bool trailing) {
    ShapeFacts f = shape(args, false, ErrorPattern::partly_unwritten, rows * cols, unwritten_rows * cols);
    f.rows = rows;
    f.cols = cols;
    f.unwritten = f.wrong;
    f.whole_rows = unwritten_rows;
    f.first_row = 8;
    f.unwritten_trailing = trailing;
    f.launch = "matrix_add_kernel<<<grid (3, 5, 1), block (32, 8, 1)>>>";
    return f;
  };
  const std::vector<ShapeFacts> facts = {shape("rows=1 cols=1", true),
                                         bands("rows=33 cols=65", 33, 65, 24, false),
                                         bands("rows=1000 cols=1000", 1000, 1000, 744, false)};
  const std::string s = lead(facts);
  INFO(s);
  CHECK_THAT(
      s, Catch::StartsWith("whole rows of C are never written, between rows that are right: at rows=33 "
                           "cols=65, 24 of the 33 rows of C (the first is row 8), and nothing else is "
                           "wrong (your launch: matrix_add_kernel<<<grid (3, 5, 1), block (32, 8, 1)>>>)"));
  CHECK_THAT(s, Catch::Contains("blockIdx.y * blockDim.y + threadIdx.y") && !Catch::Contains("scattered"));
}

TEST_CASE("Checks judged side by side each collect only their own facts", "[diagnosis][harness]") {
  // The grader judges several checks' evidence at once, one per thread: one
  // check's begin() must not clear another's facts, nor its shapes land there.
  constexpr int kThreads = 4, kShapes = 200, kRounds = 50;
  std::vector<std::string> wrong(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([t, &wrong] {
      for (int round = 0; round < kRounds && wrong[t].empty(); ++round) {
        cudalab::diagnosis::begin();
        for (int k = 0; k < kShapes; ++k)
          cudalab::diagnosis::launch_failed(
              "thread" + std::to_string(t) + "(M=" + std::to_string(k + 1) + ")", "error", "", false);
        const auto& facts = cudalab::diagnosis::facts();
        if (facts.size() != kShapes)
          wrong[t] = "thread " + std::to_string(t) + " found " + std::to_string(facts.size()) + " shapes";
        for (const auto& f : facts)
          if (f.label.rfind("thread" + std::to_string(t) + "(", 0) != 0) wrong[t] = "found " + f.label;
        cudalab::diagnosis::end();
      }
    });
  for (auto& th : threads) th.join();
  for (const auto& w : wrong) CHECK(w.empty());
}

namespace {

// One shape of a one-value check (a sum of n floats), as the hooks collect
// it from a launch (`blocks` blocks of 256 threads) and the comparison of out.
struct SumShape {
  int n;
  float got;
  double expected;
  long long blocks;
  long long rerun_changed = -1;
  bool accumulates = false;
};

cudalab::diagnosis::Lead sum_diagnose(const std::vector<SumShape>& shapes) {
  cudalab::diagnosis::begin();
  for (const auto& s : shapes) {
    const std::string label = "reduce_sum(n=" + std::to_string(s.n) + ")";
    cudalab::diagnosis::launched(
        label, "reduce_sum_kernel<<<grid (" + std::to_string(s.blocks) + ", 1, 1), block (256, 1, 1)>>>");
    cudalab::diagnosis::input(label, "in", 0);
    cudalab::CompareOptions o;
    o.tolerance = {2.4e-7 * s.n, 0};
    cudalab::diagnosis::pause(true);  // the comparison alone, as compare() hands it over
    const cudalab::Comparison c = cudalab::compare("out", {s.got}, {s.expected}, 1, 1, o);
    cudalab::diagnosis::pause(false);
    cudalab::diagnosis::compared(label, c);
    if (s.rerun_changed >= 0) cudalab::diagnosis::rerun(label, s.rerun_changed);
    if (s.accumulates) cudalab::diagnosis::accumulation_probed(label, true);
  }
  cudalab::diagnosis::Lead l = diagnose(cudalab::diagnosis::facts());
  cudalab::diagnosis::end();
  return l;
}

std::string sum_lead(const std::vector<SumShape>& shapes) {
  return sum_diagnose(shapes).text;
}

// No word of a matrix or vector in a lead about a single value.
bool speaks_of_the_value_only(const std::string& s) {
  for (const char* w : {"element", " row", "column", "tile", "out["})
    if (s.find(w) != std::string::npos) return false;
  return true;
}

// What a sum that read a guard zone comes to in CPU mode: the zone's NaN.
float guard_nan() {
  float f;
  std::memcpy(&f, cudalab::guard_zone("in", true, 4).data(), sizeof f);
  return f;
}

}  // namespace

TEST_CASE("A one-value check whose value changes on a rerun leads with a race, in words for a value",
          "[diagnosis][harness]") {
  const std::string s = sum_lead({{1, 0.5, 0.5, 1}, {31, 2.0, 3.25, 1, 1}, {1000, 7.0, 9.5, 2}});
  INFO(s);
  CHECK_THAT(s,
             Catch::StartsWith("a race: at n=31 the value changed when the same inputs ran again; the first "
                               "time out = 2, expected 3.25."));
  CHECK_THAT(s, Catch::Contains("__syncthreads()") && Catch::Contains("atomicAdd"));
  CHECK(speaks_of_the_value_only(s));
}

TEST_CASE("A sum that is NaN though its input holds none leads with loads past the end of the input",
          "[diagnosis][harness]") {
  // A second load without its bound: n=31 and n=1000 read the guard zone
  // past in, whose NaN (CPU mode keeps its bits, a GPU gives 0x7FFFFFFF)
  // reaches the sum; 4096 is a multiple of two blocks and right.
  for (const float nan : {guard_nan(), std::nanf("")}) {
    const std::string s = sum_lead({{31, nan, 1.5, 1}, {1000, nan, 12.0, 2}, {4096, 30.0f, 30.0, 4}});
    INFO(s);
    CHECK_THAT(s, Catch::StartsWith("loads outside the input: at n=31 out is NaN though in holds none"));
    CHECK(sum_diagnose({{31, nan, 1.5, 1}, {1000, nan, 12.0, 2}, {4096, 30.0f, 30.0, 4}}).cause ==
          Cause::reads_past_end);
    CHECK_THAT(s, Catch::Contains("so a load read past the end of in") && Catch::Contains("`i < n`"));
    const bool says_bits = s.find("in CPU mode its bits are those of the NaN") != std::string::npos;
    CHECK(says_bits == (cudalab::nan_origin(nan) == cudalab::NanOrigin::input_guard));
    CHECK(speaks_of_the_value_only(s));
  }
}

TEST_CASE("A sum that is NaN computed from unwritten shared memory says so, not that out was never written",
          "[diagnosis][harness]") {
  float shared;
  std::memcpy(&shared, &cudalab::kSharedPoisonNan, 4);
  const std::string s = sum_lead({{31, shared, 1.5, 1}, {1000, shared, 12.0, 2}});
  INFO(s);
  CHECK_THAT(s, Catch::StartsWith("out is NaN at n=31, and at the 1 other failing size, computed from shared "
                                  "memory that no thread wrote"));
  CHECK(sum_diagnose({{31, shared, 1.5, 1}, {1000, shared, 12.0, 2}}).cause == Cause::unwritten_shared);
  CHECK_THAT(s, !Catch::Contains("never written") && !Catch::Contains("filled with before the launch"));
}

TEST_CASE(
    "Right wherever the grid has one block and wrong wherever it has several leads with the blocks' sums",
    "[diagnosis][harness]") {
  // Only block 0 adds its partial sum.
  const std::string s =
      sum_lead({{1, 0.5, 0.5, 1}, {31, 2.0, 2.0, 1}, {1000, 7.0, 9.5, 2}, {(1 << 20) + 7, 3.0, 41.0, 1024}});
  INFO(s);
  CHECK_THAT(s,
             Catch::StartsWith("only one block's sum reaches out: right wherever the grid has one block (n=1 "
                               "and n=31), wrong wherever it has several (at n=1000, out = 7, expected 9.5; "
                               "your launch: reduce_sum_kernel<<<grid (2, 1, 1), block (256, 1, 1)>>>)"));
  CHECK(speaks_of_the_value_only(s));
}

TEST_CASE("A sum right on multiples of the block and wrong elsewhere leads with the end of the input",
          "[diagnosis][harness]") {
  // The last partial block lost (a grid by floor division, with one block at least).
  const std::string s =
      sum_lead({{31, 0.0 + 1.0, 2.5, 1}, {1000, 7.0, 9.5, 3}, {1024, 4.0, 4.0, 4}, {4096, 30.0, 30.0, 16}});
  INFO(s);
  CHECK_THAT(s,
             Catch::StartsWith("the end of the input: right on every length that is a multiple of 256 "
                               "(n=1024 and n=4096), wrong on every other (at n=31, out = 1, expected 2.5)"));
  CHECK(speaks_of_the_value_only(s));
}

TEST_CASE("A wrong sum with stores past out leads with the stores, in words for one value",
          "[diagnosis][harness]") {
  // Each block stores its sum at out[blockIdx.x]: out is block 0's sum, the rest land past it.
  cudalab::diagnosis::begin();
  for (const auto& [n, blocks] : {std::pair<int, int>{1000, 2}, {4096, 8}}) {
    const std::string label = "reduce_sum(n=" + std::to_string(n) + ")";
    cudalab::diagnosis::launched(
        label, "reduce_sum_kernel<<<grid (" + std::to_string(blocks) + ", 1, 1), block (256, 1, 1)>>>");
    cudalab::diagnosis::pause(true);
    const auto c = cudalab::compare("out", {3.0f}, {12.5}, 1, 1);
    cudalab::diagnosis::pause(false);
    cudalab::diagnosis::compared(label, c);
    std::vector<std::uint8_t> zone = cudalab::guard_zone("out", false, 64),
                              after = cudalab::guard_zone("out", true, 64);
    after[0] = 0;
    cudalab::diagnosis::memory(label, cudalab::describe_guard_damage("out", 4, 1, zone, after));
  }
  const std::string s = lead(cudalab::diagnosis::facts());
  cudalab::diagnosis::end();
  INFO(s);
  CHECK_THAT(s, Catch::StartsWith("stores past out: at n=1000 the kernel wrote 1 float past the end of out "
                                  "(first at out[1]), and out = 3, expected 12.5. out holds one value"));
  CHECK(diagnose(cudalab::diagnosis::facts()).cause == Cause::stores_per_block);
  // The indices are the stores' own (out[1], out[blockIdx.x]): no elements, rows or columns.
  CHECK_THAT(s, !Catch::Contains("element") && !Catch::Contains(" row") && !Catch::Contains("column"));
}

TEST_CASE("A sum that is right only when out starts at 0 says that out is added to", "[diagnosis][harness]") {
  const std::string s = sum_lead({{1, NAN, 0.5, 1, -1, true}, {31, NAN, 2.5, 1}});
  INFO(s);
  CHECK_THAT(s, Catch::StartsWith("out is right only when it starts at 0: at n=1 out came back NaN"));
  CHECK(sum_diagnose({{1, NAN, 0.5, 1, -1, true}, {31, NAN, 2.5, 1}}).cause == Cause::accumulates);
  CHECK_THAT(s, Catch::Contains("in a kernel launched before the one that adds to it"));
  CHECK(speaks_of_the_value_only(s));
}

TEST_CASE("A sum never written and one that is 0 each lead with what the value shows",
          "[diagnosis][harness]") {
  const float nan_poison = testbed::poison();  // the fill, as a kernel that never stores leaves it
  const std::string never = sum_lead({{1, nan_poison, 0.5, 1}, {1000, nan_poison, 9.5, 2}});
  INFO(never);
  CHECK_THAT(never,
             Catch::StartsWith("out is never written at n=1, nor at the 1 other failing size: it still "
                               "holds the NaN it was filled with before the launch, though the kernel "
                               "ran"));
  CHECK(speaks_of_the_value_only(never));
  const std::string zero = sum_lead({{1, 0.0, 0.5, 1}, {1000, 0.0, 9.5, 2}});
  INFO(zero);
  CHECK_THAT(zero,
             Catch::StartsWith("out is 0 at n=1, and at the 1 other failing size (expected 0.5 there)"));
  CHECK(speaks_of_the_value_only(zero));
}

TEST_CASE("A one-value check with nothing more specific says how far off the value is and why it may be",
          "[diagnosis][harness]") {
  const std::string s =
      sum_lead({{1, 0.5, 0.5, 1}, {1000, 9.0, 9.5, 2}, {2048, 20.0, 20.0, 8}, {4096, 30.0, 31.0, 16}});
  INFO(s);
  CHECK_THAT(s,
             Catch::StartsWith("out = 9, expected 9.5 at n=1000: 0.5 too small (the tolerance at this length "
                               "is 0.00024); wrong too at the 1 other failing size. out is one value"));
  CHECK(speaks_of_the_value_only(s));
}

TEST_CASE("A check whose outputs are vectors keeps its element-wise lead even where one has a single element",
          "[diagnosis][harness]") {
  // lab 01's vector add at n=1 and n=1000, both never written: not a one-value check.
  cudalab::diagnosis::begin();
  cudalab::diagnosis::pause(true);  // the comparisons alone, handed over below
  const auto one = cudalab::compare("c", {testbed::poison()}, {1.0}, 1, 1);
  const auto many = cudalab::compare("c", std::vector<float>(1000, testbed::poison()),
                                     std::vector<double>(1000, 1.0), 1, 1000);
  cudalab::diagnosis::pause(false);
  cudalab::diagnosis::compared("vector_add(n=1)", one);
  cudalab::diagnosis::compared("vector_add(n=1000)", many);
  const std::string s = lead(cudalab::diagnosis::facts());
  cudalab::diagnosis::end();
  INFO(s);
  CHECK_THAT(s, Catch::Contains("no element of c is written"));
}

TEST_CASE("C NaN wherever it is wrong, though A and B hold none, leads with a read past the end of an input",
          "[diagnosis][harness]") {
  // A tiled matmul whose B load lacks its row bound (`(col < N) ? B[(t + ty)
  // * N + col] : 0`): the last K tile reads past B's end, into its guard
  // zone's NaN, and 0 x NaN = NaN; right wherever K is a multiple of 16.
  auto nan_shape = [](const std::string& args, std::size_t elements) {
    ShapeFacts f = shape(args, false, ErrorPattern::everywhere, elements, elements);
    f.non_finite = elements;
    f.rows = 17, f.cols = elements / 17;
    f.first_nan_row = 0, f.first_nan_col = 0;
    f.inputs = {"A", "B"};
    f.inputs_nan = 0;
    return f;
  };
  std::vector<ShapeFacts> facts = {nan_shape("M=17 N=33 K=9", 561), shape("M=64 N=64 K=64", true),
                                   nan_shape("M=17 N=34 K=47", 578)};
  facts[0].guard_nan = 561;  // CPU mode: the guard zone's own bits
  const std::string s = lead(facts);
  INFO(s);
  CHECK_THAT(s,
             Catch::StartsWith("C[0][0] is NaN though A and B hold none: the kernel read past the end of A "
                               "or B (a load whose index is not bounded: each load tests every index it "
                               "uses, a tile load both its row and its column)"));
  CHECK_THAT(s,
             Catch::Contains("At M=17 N=33 K=9, 561 of 561 elements of C are NaN, and likewise at the 1 "
                             "other failing shape. The checks put NaN past the end of every buffer, and C's "
                             "NaNs carry its bits, so a read there poisons every sum"));
  CHECK_THAT(s, !Catch::Contains("boundary checks"));

  SECTION("where an input holds NaN itself, a NaN in C says nothing of where it was read") {
    for (auto& f : facts) f.inputs_nan = f.values_ok ? f.inputs_nan : 1;
    CHECK_THAT(lead(facts), !Catch::Contains("read past the end"));
  }
  SECTION("NaN with CPU mode's shared-memory bits is computed from shared memory no thread wrote") {
    // (A tile larger than the block that loads it: wrong at every shape.)
    facts.erase(facts.begin() + 1);
    for (auto& f : facts) f.guard_nan = 0, f.shared_nan = f.non_finite;
    const std::string t = lead(facts);
    INFO(t);
    CHECK_THAT(t, Catch::StartsWith("C[0][0] is NaN, computed from shared memory that no thread wrote: at "
                                    "M=17 N=33 K=9, 561 of 561 elements of C are NaN"));
    CHECK_THAT(
        t, !Catch::Contains("never written") && Catch::Contains("they are not the NaN C was filled with"));
  }
}

TEST_CASE("A race's lead names the lab in its racecheck advice, and in CPU mode says it is for a GPU",
          "[diagnosis][harness]") {
  auto facts = std::vector<ShapeFacts>{shape("M=16 N=16 K=16", false, ErrorPattern::scattered, 256, 64)};
  facts[0].rerun_changed = 40;
  cudalab::diagnosis::set_lab("03_tiling", true);
  const std::string cpu = lead(facts);
  cudalab::diagnosis::set_lab("03_tiling", false);
  const std::string gpu = lead(facts);
  cudalab::diagnosis::set_lab("", false);
  CHECK_THAT(cpu, Catch::EndsWith(
                      "again. On a GPU, `./cudalab test 03_tiling --sanitize=racecheck` names the line"));
  CHECK_THAT(gpu, Catch::EndsWith("again. `./cudalab test 03_tiling --sanitize=racecheck` names the line"));
  CHECK_THAT(lead(facts), Catch::EndsWith(cudalab::diagnosis::kRacecheckAdvice));
}

TEST_CASE("a failing check lists wrong elements for its first failing shape only, one line for each other",
          "[diagnosis][harness]") {
  const std::vector<double> expected(12, 1.0);
  const std::vector<float> got(12, 2.0f);
  cudalab::diagnosis::begin();
  const std::string first = cudalab::compare("C", got, expected, 3, 4).describe();
  const std::string second = cudalab::compare("C", got, expected, 4, 3).describe();
  cudalab::diagnosis::end();
  CHECK_THAT(first, Catch::Contains("\n  C[0][0] = 2"));
  CHECK_THAT(first, Catch::Contains("... and 7 more"));
  CHECK(second.find('\n') == std::string::npos);
  CHECK_THAT(second, Catch::Contains("12 of 12 elements are wrong"));
  CHECK_THAT(second, Catch::Contains("first at C[0][0] = 2"));
  // Outside a check every message lists them.
  CHECK_THAT(cudalab::compare("C", got, expected, 4, 3).describe(), Catch::Contains("\n  C[0][0] = 2"));
}
