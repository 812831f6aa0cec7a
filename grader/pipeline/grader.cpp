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

}  // namespace

Grader::Grader(GraderConfig config) : cfg_(std::move(config)) {}

void Grader::step(Checking& c, const std::string& what, void (Grader::*stage)(Checking&)) {
  // A stage's own builds show their steps within it (progress.h nests).
  Progress progress(what, "checks", progress_options());
  c.progress = &progress;
  (this->*stage)(c);
  c.progress = nullptr;
}

SubmissionGrade Grader::grade(const fs::path& submission, const std::string& id) {
  return run(stage(submission, id, 0));
}

SubmissionGrade Grader::run(Staged st) {
  // The GPU's half of a grade, stage by stage. Each stage is a function over
  // the Checking it is given (grade.h) and lives in the file named beside it.
  // The verdicts are the grader's own (judged.h); no stage after the checks
  // can raise one.
  Checking c = begin_checks(std::move(st));  // grader.cpp: probe the GPU; the checks' context
  step(c, "running the reference solution on each check", &Grader::plan_correctness);  // reference.cpp
  step(c, fmt::format("running {} correctness checks", c.correctness.size()),
       &Grader::run_correctness);                                                   // correctness.cpp
  step(c, "taking second looks at the failed checks", &Grader::take_second_looks);  // second_looks.cpp
  step(c, "running the speed checks", &Grader::run_speed_checks);                   // speed.cpp
  return finish(c);  // grader.cpp: the student's paths, the score
}

RunContext Grader::Checking::lab_context(std::size_t lab, const fs::path& build_dir) const {
  RunContext lc = ctx;
  const LabSpec& spec = *grade.labs[lab].spec;
  lc.binary = build_dir / "labs" / (spec.id + (grade.cpu_mode ? "-tests-cpu" : "-tests"));
  lc.lab_toml = spec.file;
  lc.seed = staged.seeds[lab];
  return lc;
}

Grader::Checking Grader::begin_checks(Staged st) {
  Checking c;
  c.t0 = std::chrono::steady_clock::now();
  c.grade = std::move(st.grade);
  c.staged = std::move(st);
  SubmissionGrade& g = c.grade;
  if (g.error.empty()) {
    // The GPU, once per submission (a previous one may have left it unusable).
    ProcessOptions probe;
    probe.argv = {(build(c.staged.slot) / "harness" / "cudalab-gpuinfo").string()};
    probe.timeout_s = kGpuProbeLimit_s;
    if (!c.staged.gpu.empty()) {
      std::map<std::string, std::string> env = minimal_environment();
      env["CUDA_VISIBLE_DEVICES"] = c.staged.gpu;
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
  profile(fmt::format("slot {}: probed the GPU", c.staged.slot));
  RunContext& ctx = c.ctx;
  ctx.seed = cfg_.seed;
  ctx.work_dir = cfg_.work_dir / "records";
  ctx.clean_env = true;
  ctx.course_cap_s = cfg_.course.check_timeout_s;
  // One allowance for all of this submission's words (time_limits.h).
  ctx.words = std::make_shared<WordsAllowance>(cfg_.course.words_allowance_s);
  // This submission's GPU alone, for its checks and for the reference runs
  // they cause (the reference's evidence does not depend on which GPU of a
  // host ran it).
  if (!c.staged.gpu.empty()) ctx.extra_env.push_back("CUDA_VISIBLE_DEVICES=" + c.staged.gpu);
  c.done.resize(g.labs.size());
  for (std::size_t i = 0; i < g.labs.size(); ++i) {
    LabGrade& lab = g.labs[i];
    if (!c.staged.ready[i]) continue;
    if (!g.gpu && !g.cpu_mode) {
      lab.status = LabStatus::not_run;
      lab.message = "built; the checks need a GPU and none is usable (" + g.gpu_line + ")";
      continue;
    }
    lab.status = LabStatus::graded;
    c.done[i].resize(lab.spec->checks.size());
  }
  return c;
}

SubmissionGrade Grader::finish(Checking& c) {
  SubmissionGrade& g = c.grade;
  const int slot = c.staged.slot;
  for (std::size_t i = 0; i < g.labs.size(); ++i) {
    LabGrade& lab = g.labs[i];
    if (lab.status != LabStatus::graded) continue;
    for (auto& r : c.done[i]) {
      // The grading folder's paths mean nothing to a student: "launched at
      // labs/03_tiling/matmul_tiled.cu:61", as in the build log.
      r->edit_words([&](CheckResult& words) {
        std::vector<std::string*> texts{&words.output};
        for (auto& f : words.failures) texts.push_back(&f);
        for (auto& n : words.notes) texts.push_back(&n);
        for (int s : {slot, 0, kReferenceSlot})
          for (const fs::path& dir : {fs::absolute(overlay(s)), overlay(s)})
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
      c.staged.seconds + std::chrono::duration<double>(std::chrono::steady_clock::now() - c.t0).count();
  return std::move(g);
}

}  // namespace cudalab
