// The speed checks' calibration tables (grader/authoring/calibration_table.h): their
// file format on made-up measurements, then the repository's own tables in
// calibration/ against the labs' lab.toml thresholds and tests/variants. The
// second part is what keeps a threshold's provenance honest: a lab.toml
// number changed by hand, a variant added or turned from foil to correct
// alternative, fails here until `cudalab calibrate --write` runs again on a
// GPU. Host-only. `grader-tests "[calibration-tables]"` runs it alone.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "authoring/calibrate.h"
#include "authoring/calibration_table.h"
#include "cudalab/catch.h"
#include "cudalab/manifest.h"
#include "testbed.h"

using namespace cudalab;
using namespace cudalab::calibration;
namespace fs = std::filesystem;

namespace {

// Lab 04's speed check as the H100 measured it on 2026-11-24.
TableEntry transpose_entry() {
  const std::vector<Measured> ms = {testbed::measured("block_32x32", false, {0.595, 0.595, 0.596}),
                                    testbed::measured("no_padding", false, {0.590, 0.594, 0.591}),
                                    testbed::measured("solution", true, {0.998, 1.003, 0.994})};
  const Proposal p = propose(ms, 0.80, Credit{0.60, 0.90});
  REQUIRE(p.feasible);
  TableEntry e = make_entry("04_transpose", "speed", ms, p, Margins{});
  e.date = "2026-11-24";
  e.device = "NVIDIA H100 80GB HBM3 (sm_90)";
  e.source = "a \"quoted\" log\\path";
  return e;
}

bool same(double a, double b, double tol = 1e-9) {
  return std::fabs(a - b) <= tol;
}

}  // namespace

TEST_CASE("Calibration tables: a table is named after its GPU and compute capability",
          "[calibration-tables][calibration][grader]") {
  CHECK(table_file_name("NVIDIA H100 80GB HBM3", "sm_90") == "nvidia-h100-80gb-hbm3-sm90.toml");
  CHECK(table_file_name("NVIDIA H200", "sm_90") == "nvidia-h200-sm90.toml");
  CHECK(table_file_name("NVIDIA GeForce RTX 4090", "sm_89") == "nvidia-geforce-rtx-4090-sm89.toml");
  CHECK(table_file_name("Odd GPU", "") == "odd-gpu.toml");
  CHECK(split_gpu_label("NVIDIA H100 80GB HBM3 (sm_90)") ==
        std::pair<std::string, std::string>{"NVIDIA H100 80GB HBM3", "sm_90"});
  CHECK(split_gpu_label("Some GPU") == std::pair<std::string, std::string>{"Some GPU", ""});
}

TEST_CASE("Calibration tables: a table written and read back holds the same measurements and thresholds",
          "[calibration-tables][calibration][grader]") {
  Table t{"NVIDIA H100 80GB HBM3", "sm_90", {}};
  t.put(transpose_entry());
  Measured memoized = testbed::measured("memoized", false, {});
  memoized.runs = 3;
  memoized.problem = "speed not measured: the output of timed run 1 was wrong";
  const std::vector<Measured> ms = {testbed::measured("naive_as_tiled", false, {0.9983, 1.0012, 0.9961}),
                                    memoized, testbed::measured("solution", true, {1.51419, 1.5131, 1.5149})};
  const Proposal p = propose(ms, 1.30, Credit{1.05, 1.30});
  REQUIRE(p.feasible);
  TableEntry tiled = make_entry("03_tiling", "faster-than-naive", ms, p, Margins{});
  tiled.date = "2026-11-23";
  t.put(tiled);
  REQUIRE(t.entries.size() == 2);
  CHECK(t.entries[0].lab == "03_tiling");  // sorted by lab

  const std::string text = format_table(t);
  const Table back = parse_table(text, "t.toml");
  CHECK(back.gpu == t.gpu);
  CHECK(back.sm == "sm_90");
  REQUIRE(back.entries.size() == 2);
  CHECK(format_table(back) == text);
  const TableEntry* e = back.find("04_transpose", "speed");
  REQUIRE(e);
  CHECK(e->date == "2026-11-24");
  CHECK(e->runs == 3);
  CHECK(e->source == "a \"quoted\" log\\path");
  CHECK(same(e->min_ratio, 0.80));
  REQUIRE(e->credit);
  CHECK(same(e->credit->zero_at, 0.60));
  CHECK(same(e->credit->full_at, 0.90));
  CHECK(same(e->lo, 0.662, 0.001));
  CHECK(same(e->hi, 0.895, 0.001));
  REQUIRE(e->variants.size() == 3);
  CHECK(e->variants[2].variant == "solution");
  CHECK(e->variants[2].correct);
  CHECK(e->variants[2].ratios == std::vector<double>{0.998, 1.003, 0.994});
  CHECK(text.find("{ name = \"solution\", expect = \"pass\", median = 0.998, ratios = [0.998, 1.003, 0.994], "
                  "max_noise_pct = 0.10 }") != std::string::npos);
  // Ratios to 4 decimals; a foil without a ratio keeps why.
  CHECK(text.find("ratios = [1.5142, 1.5131, 1.5149]") != std::string::npos);
  CHECK(
      text.find("{ name = \"memoized\", expect = \"fail\", ratios = [], no_ratio = \"speed not measured: the "
                "output of timed run 1 was wrong\" }") != std::string::npos);

  // Another run of the same check replaces its entry, the others stay.
  Table again = back;
  TableEntry newer = transpose_entry();
  newer.date = "2026-12-01";
  again.put(newer);
  REQUIRE(again.entries.size() == 2);
  CHECK(again.find("04_transpose", "speed")->date == "2026-12-01");
  CHECK(again.find("03_tiling", "faster-than-naive")->date == "2026-11-23");
}

