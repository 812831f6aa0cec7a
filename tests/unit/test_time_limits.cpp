// The one rule for a check's time limit (grader/time_limits.h), for every role a
// run of a check's process plays.
#include <catch2/catch.hpp>

#include "time_limits.h"

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
          "[time_limits]") {
  CHECK(check_run_limit(inputs(120, 0, 0, RunRole::student)) == Approx(120));
  CHECK(check_run_limit(inputs(120, 30, 0, RunRole::student)) == Approx(30));
  CHECK(check_run_limit(inputs(120, 0, 1.2, RunRole::student)) == Approx(12));
  CHECK(check_run_limit(inputs(120, 0, 1.2, RunRole::student, false, true)) == Approx(24));
  // The course's cap, then the reference's rule within it.
  CHECK(check_run_limit(inputs(120, 20, 9.1, RunRole::student)) == Approx(20));
}

TEST_CASE("The reference solution's run gets the lab's own limit, whatever the course caps",
          "[time_limits]") {
  CHECK(check_run_limit(inputs(120, 20, 0, RunRole::reference)) == Approx(120));
  // A reference time never shortens the reference's own run.
  CHECK(check_run_limit(inputs(120, 20, 1.0, RunRole::reference)) == Approx(120));
}

TEST_CASE("Under a sanitizer a check gets ten times its limit, never one from the reference's time",
          "[time_limits]") {
  CHECK(check_run_limit(inputs(120, 0, 0, RunRole::student, true)) == Approx(1200));
  CHECK(check_run_limit(inputs(120, 30, 0, RunRole::student, true)) == Approx(300));
  CHECK(check_run_limit(inputs(120, 0, 1.2, RunRole::student, true)) == Approx(1200));
}

TEST_CASE("A second look never holds a grade for more than 90 s, a sanitizer's included", "[time_limits]") {
  CHECK(check_run_limit(inputs(120, 0, 0, RunRole::second_look)) == Approx(kSecondLookLimit_s));
  CHECK(check_run_limit(inputs(30, 0, 0, RunRole::second_look)) == Approx(30));
  CHECK(check_run_limit(inputs(5, 0, 0, RunRole::second_look, true)) == Approx(50));
  CHECK(check_run_limit(inputs(120, 0, 0, RunRole::second_look, true)) == Approx(kSecondLookLimit_s));
  CHECK(check_run_limit(inputs(120, 20, 0, RunRole::second_look)) == Approx(20));
}

TEST_CASE("CPU mode's look at a hung check stops after 10 s", "[time_limits]") {
  CHECK(check_run_limit(inputs(120, 0, 0, RunRole::hang_look)) == Approx(kHangLookLimit_s));
  CHECK(check_run_limit(inputs(120, 5, 0, RunRole::hang_look)) == Approx(5));
  CHECK(check_run_limit(inputs(120, 0, 3.0, RunRole::hang_look)) == Approx(kHangLookLimit_s));
}
