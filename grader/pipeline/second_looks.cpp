// grader/pipeline/second_looks.cpp: second looks at failed checks: CPU mode, racecheck and the access report
// say why (explain.h); they never change a verdict.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <future>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "cudalab/replay.h"
#include "explain.h"
#include "grade.h"
#include "pipeline/internal.h"
#include "policy.h"
#include "process.h"
#include "sandbox.h"
#include "submission.h"

namespace fs = std::filesystem;

namespace cudalab {

void Grader::explain_slow(const RunContext& ctx, const LabSpec& lab, const CheckSpec& speed, int slot,
                          const std::string& launch, CheckResult& r) {
  const CheckSpec* by = lab.find_by_id(speed.explain);
  if (!by || !timed_and_failed(r)) return;
  bool ok = false;
  build_lab(lab.id + "-tests-access", slot, ok);
  if (!ok) return;
  // The reference's count of the same check: without it only what needs no
  // comparison can lead (bank conflicts, uncoalesced accesses).
  std::string error;
  const std::optional<AccessCount> reference = reference_access_count(ctx, lab, *by, error);
  if (!reference)
    profile(fmt::format("  {} {}: no reference count to explain by: {}", lab.id, speed.id, error));
  explain_by_access(ctx, lab, *by, build(slot) / "labs" / (lab.id + "-tests-access"),
                    reference ? &*reference : nullptr,
                    ctx.work_dir / (run_stem(lab.id, by->id) + "-access.json"), launch, r);
}

bool Grader::second_look(const RunContext& ctx, const LabSpec& lab, const CheckSpec& check, int slot,
                         CheckResult& r) {
  const SecondOpinion kind = second_opinion_for(r, !compute_sanitizer_program().empty());
  if (kind == SecondOpinion::none) return false;
  // Built only when a look needs it (--prepare builds it on a GPU host).
  const auto cpu_binary = [&]() -> fs::path {
    bool ok = false;
    build_lab(lab.id + "-tests-cpu", slot, ok);
    return ok ? build(slot) / "labs" / (lab.id + "-tests-cpu") : fs::path();
  };
  return second_opinion(ctx, lab, check, kind, cpu_binary, r);
}

void Grader::take_second_looks(Checking& c) {
  const SubmissionGrade& g = c.grade;
  // Labs whose hung check did not finish in CPU mode either: their other
  // hung checks are spared that look (a submission that hangs in every
  // check of a lab should cost about 30 s).
  std::vector<std::string> hangs_in_cpu_mode(g.labs.size());  // the check that did
  for (std::size_t k = 0; k < c.correctness.size(); ++k) {
    const auto& p = c.correctness[k];
    const LabSpec& spec = *g.labs[p.lab].spec;
    const CheckSpec& check = spec.checks[p.check];
    Judged& r = *c.ran[k];
    RunContext plain = p.ctx;
    plain.reference_evidence.clear();
    plain.reference_s = 0;
    // The second looks say why; they never change a verdict (edit_words).
    r.edit_words([&](CheckResult& words) {
      if (g.cpu_mode) lead_hang_in_cpu_mode(words, grid_stride_lab(spec));
      if (g.gpu && words.verdict == Verdict::timeout && !hangs_in_cpu_mode[p.lab].empty())
        lead_hang_like(hangs_in_cpu_mode[p.lab], words, grid_stride_lab(spec));
      else if (g.gpu && second_look(plain, spec, check, c.staged.slot, words) &&
               words.verdict == Verdict::timeout)
        hangs_in_cpu_mode[p.lab] = check.name;
    });
    // Under the sanitizers too: a kernel can be right by luck (a race that
    // did not bite, a read past the end that found harmless values). Their
    // report can only fail a check.
    for (const auto& tool : cfg_.sanitizers) {
      if (!g.gpu || !r.passed()) break;
      RunContext sc = plain;
      sc.sanitizer = tool;
      const CheckResult s = run_check(sc, spec, check);
      if (!s.failures.empty() && s.failures.front().rfind("compute-sanitizer", 0) == 0)
        r.lower_to_fail(s.failures.front());
    }
    c.done[p.lab][p.check] = std::move(r);
  }
}

}  // namespace cudalab
