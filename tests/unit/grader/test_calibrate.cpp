// `cudalab calibrate`'s pure parts (grader/authoring/calibrate.h): the rules of
// docs/calibration.md turned into a proposal, on made-up ratios, and the
// lab.toml edit that writes it.
#include <cmath>

#include "authoring/calibrate.h"
#include "cudalab/catch.h"
#include "cudalab/manifest.h"
#include "testbed.h"

using namespace cudalab;
using namespace cudalab::calibration;

namespace {

bool near(double a, double b) {
  return std::fabs(a - b) < 1e-9;
}

}  // namespace

TEST_CASE("Calibration: medians, extremes and number formatting", "[calibrate][calibration][grader]") {
  const Measured x = testbed::measured("solution", true, {1.02, 0.98, 1.00});
  CHECK(near(x.median(), 1.00));
  CHECK(near(x.lowest(), 0.98));
  CHECK(near(x.highest(), 1.02));
  CHECK(near(testbed::measured("a", true, {1.0, 2.0}).median(), 1.5));
  CHECK(format_number(0.85) == "0.85");
  CHECK(format_number(1.3) == "1.30");
  CHECK(format_number(0.875) == "0.875");
}

TEST_CASE("Calibration: the value nearest to the current one in the allowed range",
          "[calibrate][calibration][grader]") {
  CHECK(near(nearest_in_range(0.85, 0.082, 0.898), 0.85));      // inside: kept
  CHECK(near(nearest_in_range(0.95, 0.082, 0.898), 0.85));      // above: down to a multiple of 0.05
  CHECK(near(nearest_in_range(0.30, 0.63, 0.79), 0.65));        // below: up to a multiple of 0.05
  CHECK(near(nearest_in_range(0.95, 0.861, 0.898), 0.89));      // no multiple of 0.05 fits: 0.01
  CHECK(near(nearest_in_range(0.95, 0.8905, 0.8918), 0.891));   // nor 0.01: 0.001
  CHECK(near(nearest_in_range(0.95, 0.8912, 0.8918), 0.8918));  // nor 0.001: the end itself
}

TEST_CASE("Calibration: thresholds that meet the rules are kept (the H100 measurements of 2026-11-22)",
          "[calibrate][calibration][grader]") {
  // lab 03 faster-than-naive: the reference 1.51, 32 x 32 tiles 1.71; the naive kernel 1.00
  const std::vector<Measured> ms = {testbed::measured("naive_as_tiled", false, {1.00, 1.01, 0.99}),
                                    testbed::measured("other_stream", false, {1.02}),
                                    testbed::measured("solution", true, {1.52, 1.52, 1.51}),
                                    testbed::measured("tile32", true, {1.71, 1.70, 1.71})};
  const Proposal p = propose(ms, 1.30, Credit{1.05, 1.30});
  REQUIRE(p.feasible);
  CHECK(near(p.min_ratio, 1.30));
  CHECK_FALSE(p.min_changed);
  CHECK_FALSE(p.credit_changed);
  CHECK(p.slowest_correct == "solution");
  CHECK(near(p.slowest_correct_ratio, 1.51));
  CHECK(p.fastest_foil == "other_stream");
  CHECK(near(p.lo, 1.02 / 0.9));
  CHECK(near(p.hi, 0.9 * 1.51));
  CHECK(p.reference == "solution");
  CHECK(near(p.reference_ratio, 1.52));
  // The doc's own phrasing: the reference 14% above the threshold, naive 22% below it.
  CHECK(p.margins_line().find("14% below the slowest correct alternative (solution, 1.510)") !=
        std::string::npos);
  CHECK(p.margins_line().find("the fastest foil (other_stream, 1.020) 22% below it") != std::string::npos);
}

TEST_CASE(
    "Calibration: a threshold a correct alternative could fail is lowered, a curve giving a foil points "
    "raised",
    "[calibrate][calibration][grader]") {
  // lab 01 matrix-speed: 16 x 16 blocks (a correct alternative) at 0.86, so 0.85
  // leaves it only 1%; row and column swapped with 16 x 16 blocks at 0.63
  // (a foil) would get points from credit 0.40.
  const std::vector<Measured> ms = {testbed::measured("blocks_16x16", true, {0.87, 0.86, 0.88}),
                                    testbed::measured("solution", true, {1.0, 1.0, 1.0}),
                                    testbed::measured("swapped", false, {0.25, 0.25, 0.26}),
                                    testbed::measured("swapped_16x16", false, {0.62, 0.63})};
  const Proposal p = propose(ms, 0.85, Credit{0.40, 0.90});
  REQUIRE(p.feasible);
  CHECK(near(p.hi, 0.9 * 0.86));
  CHECK(near(p.min_ratio, 0.75));  // 0.774 rounded down to a multiple of 0.05, above 0.63 / 0.9 = 0.70
  CHECK(p.min_changed);
  REQUIRE(p.credit);
  CHECK(near(p.credit->full_at, 0.80));  // at most 0.95 x 0.86 = 0.817
  CHECK(near(p.credit->zero_at, 0.65));  // at or above the fastest foil's 0.63
  CHECK(p.credit_changed);
  CHECK(p.credit->zero_at < p.min_ratio);
  CHECK(p.min_ratio <= p.credit->full_at);
}

