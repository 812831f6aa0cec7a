// grader/pipeline/reference.cpp: the reference solution's side of every check: its evidence and times per
// seed, kept and pruned, and the grading folder's key.
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

namespace {

// Where the reference's results for a check are kept: <reference>/evidence/
// <gpu|cpu>/<seed>/<lab>/<check>.{evidence,seconds}.
fs::path reference_record(const fs::path& reference_dir, const RunContext& ctx, const LabSpec& lab,
                          const CheckSpec& check, bool cpu_mode, const char* ext) {
  return reference_dir / "evidence" / (cpu_mode ? "cpu" : "gpu") / (ctx.seed.empty() ? "default" : ctx.seed) /
         lab.id / (check.id + ext);
}

// A kept file is current when the reference binary is not newer.
bool current(const fs::path& file, const fs::path& binary) {
  std::error_code ec;
  return fs::exists(file, ec) && fs::last_write_time(file, ec) >= fs::last_write_time(binary, ec);
}

double read_seconds(const fs::path& file) {
  std::ifstream in(file);
  double s = 0;
  return in >> s && s > 0 ? s : 0;
}

void write_seconds(const fs::path& file, double seconds) {
  (void)write_text(file, fmt::format("{:.3f}\n", seconds));
}

// The reference's evidence kept, per mode, for this many seeds: a batch on N
// GPUs has up to 2N submissions in flight, and the same files graded again
// (a warm grade, a resumed batch) reuse theirs.
constexpr std::size_t kKeptSeeds = 64;

}  // namespace

std::mutex& Grader::record_lock(const fs::path& file) {
  const std::lock_guard<std::mutex> lock(record_locks_mutex_);
  auto& m = record_locks_[file.string()];
  if (!m) m = std::make_unique<std::mutex>();
  return *m;
}

fs::path Grader::reference_evidence(const RunContext& ctx, const LabSpec& lab, const CheckSpec& check,
                                    bool cpu_mode, std::string& error, double* seconds) {
  error = build_reference(lab, cpu_mode);
  if (!error.empty()) return {};
  const fs::path binary = reference_binary(build(kReferenceSlot), lab, cpu_mode);
  const fs::path dir = slot_dir(cfg_.work_dir, kReferenceSlot);
  const fs::path file = reference_record(dir, ctx, lab, check, cpu_mode, ".evidence");
  const fs::path time_file = reference_record(dir, ctx, lab, check, cpu_mode, ".seconds");
  const std::lock_guard<std::mutex> lock(record_lock(file));
  std::error_code ec;
  // Kept from an earlier run (a batch's first submission) with its time and launches.
  if (current(file, binary) && current(time_file, binary) && current(reference_launches_file(file), binary)) {
    if (seconds) *seconds = read_seconds(time_file);
    // The seed's folder, newest again: pruning keeps the recently used.
    fs::last_write_time(file.parent_path().parent_path(), fs::file_time_type::clock::now(), ec);
    return file;
  }
  fs::create_directories(file.parent_path());
  RunContext rc = bare_run(ctx, binary);
  // A name of its own: Slurm tasks on several nodes may compute it at once in
  // one shared grading folder; the rename below is atomic and the contents equal.
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  rc.evidence_out = file.string() + "." + host + "-" + run_stem(lab.id, check.id) + ".tmp";
  rc.role = RunRole::reference;  // the course's cap is for students; the reference gets the lab's own limit
  const CheckResult r = run_reference_check(rc, lab, check).said;
  if (!r.passed()) {
    fs::remove(rc.evidence_out, ec);
    fs::remove(reference_launches_file(rc.evidence_out), ec);
    error = fmt::format(
        "the reference solution did not pass the check {} of {} ({}{}): the grader cannot judge it", check.id,
        lab.id, r.verdict, r.failures.empty() ? "" : ": " + r.failures.front());
    return {};
  }
  fs::rename(reference_launches_file(rc.evidence_out), reference_launches_file(file), ec);
  fs::rename(rc.evidence_out, file);
  write_seconds(time_file, r.seconds);
  if (seconds) *seconds = r.seconds;
  return file;
}

