// The roofline's traffic counts (grader/run/traffic.h) on the real kernels, in
// CPU mode, through the grader's own counting run (count_kernel_traffic):
// lab 03's solution and lab 02's naive solution, each built as the grader
// builds a submission's <lab>-tests-access (the student's file
// instrumented), and lab 03's -tests-traffic, whose references are
// instrumented too (the reference's and the foils' counts).
#include <string>

#include "cudalab/catch.h"
#include "cudalab/manifest.h"
#include "run/checks.h"
#include "run/traffic.h"

using namespace cudalab;

namespace {

const std::filesystem::path kRoot = CUDALAB_SOURCE_ROOT;

struct Counted {
  std::optional<CountedTraffic> traffic;
  std::string error;
};

Counted count(const std::string& lab_id, const std::string& check_id, const std::string& binary,
              const std::string& who) {
  const LabSpec lab = load_lab(kRoot / "labs" / lab_id / "lab.toml");
  const CheckSpec* check = lab.find_by_id(check_id);
  REQUIRE(check);
  RunContext ctx;
  ctx.lab_toml = lab.file;
  ctx.work_dir = std::filesystem::path(CUDALAB_WORK_DIR);
  Counted c;
  c.traffic = count_kernel_traffic(ctx, lab, *check, binary, who, c.error);
  return c;
}

}  // namespace

TEST_CASE("CPU mode counts the tiled solution's traffic per FLOP about TILE/2 times below the naive one's",
          "[traffic-cpu]") {
  const Counted tiled = count("03_tiling", "faster-than-naive", CUDALAB_TILED_ACCESS, "student");
  const Counted naive = count("02_naive_matmul", "speed", CUDALAB_NAIVE_ACCESS, "student");
  INFO(tiled.error << " / " << naive.error);
  REQUIRE(tiled.traffic);
  REQUIRE(naive.traffic);
  // One call at 128^3 (course/include/common/matmul.h kTrafficShape).
  CHECK(tiled.traffic->flops == 2.0 * 128 * 128 * 128);
  CHECK(naive.traffic->flops == tiled.traffic->flops);
  CHECK(tiled.traffic->m == 128);
  // The tiled kernel (16 x 16 tiles) loads each element of A and B once per
  // 16 uses, in whole 64-byte rows: 0.5 bytes a FLOP, and C's stores 4 bytes
  // per 2K FLOP: 4K/(K+8) FLOP/B, 3.76 at K = 128.
  CHECK(tiled.traffic->flop_per_byte() == Approx(4.0 * 128 / (128 + 8)).epsilon(0.001));
  // The naive kernel's warp (2 rows of 16 threads of its 16 x 16 block)
  // asks, per k, for 2 sectors of A (one element per row, shared by its 16
  // threads) and 2 of B (16 consecutive floats, shared by both rows):
  // 128 bytes per 64 FLOP, and C: K/(2K+2) FLOP/B, 0.496.
  CHECK(naive.traffic->flop_per_byte() == Approx(128.0 / (2 * 128 + 2)).epsilon(0.001));
  // So tiling moves the kernel right by TILE/2 = 8 less C's share (7.6 at
  // 128^3, 7.95 at the timed 1024^3), not by TILE = 16: the naive kernel's
  // warps already share each A element 16 ways and each B sector 2 ways.
  const double factor = tiled.traffic->flop_per_byte() / naive.traffic->flop_per_byte();
  CHECK(factor > 7.5);
  CHECK(factor < 8.0);
}

TEST_CASE(
    "the reference's traffic build counts the kernel a speed check compares with, the access build cannot",
    "[traffic-cpu]") {
  // Lab 03's -tests-access instruments the student's file only: its naive
  // kernel (a reference) leaves nothing in the report.
  const Counted unseen = count("03_tiling", "faster-than-naive", CUDALAB_TILED_ACCESS, "naive");
  CHECK_FALSE(unseen.traffic);
  CHECK(unseen.error == "the access report counts no global access of the kernel");
  // Its -tests-traffic instruments the references too: the naive kernel
  // counts as lab 02's solution did above.
  const Counted naive = count("03_tiling", "faster-than-naive", CUDALAB_TILED_TRAFFIC, "naive");
  INFO(naive.error);
  REQUIRE(naive.traffic);
  CHECK(naive.traffic->bytes == 8454144);
  const Counted reference = count("03_tiling", "near-reference", CUDALAB_TILED_TRAFFIC, "reference");
  REQUIRE(reference.traffic);
  CHECK(reference.traffic->bytes == 1114112);
  // A name the check does not time runs nothing.
  const Counted none = count("03_tiling", "faster-than-naive", CUDALAB_TILED_TRAFFIC, "reference");
  CHECK_FALSE(none.traffic);
  CHECK(none.error == "the counting run did not run the kernel");
}
