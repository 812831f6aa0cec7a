// grader/core/late.h: when a submission was made and how late it was: the
// platforms' timestamps read into one instant, and an assignment's late rule
// (course.toml [[assignment]] due, late = { per_day, max_days }) applied to
// it. Host-only arithmetic, no clock: the submission's time is the platform's
// word, never the grading machine's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/course.h"
#include "core/handin.h"

namespace cudalab {

// A moment as a platform wrote it: milliseconds since 1970-01-01T00:00:00Z
// and the offset from UTC it was written in (kept, so that the student reads
// the time in the zone the platform showed them).
struct Instant {
  std::int64_t utc_ms = 0;
  int offset_minutes = 0;
};

// Reads an ISO 8601 / RFC 3339 date-time with its zone, in the spellings the
// platforms use: "2026-12-05T23:41:07-05:00", "2026-12-05T23:41:07Z",
// Gradescope's "2026-12-05 23:41:07.123456000 -05:00", GitHub Classroom's
// "2026-12-05 04:41:07 UTC", "+0500" offsets. A time without a zone, or a date
// alone, is refused: without its zone it names no single moment. nullopt with
// `error` saying what is wrong.
std::optional<Instant> parse_instant(const std::string& text, std::string& error);

// The instant written back as ISO 8601 in its own offset, seconds and
// (where there are any) milliseconds: "2026-12-05T23:41:07.123-05:00".
std::string iso8601(const Instant& t);

// The late rule applied to one submission.
struct Lateness {
  int days = 0;                // days late, each day or part of one counted whole; 0 on time
  double fraction = 0;         // of the points taken: days * per_day, capped at 1
  bool past_max_days = false;  // more than max_days late: nothing is given
  std::string reason;          // for the student, e.g. "2 days late: 20% of the points taken"
};

// How late `submitted` is for `a`: nullopt where no rule applies (no due date,
// or no late rule: per_day 0). A submission exactly at the due moment is on
// time; one millisecond after is one day late. Past max_days late, the
// fraction is 1 and past_max_days is set. Throws ManifestError where the due
// date is a date without a time and zone (course.toml allows it; a late rule
// cannot measure from it).
std::optional<Lateness> lateness(const Assignment& a, const Instant& submitted);

// The late rule of `a` for a submission handed in at the platform's time
// (s.time): the penalty score_submission takes off (submission_grade.h), or
// nullopt where none applies (no rule, no due date, or no time: lateness is
// never guessed). Throws ManifestError as lateness() does, and where the
// platform's time cannot be read (naming it).
std::optional<LatePenalty> late_penalty(const Assignment& a, const SubmissionRecord& s);

}  // namespace cudalab
