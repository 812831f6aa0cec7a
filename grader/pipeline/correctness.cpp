// grader/pipeline/correctness.cpp: the student's correctness checks, all labs
// side by side: each runs alone in its own confined process with its own
// limit (a Claim), and the judge compares its outputs with the reference's
// (judged.h). They time nothing, so they may share the GPU.
#include <fmt/format.h>

#include <algorithm>
#include <thread>

#include "grade.h"
#include "pipeline/internal.h"

namespace cudalab {

void Grader::run_correctness(Checking& c) {
  // The longest first (by the reference's time on each): the last to finish
  // then is a short one, and the pass ends soon after the longest check.
  std::stable_sort(c.correctness.begin(), c.correctness.end(),
                   [](const auto& a, const auto& b) { return a.ctx.reference_s > b.ctx.reference_s; });
  c.ran.assign(c.correctness.size(), std::nullopt);
  const std::size_t jobs = check_jobs(cfg_.check_jobs, c.grade.cpu_mode, std::thread::hardware_concurrency());
  for_each_side_by_side(c.correctness.size(), jobs, [&](std::size_t k) {
    const auto& p = c.correctness[k];
    const LabSpec& spec = *c.grade.labs[p.lab].spec;
    const CheckSpec& check = spec.checks[p.check];
    // The student's process claims; the judge compares its outputs with the reference's.
    c.ran[k] = judge_correctness(run_student_check(p.ctx, spec, check), p.ctx.reference_evidence, check);
  });
  profile(fmt::format("slot {}: {} correctness checks ran", c.staged.slot, c.correctness.size()));
}

}  // namespace cudalab
