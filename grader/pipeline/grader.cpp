// grader/pipeline/grader.cpp: the grading pipeline: Grader::grade runs its stages in order (stage.cpp, then
// run: correctness, second looks, speed, score).
#include "pipeline/grader.h"

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
#include "pipeline/internal.h"
#include "run/explain.h"
#include "run/policy.h"
#include "run/process.h"
#include "run/progress.h"
#include "run/sandbox.h"
#include "run/submission.h"

namespace fs = std::filesystem;

namespace cudalab {

namespace {

// A lab that was not run gets one result per check carrying the reason, so
// every export lists every check.
void fill_unrun(LabGrade& lab) {
  lab.results.clear();
  for (const auto& c : lab.spec->checks)
    lab.results.push_back(
        judge_by_grader(c, lab.status == LabStatus::not_run ? Verdict::not_run : Verdict::fail, lab.message));
}

// A stage's progress on stderr (what, how long so far); a stage's own builds
// show their steps within it (progress.h nests).
template <class Stage>
auto step(const ProgressOptions& options, const std::string& what, Stage&& stage) {
  Progress progress(what, "checks", options);
  return stage(progress);
}

}  // namespace

Grader::Grader(GraderConfig config) : cfg_(std::move(config)) {}

SubmissionGrade Grader::grade(const fs::path& submission, const std::string& id) {
  return run(stage(submission, id, 0));
}

SubmissionGrade Grader::run(Staged st) {
  // The GPU's half of a grade: each stage takes the record the one before it
  // made and returns the next (grader.h), in the file named beside it. The
  // verdicts are the grader's own (judged.h); no stage after the checks can
  // raise one.
  const ProgressOptions shown = progress_options();
  Setup setup = begin_checks(std::move(st));  // grader.cpp: probe the GPU; the checks' context
  const CorrectnessPlan plan = step(shown, "running the reference solution on each check",
                                    [&](Progress&) { return plan_correctness(setup); });  // reference.cpp
  Ran ran = step(shown, fmt::format("running {} correctness checks", plan.checks.size()),
                 [&](Progress& p) { return run_correctness(setup, plan, p); });  // correctness.cpp
  Verdicts looked = step(shown, "taking second looks at the failed checks", [&](Progress&) {
    return take_second_looks(setup, plan, std::move(ran.verdicts));  // second_looks.cpp
  });
  Verdicts all = step(shown, "running the speed checks", [&](Progress&) {
    return run_speed_checks(setup, std::move(looked), std::move(ran.traces));  // speed.cpp
  });
  return finish(std::move(setup), std::move(all));  // grader.cpp: the student's paths, the score
}

RunContext Grader::Setup::lab_context(std::size_t lab, const fs::path& build_dir) const {
  RunContext lc = ctx;
  const LabSpec& spec = *grade.labs[lab].spec;
  lc.binary = build_dir / "labs" / (spec.id + (grade.cpu_mode ? "-tests-cpu" : "-tests"));
  lc.lab_toml = spec.file;
  lc.seed = seeds[lab];
  return lc;
}

Grader::Setup Grader::begin_checks(Staged st) {
  Setup s;
  s.t0 = std::chrono::steady_clock::now();
  s.slot = st.slot;
  s.gpu = std::move(st.gpu);
  s.seeds = std::move(st.seeds);
  s.staged_seconds = st.seconds;
  s.grade = std::move(st.grade);
  SubmissionGrade& g = s.grade;
  if (g.error.empty()) {
    // The GPU, once per submission (a previous one may have left it unusable).
    ProcessOptions probe;
    probe.argv = {(build(s.slot) / "harness" / "cudalab-gpuinfo").string()};
    probe.timeout_s = kGpuProbeLimit_s;
    if (!s.gpu.empty()) {
      std::map<std::string, std::string> env = minimal_environment();
      env["CUDA_VISIBLE_DEVICES"] = s.gpu;
      probe.env = env;
    }
    const ProcessResult pr = run_process(probe);
    const auto info = nlohmann::json::parse(pr.output, nullptr, false);
    g.gpu = !info.is_discarded() && info.is_object() && info.value("usable", false);
    g.gpu_line = info.is_object() ? (g.gpu ? info.value("name", "") : info.value("reason", ""))
                                  : "not probed: " + pr.describe();
    g.cpu_mode = !g.gpu && (cfg_.course.cpu_mode || cfg_.cpu_fallback);
    g.provisional = g.cpu_mode && !cfg_.course.cpu_mode;
  }
  profile(fmt::format("slot {}: probed the GPU", s.slot));
  RunContext& ctx = s.ctx;
  ctx.seed = cfg_.seed;
  ctx.work_dir = cfg_.work_dir / "records";
  ctx.clean_env = true;
  ctx.course_cap_s = cfg_.course.check_timeout_s;
  // One allowance for all of this submission's words (time_limits.h).
  ctx.words = std::make_shared<WordsAllowance>(cfg_.course.words_allowance_s);
  // This submission's GPU alone, for its checks and for the reference runs
  // they cause (the reference's evidence does not depend on which GPU of a
  // host ran it).
  if (!s.gpu.empty()) ctx.extra_env.push_back("CUDA_VISIBLE_DEVICES=" + s.gpu);
  for (std::size_t i = 0; i < g.labs.size(); ++i) {
    LabGrade& lab = g.labs[i];
    if (!st.ready[i]) continue;
    if (!g.gpu && !g.cpu_mode) {
      lab.status = LabStatus::not_run;
      lab.message = "built; the checks need a GPU and none is usable (" + g.gpu_line + ")";
      continue;
    }
    lab.status = LabStatus::graded;
  }
  return s;
}

Grader::Verdicts Grader::undecided(const SubmissionGrade& g) {
  Verdicts v(g.labs.size());
  for (std::size_t i = 0; i < g.labs.size(); ++i)
    if (g.labs[i].status == LabStatus::graded) v[i].resize(g.labs[i].spec->checks.size());
  return v;
}

SubmissionGrade Grader::finish(Setup s, Verdicts verdicts) {
  SubmissionGrade& g = s.grade;
  for (std::size_t i = 0; i < g.labs.size(); ++i) {
    LabGrade& lab = g.labs[i];
    if (lab.status != LabStatus::graded) continue;
    for (auto& r : verdicts[i]) {
      // Every check of a graded lab is decided by now (run_speed_checks
      // decides the last ones): a gap is the pipeline's bug, not a grade.
      if (!r) throw std::logic_error("a check of " + lab.spec->id + " was left undecided");
      // The grading folder's paths mean nothing to a student: "launched at
      // labs/03_tiling/matmul_tiled.cu:61", as in the build log.
      r->edit_words([&](CheckResult& words) {
        std::vector<std::string*> texts{&words.output};
        for (auto& f : words.failures) texts.push_back(&f);
        for (auto& n : words.notes) texts.push_back(&n);
        for (int slot : {s.slot, 0, kReferenceSlot})
          for (const fs::path& dir : {fs::absolute(overlay(slot)), overlay(slot)})
            for (std::string* text : texts) replace_all(*text, dir.string() + "/", "labs/");
      });
      lab.results.push_back(std::move(*r));
    }
  }
  for (auto& lab : g.labs)
    if (lab.status != LabStatus::graded) fill_unrun(lab);
  score_submission(g);
  prune_reference_evidence();
  g.seconds =
      s.staged_seconds + std::chrono::duration<double>(std::chrono::steady_clock::now() - s.t0).count();
  return std::move(g);
}

}  // namespace cudalab
