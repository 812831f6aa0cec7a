// The record written by a lab test binary, read back by the grader.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cudalab/catch.h"
#include "cudalab/record.h"
#include "run/checks.h"

using namespace cudalab;

TEST_CASE("A check record round-trips from the test binary to the grader", "[record][harness]") {
  const auto path = std::filesystem::temp_directory_path() / "cudalab-unit-record.json";
  set_record_path(path.string());
  begin_check("it works");
  note("a note");
  measure("ratio", 1.48, "x");
  add_failure("C[1][2] is wrong");
  end_check(false, 0.5);
  begin_check("speed in cpu mode");
  mark_not_run("speed is not measured in CPU mode");
  end_check(true, 0.1);
  set_record_path("");

  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  CheckResult r;
  REQUIRE(parse_check_record(ss.str(), "it works", r));
  CHECK(r.verdict == Verdict::fail);
  CHECK(r.failures == std::vector<std::string>{"C[1][2] is wrong"});
  CHECK(r.notes == std::vector<std::string>{"a note"});
  REQUIRE(r.find("ratio"));
  CHECK(r.find("ratio")->value == 1.48);

  CheckResult nr;
  REQUIRE(parse_check_record(ss.str(), "speed in cpu mode", nr));
  CHECK(nr.verdict == Verdict::not_run);  // never "pass"
  CHECK_FALSE(parse_check_record(ss.str(), "no such check", nr));
  CHECK_FALSE(parse_check_record("{not json", "it works", nr));
  std::filesystem::remove(path);
}