TEST_CASE("Calibration tables: a malformed table is refused with its line",
          "[calibration-tables][calibration][grader]") {
  const std::string good = format_table(Table{"G", "sm_90", {transpose_entry()}});
  CHECK_NOTHROW(parse_table(good, "g.toml"));
  CHECK_THROWS_WITH(parse_table("[gpu]\nname = \"G\"\n[[check]]\nlab = \"04_transpose\"\n", "g.toml"),
                    Catch::Contains("g.toml:") && Catch::Contains("'id' must be a string"));
  std::string wrong_median = good;
  wrong_median.replace(wrong_median.find("median = 0.998"), 14, "median = 0.990");
  CHECK_THROWS_WITH(parse_table(wrong_median, "g.toml"),
                    Catch::Contains("median 0.99 is not the median of its ratios"));
  std::string wrong_expect = good;
  wrong_expect.replace(wrong_expect.find("expect = \"pass\""), 15, "expect = \"maybe\"");
  CHECK_THROWS_WITH(parse_table(wrong_expect, "g.toml"), Catch::Contains("expect must be"));
  CHECK_THROWS_AS(parse_table("not toml [", "g.toml"), ManifestError);
}

TEST_CASE("Calibration tables: thresholds the measurements do not allow are named, with the rule",
          "[calibration-tables][calibration][grader]") {
  const TableEntry e = transpose_entry();
  CHECK(threshold_problems(e, 0.80, Credit{0.60, 0.90}).empty());
  CHECK(threshold_problems(e, 0.70, Credit{0.60, 0.85}).empty());  // other values the rules allow

  // 0.92 leaves the reference's slowest run (0.994) less than 10% above it.
  auto p = threshold_problems(e, 0.92, Credit{0.60, 0.92});
  REQUIRE_FALSE(p.empty());
  CHECK(p[0].find("min_ratio 0.92 is outside [0.662, 0.895]") != std::string::npos);
  CHECK(p[0].find("solution at 0.994") != std::string::npos);
  // 0.65 leaves the fastest foil run (0.596) less than 10% below it.
  p = threshold_problems(e, 0.65, Credit{0.60, 0.90});
  REQUIRE(p.size() == 1);
  CHECK(p[0].find("block_32x32 at 0.596") != std::string::npos);
  // A curve that gives the foils points.
  p = threshold_problems(e, 0.80, Credit{0.50, 0.90});
  REQUIRE(p.size() == 1);
  CHECK(p[0].find("credit 0.50 to 0.90 breaks the rules") != std::string::npos);
  CHECK(p[0].find("would move it to 0.60 to 0.90") != std::string::npos);

  // Measurements no threshold can separate.
  TableEntry close = e;
  close.variants[1].ratios = {0.95, 0.95, 0.95};
  p = threshold_problems(close, 0.80, Credit{0.60, 0.90});
  REQUIRE(p.size() == 1);
  CHECK(p[0].find("cannot be met on this GPU") != std::string::npos);
}

// --- the repository's tables ----------------------------------------------------