double Grader::reference_speed_seconds(const RunContext& ctx, const LabSpec& lab, const CheckSpec& check,
                                       bool cpu_mode) {
  if (!build_reference(lab, cpu_mode).empty()) return 0;
  const fs::path binary = reference_binary(build(kReferenceSlot), lab, cpu_mode);
  const fs::path time_file =
      reference_record(slot_dir(cfg_.work_dir, kReferenceSlot), ctx, lab, check, cpu_mode, ".seconds");
  const std::lock_guard<std::mutex> lock(record_lock(time_file));
  if (current(time_file, binary)) return read_seconds(time_file);
  fs::create_directories(time_file.parent_path());
  RunContext rc = bare_run(ctx, binary);
  rc.role = RunRole::reference;
  const CheckResult r = run_reference_check(rc, lab, check).said;
  // Its time counts if the check ran to its end (a pass, or a ratio below the
  // threshold on this GPU, or "not run" in CPU mode); a hang or a crash of the
  // reference leaves the lab's limit.
  if (r.verdict != Verdict::pass && r.verdict != Verdict::fail && r.verdict != Verdict::not_run) return 0;
  write_seconds(time_file, r.seconds);
  return r.seconds;
}

const GradingKey& Grader::key() {
  const std::lock_guard<std::mutex> lock(key_mutex_);
  if (!key_) key_ = grading_key(cfg_.work_dir);
  return *key_;
}

std::string Grader::reference_speed_seed() {
  // The speed checks time fresh inputs of their own (cudalab/timing.h); this
  // seed only keeps the reference's time apart from every student's seed.
  return derive_seed(key(), cfg_.seed, "reference speed runs", {});
}

void Grader::prune_reference_evidence() {
  const std::lock_guard<std::recursive_mutex> lock(reference_mutex_);
  std::error_code ec;
  for (const char* mode : {"gpu", "cpu"}) {
    const fs::path dir = slot_dir(cfg_.work_dir, kReferenceSlot) / "evidence" / mode;
    std::vector<std::pair<fs::file_time_type, fs::path>> seeds;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
      if (it->is_directory(ec)) seeds.emplace_back(fs::last_write_time(it->path(), ec), it->path());
    if (seeds.size() <= kKeptSeeds) continue;
    std::sort(seeds.begin(), seeds.end());
    for (std::size_t k = 0; k + kKeptSeeds < seeds.size(); ++k) fs::remove_all(seeds[k].second, ec);
  }
}

Grader::CorrectnessPlan Grader::plan_correctness(const Setup& s) {
  const SubmissionGrade& g = s.grade;
  struct Planned {
    std::size_t lab, check;
    RunContext ctx;
    std::string no_judge;
  };
  std::vector<Planned> planned;
  for (std::size_t i = 0; i < g.labs.size(); ++i) {
    const LabGrade& lab = g.labs[i];
    if (lab.status != LabStatus::graded) continue;
    const RunContext lc = s.lab_context(i, build(s.slot));
    for (std::size_t k = 0; k < lab.spec->checks.size(); ++k)
      if (lab.spec->checks[k].kind == CheckKind::correctness) planned.push_back({i, k, lc, {}});
  }
  // A new seed (every new submission has one) runs the reference on each
  // check: side by side, as the student's checks run after it.
  const std::size_t jobs = check_jobs(cfg_.check_jobs, g.cpu_mode, std::thread::hardware_concurrency());
  for_each_side_by_side(planned.size(), jobs, [&](std::size_t n) {
    Planned& p = planned[n];
    const LabSpec& spec = *g.labs[p.lab].spec;
    p.ctx.reference_evidence =
        reference_evidence(p.ctx, spec, spec.checks[p.check], g.cpu_mode, p.no_judge, &p.ctx.reference_s);
  });
  CorrectnessPlan plan;
  plan.decided = undecided(g);
  for (Planned& p : planned) {
    // Without the reference's outputs nothing can be judged: a pass from
    // the test process alone is worth nothing.
    if (p.ctx.reference_evidence.empty())
      plan.decided[p.lab][p.check] =
          judge_by_grader(g.labs[p.lab].spec->checks[p.check], Verdict::error, p.no_judge);
    else
      plan.checks.push_back({p.lab, p.check, std::move(p.ctx)});
  }
  // The longest first (by the reference's time on each): the last to finish
  // then is a short one, and the pass ends soon after the longest check.
  // A memory check that is replayed takes two processes one after the other.
  const auto expected_s = [&](const CorrectnessPlan::Pending& p) {
    const CheckSpec& check = g.labs[p.lab].spec->checks[p.check];
    return p.ctx.reference_s * (memory_replayed(g, check) ? 2 : 1);
  };
  std::stable_sort(plan.checks.begin(), plan.checks.end(),
                   [&](const auto& a, const auto& b) { return expected_s(a) > expected_s(b); });
  profile(fmt::format("slot {}: reference evidence ready", s.slot));
  return plan;
}

}  // namespace cudalab
