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
#include "pipeline/grader.h"
#include "pipeline/internal.h"
#include "run/explain.h"
#include "run/policy.h"
#include "run/process.h"
#include "run/sandbox.h"
#include "run/submission.h"

namespace fs = std::filesystem;

namespace cudalab {

std::string Grader::build_for_words(const RunContext& ctx, const std::string& target, int slot, bool& ok) {
  ok = false;
  if (!ctx.words) return build_lab(target, slot, ok);
  // Failed or timed out for an earlier look: the same files fail the same way.
  if (const std::string* log = ctx.words->failed_build(target)) return *log;
  const double limit = ctx.words->limit(cfg_.course.build_timeout_s);
  if (limit <= 0) return words_skipped_note(ctx.words->total_s(), "the build " + target);
  const auto t0 = std::chrono::steady_clock::now();
  std::string log = build_targets({target}, slot, ok, limit);
  ctx.words->charge(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  if (!ok) ctx.words->build_failed(target, log);
  return log;
}

void Grader::explain_slow(const RunContext& ctx, const LabSpec& lab, const CheckSpec& speed, int slot,
                          const std::string& launch, CheckResult& r) {
  const CheckSpec* by = lab.find_by_id(speed.explain);
  if (!by || !timed_and_failed(r)) return;
  const auto skipped = [&] {
    r.notes.push_back(words_skipped_note(ctx.words->total_s(), "why this check was slow"));
  };
  if (ctx.words && ctx.words->spent()) return skipped();
  const std::vector<std::string> lab_words = r.failures;
  bool ok = false;
  build_for_words(ctx, lab.id + "-tests-access", slot, ok);
  if (!ok) {
    if (ctx.words && ctx.words->spent()) skipped();
    return;
  }
  // The reference's count of the same check: without it only what needs no
  // comparison can lead (bank conflicts, uncoalesced accesses).
  std::string error;
  const std::optional<AccessCount> reference = reference_access_count(ctx, lab, *by, error);
  if (!reference)
    profile(fmt::format("  {} {}: no reference count to explain by: {}", lab.id, speed.id, error));
  explain_by_access(ctx, lab, *by, build(slot) / "labs" / (lab.id + "-tests-access"),
                    reference ? &*reference : nullptr,
                    ctx.work_dir / (run_stem(lab.id, by->id) + "-access.json"), launch, r);
  // Cut short by the allowance: whatever it counted is not the kernel's whole
  // run, and the lab's own words stand.
  if (ctx.words && ctx.words->spent()) {
    r.failures = lab_words;
    skipped();
  }
}

bool Grader::second_look(const RunContext& ctx, const LabSpec& lab, const CheckSpec& check, int slot,
                         CheckResult& r) {
  const SecondOpinion kind = second_opinion_for(r, !compute_sanitizer_program().empty());
  if (kind == SecondOpinion::none) return false;
  // Built only when a look needs it (--prepare builds it on a GPU host).
  const auto cpu_binary = [&]() -> fs::path {
    bool ok = false;
    build_for_words(ctx, lab.id + "-tests-cpu", slot, ok);
    return ok ? build(slot) / "labs" / (lab.id + "-tests-cpu") : fs::path();
  };
  return second_opinion(ctx, lab, check, kind, cpu_binary, r);
}

Grader::Verdicts Grader::take_second_looks(const Setup& s, const CorrectnessPlan& plan,
                                           std::vector<Judged> ran) {
  const SubmissionGrade& g = s.grade;
  Verdicts verdicts = plan.decided;
  // Labs whose hung check did not finish in CPU mode either: their other
  // hung checks are spared that look (a submission that hangs in every
  // check of a lab should cost about 30 s).
  std::vector<std::string> hangs_in_cpu_mode(g.labs.size());  // the check that did
  for (std::size_t k = 0; k < plan.checks.size(); ++k) {
    const auto& p = plan.checks[k];
    const LabSpec& spec = *g.labs[p.lab].spec;
    const CheckSpec& check = spec.checks[p.check];
    Judged& r = ran[k];
    RunContext plain = p.ctx;
    plain.reference_evidence.clear();
    plain.reference_s = 0;
    // The second looks say why; they never change a verdict (edit_words).
    r.edit_words([&](CheckResult& words) {
      if (g.cpu_mode) lead_hang_in_cpu_mode(words, grid_stride_lab(spec));
      if (g.gpu && words.verdict == Verdict::timeout && !hangs_in_cpu_mode[p.lab].empty()) {
        lead_hang_like(hangs_in_cpu_mode[p.lab], words, grid_stride_lab(spec));
        return;
      }
      if (!g.gpu || second_opinion_for(words, !compute_sanitizer_program().empty()) == SecondOpinion::none)
        return;
      // Within the submission's allowance (time_limits.h): a look it cut
      // short says nothing of the kernel (a timeout that is the allowance's),
      // so its words are dropped for a note.
      const CheckResult before = words;
      const bool looked = !s.ctx.words->spent() && second_look(plain, spec, check, s.slot, words);
      if (s.ctx.words->spent()) {
        words = before;
        words.notes.push_back(words_skipped_note(s.ctx.words->total_s(), "why this check failed"));
      } else if (looked && words.verdict == Verdict::timeout)
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
    verdicts[p.lab][p.check] = std::move(r);
  }
  return verdicts;
}

}  // namespace cudalab
