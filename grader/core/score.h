// grader/core/score.h: from verdicts to points. Host-only.
//
// Correctness checks are all or nothing. A speed check counts only when the
// correctness checks it requires passed in the same run; then, if it has a
// credit curve, its points follow the ratio the grader timed (none at
// zero_at, all at full_at, linear between), else all or nothing on its
// verdict.
//
// A grade is scored from Judged verdicts only (judged.h): what a process
// that ran the student's code wrote can lower a score, never raise one.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/judged.h"
#include "core/records.h"
#include "cudalab/manifest.h"

namespace cudalab {

// A timed speed check's outcome as the grader scored it, typed: what every
// view shows of it (the ratio, the line, the credit curve's points), so that
// no view looks a measurement up by name or re-derives the pass line.
struct SpeedOutcome {
  double ratio = 0;               // the student's kernels' speed relative to the reference's, as timed
  std::optional<double> pass_at;  // lab.toml's min_ratio: the check passes at or above it
  std::optional<Credit> credit;   // points from zero_at (none) to full_at (all), where the check has a curve
};

// A speed check's outcome at `ratio` against its lab.toml line and curve;
// nullopt for a check that is not a speed check or was not timed.
std::optional<SpeedOutcome> speed_outcome(const CheckSpec& spec, std::optional<double> ratio);

struct CheckScore {
  double points = 0, max_points = 0;
  std::string why;     // when not full: "counts only when 'ragged' passes"
  bool gated = false;  // a check it requires did not pass: it counts for nothing, whatever its verdict
  // A speed check the grader timed (in a preview: that the student's own
  // run timed); none for every other check.
  std::optional<SpeedOutcome> speed;
};

CheckScore score_check(const CheckSpec& spec, const Judged& result, const std::vector<Judged>& all);

// `./cudalab test` on the student's own machine: what the checks it just ran
// would be worth, from their records as they are (its own process, its own
// numbers). Never a grade: the grader scores Judged verdicts only.
CheckScore preview_check_score(const CheckSpec& spec, const CheckResult& result,
                               const std::vector<CheckResult>& all);

}  // namespace cudalab
