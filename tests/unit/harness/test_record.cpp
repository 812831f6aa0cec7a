// The record written by a lab test binary, read back by the grader.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "checks.h"
#include "cudalab/catch.h"
#include "cudalab/record.h"

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

// Issue 13: a graded check's limit follows the reference solution's time.
TEST_CASE("A graded check's time limit is a multiple of the reference's, between a floor and the cap",
          "[record][harness]") {
  // Correctness: 10 x, at least 10 s, at most the lab's or course's cap.
  CHECK(check_limit(1.2, 120, false) == Approx(12));
  CHECK(check_limit(0.3, 120, false) == Approx(10));  // the floor
  CHECK(check_limit(9.1, 20, false) == Approx(20));   // the course's check_timeout_s
  CHECK(check_limit(30, 120, false) == Approx(120));  // the lab's timeout_s
  CHECK(check_limit(0.5, 5, false) == Approx(5));     // a cap below the floor still caps
  // A cap the reference itself does not fit in twice yields to that: a
  // correct kernel as fast as the reference must not time out.
  CHECK(check_limit(23.9, 20, false) == Approx(47.8));
  CHECK(check_limit(12, 20, true) == Approx(24));
  CHECK(check_limit(10, 20, false) == Approx(20));
  // Speed checks get more headroom: 20 x, at least 20 s.
  CHECK(check_limit(1.2, 120, true) == Approx(24));
  CHECK(check_limit(0.5, 120, true) == Approx(20));
  CHECK(check_limit(10, 120, true) == Approx(120));
  // No reference time: the cap alone, as before. No cap: the rule alone.
  CHECK(check_limit(0, 120, false) == Approx(120));
  CHECK(check_limit(-1, 60, true) == Approx(60));
  CHECK(check_limit(2, 0, false) == Approx(20));

  // The timeout message names the limit and the reference's time.
  CHECK(describe_limit(12, 1.2, false) == "12 s (10 x the reference solution's 1.2 s)");
  CHECK(describe_limit(10, 0.3, false) == "10 s (the least a check gets; the reference solution took 0.3 s)");
  CHECK(describe_limit(20, 9.1, false) ==
        "20 s (the lab's or course's limit; the reference solution took 9.1 s)");
  CHECK(describe_limit(24, 1.2, true) == "24 s (20 x the reference solution's 1.2 s)");
  CHECK(describe_limit(120, 0, false) == "120 s");
  CHECK(describe_limit(check_limit(24, 20, false), 24, false) ==
        "48 s (twice the reference solution's 24 s: the lab's or course's limit is less)");
  CHECK(describe_limit(check_limit(12.5, 600, false), 12.5, false) ==
        "125 s (10 x the reference solution's 12 s)");
}
