#include <map>
#include <string>

#include "cudalab/catch.h"
#include "cudalab/manifest.h"

using namespace cudalab;

namespace {

const std::string kGood = R"(
[lab]
title = "Tiled matmul"
student_files = ["matmul_tiled.cu"]
tests = ["test_tiling.cpp"]
references = ["03_tiling"]

[[check]]
id = "square"
name = "tiled matmul is correct on squares"
kind = "correctness"
points = 20

[[check]]
id = "fast"
name = "tiled matmul is fast"
kind = "speed"
points = 10
requires = ["square"]
min_ratio = 1.3
credit = { zero_at = 1.0, full_at = 1.3 }
)";

// The error message of parsing `text`, or "" if it parsed.
std::string error_of(const std::string& text) {
  try {
    parse_lab(text, "labs/x/lab.toml", "x");
  } catch (const ManifestError& e) {
    return e.what();
  }
  return "";
}

std::string replace(std::string s, const std::string& from, const std::string& to) {
  const auto at = s.find(from);
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("A well-formed manifest gives the lab's files, checks and thresholds", "[manifest][harness]") {
  const LabSpec lab = parse_lab(kGood, "labs/03_tiling/lab.toml", "03_tiling");
  CHECK(lab.id == "03_tiling");
  CHECK(lab.student_files == std::vector<std::string>{"matmul_tiled.cu"});
  REQUIRE(lab.checks.size() == 2);
  CHECK(lab.total_points() == 30);
  const CheckSpec* fast = lab.find_by_id("fast");
  REQUIRE(fast);
  CHECK(fast->number("min_ratio") == 1.3);
  REQUIRE(fast->credit);
  CHECK(fast->credit->fraction(1.15) == Approx(0.5));
  CHECK(fast->credit->fraction(2.0) == 1.0);
  CHECK(fast->credit->fraction(0.5) == 0.0);
  CHECK(lab.find_by_name("tiled matmul is correct on squares") == &lab.checks[0]);
  CHECK_THAT(fast->source, Catch::Contains("labs/03_tiling/lab.toml:"));
}

TEST_CASE("A missing threshold names the file and the check", "[manifest][harness]") {
  const LabSpec lab = parse_lab(kGood, "labs/x/lab.toml", "x");
  CHECK_THROWS_WITH(lab.checks[0].number("min_ratio"), Catch::Contains("labs/x/lab.toml") &&
                                                           Catch::Contains("'square'") &&
                                                           Catch::Contains("min_ratio"));
}

TEST_CASE("Malformed manifests give an error naming the file, the line and the field",
          "[manifest][harness]") {
  CHECK_THAT(error_of("[lab\ntitle = 1"),
             Catch::Contains("labs/x/lab.toml:1") && Catch::Contains("not valid TOML"));
  CHECK_THAT(error_of(replace(kGood, "points = 20", "points = \"twenty\"")),
             Catch::Contains("lab.toml:12") && Catch::Contains("'points' must be a number"));
  CHECK_THAT(error_of(replace(kGood, "kind = \"correctness\"", "kind = \"correct\"")),
             Catch::Contains("lab.toml:11") && Catch::Contains("kind must be"));
  CHECK_THAT(error_of(replace(kGood, "requires = [\"square\"]", "requires = [\"squares\"]")),
             Catch::Contains("requires 'squares'"));
  CHECK_THAT(error_of(replace(kGood, "requires = [\"square\"]\n", "")),
             Catch::Contains("a speed check must list the correctness checks it requires"));
  CHECK_THAT(error_of(replace(kGood, "title = \"Tiled matmul\"\n", "")), Catch::Contains("missing 'title'"));
  CHECK_THAT(error_of(replace(kGood, "id = \"fast\"", "id = \"square\"")),
             Catch::Contains("a second check has this id"));
  CHECK_THAT(error_of(replace(kGood, "is fast", "is fast, really")), Catch::Contains("name may not contain"));
  CHECK_THAT(error_of(replace(kGood, "full_at = 1.3", "full_at = 0.9")), Catch::Contains("credit must be"));
  CHECK_THAT(
      error_of(replace(kGood, "student_files = [\"matmul_tiled.cu\"]", "student_files = [\"../x.cu\"]")),
      Catch::Contains("plain file"));
  CHECK_THAT(error_of(replace(kGood, "min_ratio = 1.3", "min_ratio = \"1.3\"")),
             Catch::Contains("unknown field 'min_ratio'"));
  CHECK_THAT(error_of(replace(kGood, "[lab]", "[lab]\ntimeout = 3")),
             Catch::Contains("unknown field 'timeout'"));
  CHECK_THAT(error_of("[lab]\ntitle = \"t\"\nstudent_files = [\"a.cu\"]\ntests = [\"t.cpp\"]\n"),
             Catch::Contains("no checks"));
}

TEST_CASE("launchers names the global functions the tests call in the student files", "[manifest][harness]") {
  CHECK(parse_lab(kGood, "labs/x/lab.toml", "x").launchers.empty());
  const LabSpec lab =
      parse_lab(replace(kGood, "[lab]", "[lab]\nlaunchers = [\"vector_add\", \"matrix_add\"]"), "l", "x");
  CHECK(lab.launchers == std::vector<std::string>{"vector_add", "matrix_add"});
  CHECK_THAT(error_of(replace(kGood, "[lab]", "[lab]\nlaunchers = [\"ns::f\"]")),
             Catch::Contains("launchers: 'ns::f' must be the name of a global C++ function"));
  CHECK_THAT(error_of(replace(kGood, "[lab]", "[lab]\nlaunchers = \"f\"")),
             Catch::Contains("'launchers' must be a list of strings"));
}

TEST_CASE("forbid names the instruction classes a lab's lesson excludes, and only known ones",
          "[manifest][harness]") {
  CHECK(parse_lab(kGood, "l", "x").forbid.empty());
  const LabSpec lab =
      parse_lab(replace(kGood, "[lab]", "[lab]\nforbid = [\"tensor_cores\", \"tma\"]"), "l", "x");
  CHECK(lab.forbid == std::vector<std::string>{"tensor_cores", "tma"});
  CHECK_THAT(error_of(replace(kGood, "[lab]", "[lab]\nforbid = [\"mma\"]")),
             Catch::Contains("forbid: unknown instruction class 'mma' (known: tensor_cores, tma)"));
  CHECK_THAT(error_of(replace(kGood, "[lab]", "[lab]\nforbid = \"tensor_cores\"")),
             Catch::Contains("'forbid' must be a list of strings"));
}

TEST_CASE("[explain] holds the lab's words for each cause a slow kernel's diagnosis names",
          "[manifest][harness]") {
  CHECK(parse_lab(kGood, "l", "x").explain_words.empty());
  const LabSpec lab =
      parse_lab(kGood + "\n[explain]\ntraffic = \"load each tile once\"\nlaunch = \"16 x 16\"\n", "l", "x");
  CHECK(lab.explain_words ==
        std::map<std::string, std::string>{{"traffic", "load each tile once"}, {"launch", "16 x 16"}});
  CHECK_THAT(
      error_of(kGood + "\n[explain]\nreuse = \"x\"\n"),
      Catch::Contains("[explain]: unknown cause 'reuse' (known: conflicts, launch, traffic, uncoalesced)"));
  CHECK_THAT(error_of(kGood + "\n[explain]\ntraffic = 3\n"), Catch::Contains("traffic"));
  CHECK_THAT(error_of(kGood + "\n[words]\n"),
             Catch::Contains("unknown table 'words' (known: [lab], [[check]], [explain], [diagnosis])"));
}

TEST_CASE("[diagnosis] holds the lab's words for the fix of each cause a correctness diagnosis names",
          "[manifest][harness]") {
  CHECK(parse_lab(kGood, "l", "x").diagnosis_words.empty());
  const LabSpec lab =
      parse_lab(kGood + "\n[diagnosis]\nboundary_checks = \"test `i < n` before the store\"\n", "l", "x");
  CHECK(lab.diagnosis_words == std::map<cudalab::Cause, std::string>{
                                   {cudalab::Cause::boundary_checks, "test `i < n` before the store"}});
  // Only the closed list's spellings: a title or a made-up cause is refused.
  CHECK_THAT(
      error_of(kGood + "\n[diagnosis]\n\"the boundary checks\" = \"x\"\n"),
      Catch::Contains("[diagnosis]: unknown cause 'the boundary checks' (known: none, not_implemented,"));
  CHECK_THAT(error_of(kGood + "\n[diagnosis]\nunrecorded = \"x\"\n"),
             Catch::Contains("unknown cause 'unrecorded'"));
  CHECK_THAT(error_of(kGood + "\n[diagnosis]\nrace = 3\n"), Catch::Contains("race"));
  // A cause whose diagnosis names no fix has nothing for the words to replace.
  CHECK_THAT(error_of(kGood + "\n[diagnosis]\nempty_grid = \"x\"\n"),
             Catch::Contains("'empty_grid' states facts and names no fix"));
}

TEST_CASE("A manifest file that does not exist is reported by name", "[manifest][harness]") {
  CHECK_THROWS_WITH(load_lab("/nonexistent/lab.toml"), Catch::Contains("/nonexistent/lab.toml"));
}

TEST_CASE("a speed check may name the correctness check whose access report explains it, or itself",
          "[manifest][harness]") {
  const std::string with =
      replace(kGood, "requires = [\"square\"]", "requires = [\"square\"]\nexplain = \"square\"");
  CHECK(parse_lab(with, "l", "x").checks[1].explain == "square");
  CHECK(parse_lab(kGood, "l", "x").checks[1].explain.empty());
  // Itself: its counting run, one call at a small shape.
  CHECK(parse_lab(replace(kGood, "requires = [\"square\"]", "requires = [\"square\"]\nexplain = \"fast\""),
                  "l", "x")
            .checks[1]
            .explain == "fast");
  CHECK(error_of(replace(kGood, "requires = [\"square\"]", "requires = [\"square\"]\nexplain = \"slow\""))
            .find("neither an earlier correctness check's id nor this check's own") != std::string::npos);
  CHECK(error_of(replace(kGood, "points = 20", "points = 20\nexplain = \"square\""))
            .find("explain is for speed checks") != std::string::npos);
}