TEST_CASE("Calibration: a foil too close to a correct alternative: cannot be met, nothing proposed",
          "[calibrate][calibration][grader]") {
  // lab 04 on a GPU whose caches hide the bank conflicts: unpadded at 0.85 of the padded reference.
  const std::vector<Measured> ms = {testbed::measured("no_padding", false, {0.84, 0.85, 0.85}),
                                    testbed::measured("solution", true, {1.0, 0.99, 1.0})};
  const Proposal p = propose(ms, 0.80, Credit{0.60, 0.90});
  CHECK_FALSE(p.feasible);
  CHECK(p.why_not.find("cannot be met on this GPU") != std::string::npos);
  CHECK(p.why_not.find("no_padding (0.850)") != std::string::npos);
  CHECK(p.why_not.find("solution (0.990)") != std::string::npos);
  CHECK(p.margins_line() == p.why_not);
}

TEST_CASE(
    "Calibration: without a ratio for a correct alternative nothing is proposed; a foil without one is "
    "noted",
    "[calibrate][calibration][grader]") {
  Measured broken = testbed::measured("tile32", true, {});
  broken.runs = 3;
  broken.problem = "the test process was killed by SIGSEGV";
  Proposal p = propose({testbed::measured("solution", true, {1.0}), broken}, 0.85, Credit{0.70, 0.90});
  CHECK_FALSE(p.feasible);
  CHECK(p.why_not.find("tile32 (the test process was killed by SIGSEGV)") != std::string::npos);

  Measured memoized = testbed::measured("memoized", false, {});
  memoized.runs = 3;
  memoized.problem = "speed not measured: the output of timed run 1 was wrong";
  p = propose({testbed::measured("solution", true, {1.0}), memoized}, 0.85, Credit{0.70, 0.90});
  REQUIRE(p.feasible);
  CHECK(p.fastest_foil.empty());
  REQUIRE(p.notes.size() == 1);
  CHECK(p.notes[0].find("memoized recorded no ratio") != std::string::npos);
  CHECK(p.margins_line().find("no foil measured") != std::string::npos);

  CHECK_FALSE(propose({testbed::measured("naive", false, {0.6})}, 0.85, std::nullopt).feasible);
}

TEST_CASE("Calibration: a check without a credit curve gets none", "[calibrate][calibration][grader]") {
  const Proposal p =
      propose({testbed::measured("solution", true, {1.0}), testbed::measured("naive", false, {0.2})}, 0.95,
              std::nullopt);
  REQUIRE(p.feasible);
  CHECK(near(p.min_ratio, 0.90));
  CHECK_FALSE(p.credit);
}

TEST_CASE("Calibration: lab.toml keeps its formatting; only the numbers change",
          "[calibrate][calibration][grader]") {
  const std::string text =
      "# Lab 4.\n"
      "[lab]\n"
      "title = \"T\"\n"
      "student_files = [\"t.cu\"]\n"
      "tests = [\"t.cpp\"]\n"
      "\n"
      "[[check]]\n"
      "id = \"multiples\"\n"
      "name = \"transpose is correct\"\n"
      "kind = \"correctness\"\n"
      "points = 25\n"
      "\n"
      "# Ratio = padded reference time / student time.\n"
      "# Thresholds: calibration/*.toml.\n"
      "[[check]]\n"
      "id = \"speed\"\n"
      "name = \"transpose is fast\"\n"
      "kind = \"speed\"\n"
      "points = 30\n"
      "requires = [\"multiples\"]\n"
      "min_ratio = 0.80  # the threshold\n"
      "credit = { zero_at = 0.60, full_at = 0.90 }\n";
  const std::string once = apply_to_lab_toml(text, "speed", 0.75, Credit{0.65, 0.875});
  CHECK(once.find("min_ratio = 0.75  # the threshold\n") != std::string::npos);
  CHECK(once.find("credit = { zero_at = 0.65, full_at = 0.875 }\n") != std::string::npos);
  CHECK(once.find("# Ratio = padded reference time / student time.\n# Thresholds: calibration/*.toml.\n"
                  "[[check]]\nid = \"speed\"") != std::string::npos);
  CHECK(once.size() == text.size() + 1);  // 0.90 -> 0.875
  // It parses, with the new numbers.
  const LabSpec lab = parse_lab(once, "lab.toml", "04_transpose");
  CHECK(near(lab.find_by_id("speed")->number("min_ratio"), 0.75));
  CHECK(near(lab.find_by_id("speed")->credit->full_at, 0.875));
  // Back again: the file as it was.
  CHECK(apply_to_lab_toml(once, "speed", 0.80, Credit{0.60, 0.90}) == text);

  // The correctness check before it is untouched; a missing check or line is an error.
  CHECK(once.substr(0, once.find("# Ratio")) == text.substr(0, text.find("# Ratio")));
  CHECK_THROWS(apply_to_lab_toml(text, "nope", 0.8, std::nullopt));
  CHECK_THROWS(apply_to_lab_toml(text, "multiples", 0.8, std::nullopt));
}

TEST_CASE("Calibration: the GPU's name from a record", "[calibrate][calibration][grader]") {
  CHECK(gpu_label("NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 3352 GB/s peak DRAM, 50 MB L2, driver 13.0, "
                  "runtime 13.0)") == "NVIDIA H100 80GB HBM3 (sm_90)");
  CHECK(gpu_label("Some GPU") == "Some GPU");
}
