// tests/unit/grader/judged_for_tests.h: verdicts made up for the exports' and the
// scorer's tests. The grader itself has no such door (grader/core/judged.h): its
// verdicts come from its own judges only. Defined here, in the tests alone.
#pragma once

#include <cmath>

#include "core/judged.h"

namespace cudalab {

struct JudgedForTests {
  // As if the grader had reached `r`'s verdict itself; a speed check's
  // "ratio" measurement as if its replay had timed it.
  static Judged make(CheckResult r) {
    Judged j;
    j.r_ = std::move(r);
    if (j.r_.kind == CheckKind::speed && (j.r_.verdict == Verdict::pass || j.r_.verdict == Verdict::fail))
      if (const Measurement* m = j.r_.find("ratio"); m && std::isfinite(m->value)) j.ratio_ = m->value;
    return j;
  }
  static std::vector<Judged> make(std::vector<CheckResult> rs) {
    std::vector<Judged> out;
    for (auto& r : rs) out.push_back(make(std::move(r)));
    return out;
  }
  // A made-up verdict's words and verdict changed in place (a test that
  // turns one grade into another).
  static CheckResult& words(Judged& j) { return j.r_; }
  static void retime(Judged& j) { j = make(j.r_); }
};

}  // namespace cudalab
