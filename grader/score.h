// grader/score.h: from check results to points. Host-only.
//
// Correctness checks are all or nothing. A speed check counts only when the
// correctness checks it requires passed in the same run; then, if it has a
// credit curve, its points follow the measured ratio (none at zero_at, all
// at full_at, linear between), else all or nothing on its verdict.
#pragma once

#include <string>
#include <vector>

#include "checks.h"
#include "cudalab/manifest.h"

namespace cudalab {

struct CheckScore {
  double points = 0, max_points = 0;
  std::string why;     // when not full: "counts only when 'ragged' passes"
  bool gated = false;  // a check it requires did not pass: it counts for nothing, whatever its verdict
};

CheckScore score_check(const CheckSpec& spec, const CheckResult& result,
                       const std::vector<CheckResult>& all_results);

}  // namespace cudalab
