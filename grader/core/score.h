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

#include <string>
#include <vector>

#include "core/judged.h"
#include "core/records.h"
#include "cudalab/manifest.h"

namespace cudalab {

struct CheckScore {
  double points = 0, max_points = 0;
  std::string why;     // when not full: "counts only when 'ragged' passes"
  bool gated = false;  // a check it requires did not pass: it counts for nothing, whatever its verdict
};

CheckScore score_check(const CheckSpec& spec, const Judged& result, const std::vector<Judged>& all);

// `./cudalab test` on the student's own machine: what the checks it just ran
// would be worth, from their records as they are (its own process, its own
// numbers). Never a grade: the grader scores Judged verdicts only.
CheckScore preview_check_score(const CheckSpec& spec, const CheckResult& result,
                               const std::vector<CheckResult>& all);

}  // namespace cudalab
