// Lateness (late.h): the platforms' timestamps read as one instant in any
// zone, and an assignment's late rule counted in whole days from its due
// moment, exactly at the due moment on time, past max_days nothing.
#include <catch2/catch.hpp>

#include "core/course.h"
#include "core/grade_document.h"
#include "core/late.h"
#include "core/submission_grade.h"
#include "cudalab/manifest.h"
#include "judged_for_tests.h"
#include "testbed.h"

using namespace cudalab;

namespace {

Assignment hw3(const std::string& due = "2026-12-05T23:59:00-05:00", double per_day = 0.1, int max_days = 3) {
  Assignment a;
  a.name = "hw3";
  a.labs = {"03_tiling"};
  a.due = due;
  a.late_per_day = per_day;
  a.late_max_days = max_days;
  return a;
}

Instant at(const std::string& text) {
  std::string error;
  const auto t = parse_instant(text, error);
  INFO(error);
  REQUIRE(t);
  return *t;
}

}  // namespace

TEST_CASE("The platforms' spellings of one moment read as the same instant", "[unit][late]") {
  const std::int64_t utc = at("2026-12-06T04:41:07Z").utc_ms;
  const auto [text, offset] = GENERATE(table<std::string, int>({
      {"2026-12-05T23:41:07-05:00", -300},             // RFC 3339, PrairieLearn's CSV
      {"2026-12-05 23:41:07.000000000 -05:00", -300},  // Gradescope's submission_metadata.yml
      {"2026-12-06 04:41:07 UTC", 0},                  // GitHub Classroom's grades CSV
      {"2026-12-06T10:11:07+0530", 330},               // an offset without a colon
      {"2026-12-06t04:41:07z", 0},
  }));
  CAPTURE(text);
  const Instant t = at(text);
  CHECK(t.utc_ms == utc);
  CHECK(t.offset_minutes == offset);
}

TEST_CASE("An instant is written back in ISO 8601 in its own zone, milliseconds kept", "[unit][late]") {
  CHECK(iso8601(at("2026-12-05 23:41:07.123456000 -05:00")) == "2026-12-05T23:41:07.123-05:00");
  CHECK(iso8601(at("2026-12-06 04:41:07 UTC")) == "2026-12-06T04:41:07+00:00");
  CHECK(iso8601(at("2024-02-29T00:00:00+05:30")) == "2024-02-29T00:00:00+05:30");
  CHECK(iso8601(at("1969-12-31T23:59:59Z")) == "1969-12-31T23:59:59+00:00");
}

TEST_CASE("A time without its zone, or a date alone, is refused with what is missing", "[unit][late]") {
  std::string error;
  CHECK_FALSE(parse_instant("2026-12-05T23:41:07", error));
  CHECK(error.find("no time zone") != std::string::npos);
  CHECK_FALSE(parse_instant("2026-12-05", error));
  CHECK(error.find("a date alone") != std::string::npos);
  CHECK_FALSE(parse_instant("yesterday", error));
  CHECK(error.find("'yesterday'") != std::string::npos);
  CHECK_FALSE(parse_instant("2026-12-05T23:41:07-05:00 extra", error));
  CHECK_FALSE(parse_instant("2026-13-05T23:41:07Z", error));
}

TEST_CASE("Days late count from the due moment whatever zone each is written in", "[unit][late]") {
  const Assignment a = hw3();
  const auto [submitted, days, fraction] = GENERATE(table<std::string, int, double>({
      {"2026-12-05T23:59:00-05:00", 0, 0.0},  // exactly at due: on time
      {"2026-12-06T04:59:00Z", 0, 0.0},       // the same moment in UTC
      {"2026-12-05T12:00:00-05:00", 0, 0.0},  // early
      {"2026-12-05T23:59:01-05:00", 1, 0.1},  // one second late: a day
      {"2026-12-06T04:59:00.001Z", 1, 0.1},   // a millisecond late, in another zone
      {"2026-12-06T23:59:00-05:00", 1, 0.1},  // exactly one day late
      {"2026-12-06T23:59:01-05:00", 2, 0.2},  // a day and a second
      {"2026-12-07T10:59:00+06:00", 1, 0.1},  // 23 hours late, written east of UTC
      {"2026-12-08T23:59:00-05:00", 3, 0.3},  // max_days exactly: still counted
  }));
  CAPTURE(submitted);
  const auto l = lateness(a, at(submitted));
  REQUIRE(l);
  CHECK(l->days == days);
  CHECK(l->fraction == Approx(fraction));
  CHECK_FALSE(l->past_max_days);
  CHECK((days == 0) == l->reason.empty());
}

