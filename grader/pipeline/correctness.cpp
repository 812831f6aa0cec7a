// grader/pipeline/correctness.cpp: the student's correctness checks, all labs
// side by side: each runs alone in its own confined process with its own
// limit (a Claim), and the judge compares its outputs with the reference's
// (judged.h). They time nothing, so they may share the GPU; so may the
// speed checks' traced runs, which join them as soon as the processes of the
// checks they require claimed a pass (the judge still decides those).
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <mutex>
#include <thread>

#include "pipeline/grader.h"
#include "pipeline/internal.h"
#include "run/checks.h"
#include "run/progress.h"

namespace fs = std::filesystem;

namespace cudalab {

Grader::Ran Grader::run_correctness(const Setup& s, const CorrectnessPlan& plan, Progress& progress) {
  const SubmissionGrade& g = s.grade;
  // Each task writes its own element: the verdict of its check, or the trace
  // of its speed check.
  std::vector<std::optional<Judged>> ran(plan.checks.size());
  Traces traces(g.labs.size());
  for (std::size_t i = 0; i < g.labs.size(); ++i) traces[i].resize(g.labs[i].spec->checks.size());

  // Per lab and check: whether its trace is queued. A speed check whose
  // requirements are not all among this run's correctness checks is traced
  // by the speed stage.
  std::vector<std::vector<bool>> queued(g.labs.size());
  for (std::size_t i = 0; i < g.labs.size(); ++i) queued[i].assign(g.labs[i].spec->checks.size(), false);
  const auto planned = [&](std::size_t lab, const std::string& id) {
    return std::any_of(plan.checks.begin(), plan.checks.end(), [&](const auto& p) {
      return p.lab == lab && g.labs[lab].spec->checks[p.check].id == id;
    });
  };
  std::mutex lock;  // guards queued and the claims below
  // Per lab, the checks whose process claimed a pass (before the judge's word).
  std::vector<std::vector<std::string>> claimed(g.labs.size());
  TaskPool pool;
  std::atomic<std::size_t> finished{0};  // correctness checks, for the progress line
  const auto trace = [&](std::size_t lab, std::size_t k) {
    pool.add([&, lab, k] {
      const LabSpec& spec = *g.labs[lab].spec;
      const CheckSpec& check = spec.checks[k];
      const auto t0 = std::chrono::steady_clock::now();
      traces[lab][k] = trace_speed_check(speed_context(s, lab, check), spec, check);
      profile(fmt::format("  {} {} traced beside the correctness checks ({:.2f} s)", spec.id, check.id,
                          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()));
    });
  };
  // Speed checks to trace: on a GPU, in a lab being graded, not yet decided.
  const auto traceable = [&](std::size_t lab, std::size_t k) {
    const CheckSpec& check = g.labs[lab].spec->checks[k];
    return !g.cpu_mode && g.gpu && g.labs[lab].status == LabStatus::graded &&
           check.kind == CheckKind::speed && !plan.decided[lab][k] &&
           std::all_of(check.required.begin(), check.required.end(),
                       [&](const std::string& id) { return planned(lab, id); });
  };
  // Traces to start now: those whose requirements all claimed a pass already.
  const auto release = [&](std::size_t lab) {
    const auto& checks = g.labs[lab].spec->checks;
    for (std::size_t k = 0; k < checks.size(); ++k) {
      if (queued[lab][k] || !traceable(lab, k)) continue;
      const auto& need = checks[k].required;
      if (std::all_of(need.begin(), need.end(), [&](const std::string& id) {
            return std::find(claimed[lab].begin(), claimed[lab].end(), id) != claimed[lab].end();
          })) {
        queued[lab][k] = true;
        trace(lab, k);
      }
    }
  };

  for (std::size_t k = 0; k < plan.checks.size(); ++k)
    pool.add([&, k] {
      const auto& p = plan.checks[k];
      const LabSpec& spec = *g.labs[p.lab].spec;
      const CheckSpec& check = spec.checks[p.check];
      using clock = std::chrono::steady_clock;
      const auto since = [](clock::time_point t) {
        return std::chrono::duration<double>(clock::now() - t).count();
      };
      const auto t0 = clock::now();
      // The student's process claims; the judge compares its outputs with the reference's.
      RunContext ctx = p.ctx;
      const bool replayed = memory_replayed(g, check);
      if (replayed) ctx.trace_out = ctx.work_dir / (run_stem(spec.id, check.id) + ".calls");
      Claim claim = run_student_check(ctx, spec, check);
      const double process_s = since(t0);
      // The speed checks that need this one are traced while the judge reads
      // its outputs (a trace times nothing and decides nothing): where the
      // judge then fails it, the speed stage drops the trace unread.
      if (claim.said.verdict == Verdict::pass) {
        const std::lock_guard<std::mutex> guard(lock);
        claimed[p.lab].push_back(check.id);
        release(p.lab);
      }
      const auto t1 = clock::now();
      std::vector<std::string> right;
      Judged judged =
          judge_correctness(std::move(claim), p.ctx.reference_evidence, check, &right, &spec.diagnosis_words);
      if (replayed)
        judged = judge_memory_in_replay(s, p.lab, check, ctx, std::move(judged), ctx.trace_out, right);
      profile(fmt::format("  {} {} ran: its process {:.2f} s, judged in {:.2f} s{}", spec.id, check.id,
                          process_s, since(t1), replayed ? " (with its replay)" : ""));
      progress.update(++finished, plan.checks.size(), spec.id + " " + check.id);
      ran[k] = std::move(judged);
    });
  {
    const std::lock_guard<std::mutex> guard(lock);
    for (std::size_t i = 0; i < g.labs.size(); ++i) release(i);  // speed checks that require nothing
  }
  pool.run(check_jobs(cfg_.check_jobs, g.cpu_mode, std::thread::hardware_concurrency()));
  profile(fmt::format("slot {}: {} correctness checks ran", s.slot, plan.checks.size()));
  Ran out;
  out.traces = std::move(traces);
  for (auto& r : ran) out.verdicts.push_back(std::move(*r));  // the pool ran every task or threw
  return out;
}

bool Grader::memory_replayed(const SubmissionGrade& g, const CheckSpec& check) {
  return !g.cpu_mode && g.gpu && check.kind == CheckKind::correctness && check.judge == "memory";
}

// The memory check's second judgement, where the student's host code cannot
// reach: the launches its run traced, replayed on guarded buffers by the
// reference build. It costs one more process of the reference build and the
// check's small shapes once more (a second or less on the GPU), and only for
// a claim that passed.
Judged Grader::judge_memory_in_replay(const Setup& s, std::size_t lab, const CheckSpec& check,
                                      const RunContext& ctx, Judged judged, const fs::path& trace,
                                      const std::vector<std::string>& student_right) {
  const LabSpec& spec = *s.grade.labs[lab].spec;
  const fs::path kernels = fs::path(trace.string() + ".kernels");
  struct Remove {
    std::vector<fs::path> files;
    ~Remove() {
      std::error_code ec;
      for (const auto& f : files) fs::remove(f, ec);
    }
  } remove{{trace, kernels}};
  if (!judged.passed()) return judged;
  if (const std::string big = over_bound(trace, kMaxTraceBytes, "its launch trace"); !big.empty()) {
    judged.lower_to_fail(big);
    return judged;
  }
  std::string error;
  const std::string reference_error = build_reference(spec, /*cpu_mode=*/false);
  if (!reference_error.empty() || !student_device_code(spec, s.slot, kernels, error))
    return judge_by_grader(check, Verdict::error,
                           fmt::format("the grader cannot replay this submission's launches: {}",
                                       reference_error.empty() ? error : reference_error));
  RunContext rc = ctx;
  rc.binary = reference_binary(build(kReferenceSlot), spec, false);
  rc.replay_trace = trace;
  rc.replay_code = kernels;
  rc.reference_s = 0;
  return judge_memory_replay(std::move(judged), run_memory_replay(rc, spec, check), ctx.reference_evidence,
                             student_right);
}

}  // namespace cudalab
