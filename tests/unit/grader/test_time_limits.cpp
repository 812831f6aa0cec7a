// The one rule for a check's time limit (grader/core/time_limits.h), for every role a
// run of a check's process plays.
#include <catch2/catch.hpp>
#include <cmath>

#include "core/time_limits.h"

using namespace cudalab;

namespace {
RunLimitInputs inputs(double lab_s, double course_cap_s, double reference_s, RunRole role,
                      bool sanitizer = false, bool speed = false) {
  RunLimitInputs in;
  in.lab_s = lab_s;
  in.course_cap_s = course_cap_s;
  in.reference_s = reference_s;
  in.role = role;
  in.sanitizer = sanitizer;
  in.speed = speed;
  return in;
}
}  // namespace

TEST_CASE("A student's check gets the lab's limit, capped by the course, or ten times the reference's time",
          "[time-limits][grader]") {
  CHECK(check_run_limit(inputs(120, 0, 0, RunRole::student)) == Approx(120));
  CHECK(check_run_limit(inputs(120, 30, 0, RunRole::student)) == Approx(30));
  CHECK(check_run_limit(inputs(120, 0, 1.2, RunRole::student)) == Approx(12));
  CHECK(check_run_limit(inputs(120, 0, 1.2, RunRole::student, false, true)) == Approx(24));
  // The course's cap, then the reference's rule within it.
  CHECK(check_run_limit(inputs(120, 20, 9.1, RunRole::student)) == Approx(20));
}

TEST_CASE("The reference solution's run gets the lab's own limit, whatever the course caps",
          "[time-limits][grader]") {
  CHECK(check_run_limit(inputs(120, 20, 0, RunRole::reference)) == Approx(120));
  // A reference time never shortens the reference's own run.
  CHECK(check_run_limit(inputs(120, 20, 1.0, RunRole::reference)) == Approx(120));
}

TEST_CASE("Under a sanitizer a check gets ten times its limit, never one from the reference's time",
          "[time-limits][grader]") {
  CHECK(check_run_limit(inputs(120, 0, 0, RunRole::student, true)) == Approx(1200));
  CHECK(check_run_limit(inputs(120, 30, 0, RunRole::student, true)) == Approx(300));
  CHECK(check_run_limit(inputs(120, 0, 1.2, RunRole::student, true)) == Approx(1200));
}

TEST_CASE("A second look never holds a grade for more than 90 s, a sanitizer's included",
          "[time-limits][grader]") {
  CHECK(check_run_limit(inputs(120, 0, 0, RunRole::second_look)) == Approx(kSecondLookLimit_s));
  CHECK(check_run_limit(inputs(30, 0, 0, RunRole::second_look)) == Approx(30));
  CHECK(check_run_limit(inputs(5, 0, 0, RunRole::second_look, true)) == Approx(50));
  CHECK(check_run_limit(inputs(120, 0, 0, RunRole::second_look, true)) == Approx(kSecondLookLimit_s));
  CHECK(check_run_limit(inputs(120, 20, 0, RunRole::second_look)) == Approx(20));
}

TEST_CASE("CPU mode's look at a hung check stops after 10 s", "[time-limits][grader]") {
  CHECK(check_run_limit(inputs(120, 0, 0, RunRole::hang_look)) == Approx(kHangLookLimit_s));
  CHECK(check_run_limit(inputs(120, 5, 0, RunRole::hang_look)) == Approx(5));
  CHECK(check_run_limit(inputs(120, 0, 3.0, RunRole::hang_look)) == Approx(kHangLookLimit_s));
}

TEST_CASE("A graded check's time limit is a multiple of the reference's, between a floor and the cap",
          "[time-limits][grader]") {
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

TEST_CASE("A run for words gets at most what is left of the submission's allowance",
          "[time-limits][grader]") {
  WordsAllowance words(90);
  CHECK(words.limit(60) == Approx(60));  // its own limit, while the allowance has more
  words.charge(50);
  CHECK(words.left_s() == Approx(40));
  CHECK(words.limit(60) == Approx(40));  // what is left, not its own 60 s
  CHECK(words.limit(0) == Approx(40));   // no limit of its own: what is left
  CHECK_FALSE(words.spent());
}

TEST_CASE("A kernel that never ends costs the allowance once, not once per look", "[time-limits][grader]") {
  WordsAllowance words(kWordsAllowance_s);
  // Each look that hangs runs to its limit (kSecondLookLimit_s, or what is
  // left) and is charged for it; the looks after the allowance are not run.
  double spent_s = 0;
  int runs = 0;
  for (int look = 0; look < 8; ++look) {
    const double limit = words.limit(kSecondLookLimit_s);
    if (limit <= 0) break;
    words.charge(limit);
    spent_s += limit;
    ++runs;
  }
  CHECK(spent_s == Approx(kWordsAllowance_s));
  CHECK(runs == static_cast<int>(std::ceil(kWordsAllowance_s / kSecondLookLimit_s)));
  CHECK(words.spent());
  CHECK(words.limit(kSecondLookLimit_s) == 0);
}

TEST_CASE("An allowance of 0 runs no look at all, and time never flows back", "[time-limits][grader]") {
  WordsAllowance none(0);
  CHECK(none.spent());
  CHECK(none.limit(90) == 0);
  WordsAllowance words(10);
  words.charge(-5);  // a clock that went backwards gives nothing back
  CHECK(words.left_s() == Approx(10));
  words.charge(12);  // a run that overran its limit (the kill takes time)
  CHECK(words.spent());
  CHECK(words.limit(5) == 0);
}

TEST_CASE("A build for words that failed is remembered with its log, not tried again",
          "[time-limits][grader]") {
  WordsAllowance words(90);
  CHECK(words.failed_build("03_tiling-tests-access") == nullptr);
  words.build_failed("03_tiling-tests-access", "the build did not finish within 40 s");
  const std::string* log = words.failed_build("03_tiling-tests-access");
  REQUIRE(log != nullptr);
  CHECK(*log == "the build did not finish within 40 s");
  CHECK(words.failed_build("03_tiling-tests-cpu") == nullptr);  // another target still builds
}

TEST_CASE("A skipped look says what was not looked into and that the grade stands", "[time-limits][grader]") {
  const std::string note = words_skipped_note(90, "why this check was slow");
  CHECK(note.rfind("why this check was slow was not looked into", 0) == 0);
  CHECK(note.find("90 s") != std::string::npos);
  CHECK(note.find("the grade does not depend on them") != std::string::npos);
}