TEST_CASE("Past max_days late nothing is given, with that reason", "[unit][late]") {
  const auto l = lateness(hw3(), at("2026-12-08T23:59:01-05:00"));  // 3 days and a second
  REQUIRE(l);
  CHECK(l->days == 4);
  CHECK(l->past_max_days);
  CHECK(l->fraction == 1);
  CHECK(l->reason.find("more than the 3 days") != std::string::npos);
  // max_days 0: any lateness at all gives nothing.
  const auto none = lateness(hw3("2026-12-05T23:59:00-05:00", 0.1, 0), at("2026-12-05T23:59:01-05:00"));
  REQUIRE(none);
  CHECK(none->past_max_days);
  // The fraction is capped at all of the points.
  const auto capped = lateness(hw3("2026-12-05T23:59:00Z", 0.4, 5), at("2026-12-08T23:59:00Z"));
  REQUIRE(capped);
  CHECK(capped->days == 3);
  CHECK(capped->fraction == 1);
  CHECK_FALSE(capped->past_max_days);
}

TEST_CASE("No due date, or no late rule, applies no lateness", "[unit][late]") {
  CHECK_FALSE(lateness(hw3(""), at("2030-01-01T00:00:00Z")));
  CHECK_FALSE(lateness(hw3("2026-12-05T23:59:00-05:00", 0, 0), at("2030-01-01T00:00:00Z")));
  // A date alone cannot be counted from: the course file is to say when.
  CHECK_THROWS_AS(lateness(hw3("2026-12-05"), at("2026-12-06T00:00:00Z")), ManifestError);
}

TEST_CASE("The late rule takes its share off a platform's grade and keeps the score before", "[unit][late]") {
  // A submission worth 40 of 50 before any penalty (its one check's points).
  const LabSpec spec = testbed::tiled_lab();
  const auto graded = [&](std::optional<LatePenalty> late) {
    SubmissionGrade g;
    g.id = "submission_1";
    LabGrade lab;
    lab.spec = &spec;
    for (std::size_t i = 0; i < spec.checks.size(); ++i)
      lab.results.push_back(
          JudgedForTests::make(testbed::graded_check(spec.checks[i], Verdict::pass).result));
    g.labs.push_back(lab);
    g.late = std::move(late);
    score_submission(g);
    return g;
  };
  const double full = graded(std::nullopt).score;
  REQUIRE(full > 0);
  // No time from the platform: never guessed, nothing taken.
  SubmissionRecord rec{"gradescope", "1", "", {}};
  CHECK_FALSE(late_penalty(hw3(), rec));

  rec.time = "2026-12-07T00:00:00-05:00";  // 2 days late
  const auto two_days = late_penalty(hw3(), rec);
  REQUIRE(two_days);
  CHECK(two_days->days == 2);
  const SubmissionGrade g = graded(two_days);
  REQUIRE(g.late);
  CHECK(g.late->score_before == Approx(full));
  CHECK(g.score == Approx(full * 0.8));
  // The grade document carries the penalty and the score after it.
  const GradeDocument doc = grade_document(g, "test");
  REQUIRE(doc.late);
  CHECK(doc.score == Approx(full * 0.8));
  CHECK(doc.late->score_before == Approx(full));

  rec.time = "2026-12-10T00:00:00-05:00";
  const auto past = late_penalty(hw3(), rec);
  REQUIRE(past);
  CHECK(graded(past).score == 0);
  CHECK(past->reason.find("no points") != std::string::npos);

  rec.time = "2026-12-05T23:59:00-05:00";
  const auto on_time = late_penalty(hw3(), rec);
  REQUIRE(on_time);
  CHECK(on_time->days == 0);
  CHECK(graded(on_time).score == Approx(full));

  // A time that cannot be read is refused, naming it.
  rec.time = "yesterday";
  CHECK_THROWS_AS(late_penalty(hw3(), rec), ManifestError);
}
