// cudalab/timing.h: times a student's launcher against a reference, side by
// side in one process.
//
// Each round flushes the L2 cache (a memset of twice its size), then times
// one launcher call with CUDA events; student and reference alternate which
// goes first. The ratio reference/student is taken per round and its median
// reported, so drifts in clock speed cancel. Rounds continue until the
// ratio's relative noise is at most 0.5% (at least 10 rounds) or the time
// budget is spent. Three warm-up calls of each come first.
#pragma once

#include <functional>

#include "cudalab/stats.h"

namespace cudalab {

struct SideBySide {
  Summary student_ms;
  Summary reference_ms;
  Summary ratio;  // reference time / student time: > 1 means the student is faster
  bool converged = false;
};

SideBySide time_side_by_side(const std::function<void()>& student, const std::function<void()>& reference,
                             const StopRule& rule = {});

}  // namespace cudalab