TEST_CASE("Every GPU's calibration table agrees with the labs' thresholds and variants",
          "[calibration-tables][calibration][grader]") {
  const fs::path root = CUDALAB_SOURCE_ROOT;
  const fs::path tables_dir = root / "calibration", labs_dir = root / "labs",
                 variants_dir = root / "tests" / "variants";
  std::vector<fs::path> tables;
  if (fs::is_directory(tables_dir))
    for (const auto& f : fs::directory_iterator(tables_dir))
      if (f.path().extension() == ".toml") tables.push_back(f.path());
  std::sort(tables.begin(), tables.end());
  CHECK_FALSE(tables.empty());

  for (const auto& path : tables) {
    CAPTURE(path.filename().string());
    Table table;
    REQUIRE_NOTHROW(table = load_table(path));
    // The name `cudalab calibrate --write` looks it up by.
    CHECK(path.filename().string() == table_file_name(table.gpu, table.sm));
    for (const TableEntry& e : table.entries) {
      const std::string where = fmt::format("{} / {} on the {}", e.lab, e.check, table.gpu);
      CAPTURE(where);
      REQUIRE(fs::exists(labs_dir / e.lab / "lab.toml"));
      const LabSpec lab = load_lab(labs_dir / e.lab / "lab.toml");
      const CheckSpec* check = lab.find_by_id(e.check);
      REQUIRE(check);
      REQUIRE(check->kind == CheckKind::speed);
      CHECK(e.runs >= 1);
      CHECK_FALSE(e.date.empty());
      CHECK_FALSE(e.source.empty());

      // The table's derived thresholds obey the rules of its own measurements,
      // and its allowed range is theirs.
      INFO("the table's own thresholds: " << fmt::format(
               "{}", fmt::join(threshold_problems(e, e.min_ratio, e.credit), "; ")));
      CHECK(threshold_problems(e, e.min_ratio, e.credit).empty());
      const Proposal own = propose(e.variants, e.min_ratio, e.credit, e.margins);
      REQUIRE(own.feasible);
      CHECK(same(own.lo, e.lo, 0.001));
      CHECK(same(own.hi, e.hi, 0.001));

      // The variants timed are the check's participants now, each with the
      // verdict it was timed for.
      const std::vector<Participant> now = participants(lab, *check, variants_dir);
      for (const Measured& v : e.variants) {
        CAPTURE(v.variant);
        const auto it = std::find_if(now.begin(), now.end(),
                                     [&](const Participant& p) { return p.variant == v.variant; });
        INFO("tests/variants/"
             << e.lab << "/" << v.variant
             << " no longer takes part in this check (or no longer exists): calibrate again");
        REQUIRE(it != now.end());
        INFO("its expect.toml verdict changed since it was timed: calibrate again");
        CHECK(it->correct == v.correct);
      }
      for (const Participant& p : now)
        if (std::none_of(e.variants.begin(), e.variants.end(),
                         [&](const Measured& v) { return v.variant == p.variant; }))
          WARN(where << ": tests/variants/" << e.lab << "/" << p.variant
                     << " was not timed in this calibration (added since?): `cudalab calibrate --write "
                     << e.lab << "` on that GPU times it");

      // lab.toml against the measurements: every correct alternative at least
      // the margin above min_ratio, every foil below it.
      const double min_ratio = check->number("min_ratio");
      for (const Measured& v : e.variants) {
        if (v.ratios.empty()) continue;  // a foil without a ratio fails whatever the threshold
        CAPTURE(v.variant, v.median(), min_ratio);
        if (v.correct)
          CHECK(v.median() * (1 - e.margins.correct) >= min_ratio - 1e-9);
        else
          CHECK(v.median() < min_ratio);
      }
      // lab.toml's thresholds are the table's, or (where another GPU's
      // calibration set them) values this GPU's rules keep too: what
      // `cudalab calibrate` here would leave unchanged.
      const std::vector<std::string> problems = threshold_problems(e, min_ratio, check->credit);
      INFO("lab.toml (" << check->source << "): " << fmt::format("{}", fmt::join(problems, "; ")));
      CHECK(problems.empty());
      CHECK(check->credit.has_value() == e.credit.has_value());
    }
  }

  // Every speed check of every lab is calibrated on some GPU (a new lab's may
  // wait for its first GPU run: said, not failed).
  for (const auto& d : fs::directory_iterator(labs_dir)) {
    if (!fs::exists(d.path() / "lab.toml")) continue;
    const LabSpec lab = load_lab(d.path() / "lab.toml");
    for (const auto& c : lab.checks) {
      if (c.kind != CheckKind::speed) continue;
      bool found = false;
      for (const auto& path : tables)
        if (load_table(path).find(lab.id, c.id)) found = true;
      if (!found)
        WARN(lab.id << " / " << c.id
                    << " is in no calibration table: its thresholds are not calibrated on any GPU");
    }
  }
}
