// grader/pipeline/speed.cpp: speed checks: the student's run traces its launches, the reference build replays
// and times them.
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
#include "run/meson_project.h"
#include "run/policy.h"
#include "run/process.h"
#include "run/sandbox.h"
#include "run/submission.h"

namespace fs = std::filesystem;

namespace cudalab {

namespace {

// "'square' failed" when a check this one requires has a result that did not
// pass; "" when all passed or are still to run (then the score gates it).
std::string failed_requirement(const CheckSpec& check, const std::vector<Judged>& done) {
  std::vector<std::string> failed;
  for (const auto& id : check.required)
    for (const auto& r : done)
      if (r.result().id == id && !r.passed()) failed.push_back("'" + id + "'");
  if (failed.empty()) return {};
  return fmt::format("{} failed (a speed check counts only for correct code)", fmt::join(failed, " and "));
}

}  // namespace

bool Grader::student_device_code(const LabSpec& lab, int slot, const fs::path& out, std::string& error) {
  const fs::path build_ = build(slot), overlay_ = overlay(slot);
  const auto db = MesonProject(build_).compile_commands();
  if (!db.is_array()) {
    error = "the grader could not read compile_commands.json";
    return false;
  }
  // The objects of the student's own library (labs/meson.build), and only those.
  std::vector<std::string> pieces;
  for (const auto& f : lab.student_files) {
    for (const auto& e : db) {
      if (!student_object(e, overlay_, lab, f, /*cpu=*/false)) continue;
      std::string fatbin, why;
      // Host-only files (.cpp) have no device code.
      if (replay::elf_section(read_text(build_ / e.value("output", "")), ".nv_fatbin", fatbin, why))
        pieces.push_back(std::move(fatbin));
    }
  }
  if (pieces.empty()) {
    error = "none of the submission's files has compiled kernels";
    return false;
  }
  std::ofstream o(out, std::ios::binary | std::ios::trunc);
  o << replay::pack(pieces);
  if (!o) {
    error = "the grader could not write " + out.string();
    return false;
  }
  return true;
}

Grader::Traced Grader::trace_speed_check(const RunContext& ctx, const LabSpec& lab, const CheckSpec& check) {
  fs::create_directories(ctx.work_dir);
  RunContext traced = ctx;
  traced.trace_out = (ctx.work_dir / run_stem(lab.id, check.id)).string() + ".trace";
  Claim claim = run_student_check(traced, lab, check);
  // Whatever the student's run says of itself counts for nothing but a
  // failure: a pass only means "traced", and the grader's replay times it.
  if (claim.said.verdict == Verdict::pass)
    if (std::string big = over_bound(traced.trace_out, kMaxTraceBytes, "its launch trace"); !big.empty())
      claim.said.verdict = Verdict::fail, claim.said.failures = {std::move(big)};
  return Traced{std::move(claim), traced.trace_out};
}

RunContext Grader::speed_context(const Setup& s, std::size_t lab, const CheckSpec& check) {
  const RunContext lc = s.lab_context(lab, build(s.slot));
  RunContext cc = lc;
  RunContext speed_ctx = lc;
  speed_ctx.seed = reference_speed_seed();
  cc.reference_s = reference_speed_seconds(speed_ctx, *s.grade.labs[lab].spec, check, false);
  return cc;
}

Judged Grader::run_speed_check(const RunContext& ctx, const LabSpec& lab, const CheckSpec& check, int slot,
                               std::string& launch, std::optional<Traced> traced) {
  const fs::path base = ctx.work_dir / run_stem(lab.id, check.id);
  Traced t = traced ? std::move(*traced) : trace_speed_check(ctx, lab, check);
  Claim& claim = t.claim;
  struct Remove {
    std::vector<fs::path> files;
    ~Remove() {
      std::error_code ec;
      for (const auto& f : files) fs::remove(f, ec);
    }
  } remove{{t.file, base.string() + ".kernels"}};
  if (claim.said.verdict != Verdict::pass) return judge_speed_untimed(std::move(claim));
  const double traced_s = claim.said.seconds;
  if (!traced) profile(fmt::format("  {} {} traced", lab.id, check.id));
  launch = describe_traced_launch(read_text(t.file));
  std::string error;
  const std::string reference_error = build_reference(lab, /*cpu_mode=*/false);
  if (!reference_error.empty() || !student_device_code(lab, slot, base.string() + ".kernels", error))
    return judge_by_grader(check, Verdict::error,
                           fmt::format("the grader cannot time this submission: {}",
                                       reference_error.empty() ? error : reference_error));
  profile(fmt::format("  {} {} kernels extracted", lab.id, check.id));
  RunContext rc = ctx;
  rc.binary = reference_binary(build(kReferenceSlot), lab, false);
  rc.replay_trace = t.file;
  rc.replay_code = base.string() + ".kernels";
  Testimony timed = run_reference_check(rc, lab, check);
  timed.said.seconds += traced_s;
  timed.said.notes.insert(
      timed.said.notes.begin(),
      "timed by the grader: your kernels, replayed from the launches your launcher made, in a "
      "process that runs none of your host code");
  return judge_speed_timed(std::move(timed));
}

Grader::WordsAfterTiming Grader::words_after_timing(const RunContext& lc, const LabSpec& lab,
                                                    const CheckSpec& check, int slot,
                                                    const CheckResult& timed, const std::string& launch) {
  WordsAfterTiming words;
  if (!check.explain.empty() && timed_and_failed(timed)) {
    CheckResult explained = timed;
    try {
      explain_slow(lc, lab, check, slot, launch, explained);
      words.failures = explained.failures;
      words.notes = explained.notes;
      words.cause = explained.cause;
    } catch (const std::exception& e) {
      // The lab's own message stands without a lead.
      profile(fmt::format("  {} {}: not explained: {}", lab.id, check.id, e.what()));
    }
  }
  try {
    chart_traffic(lc, lab, check, slot, timed, words.counted);
  } catch (const std::exception& e) {
    // A chart without counts, never a grade without a result.
    words.counted = CheckResult{};
    record_no_traffic(e.what(), words.counted);
  }
  return words;
}

std::optional<Judged> Grader::untimed_speed_check(const SubmissionGrade& g, const CheckSpec& check,
                                                  const std::vector<Judged>& correct,
                                                  std::optional<Traced>& traced) {
  // A speed check counts only when the correctness checks it requires
  // passed (score.h): where one failed it is not timed at all, and says why.
  if (const std::string failed = failed_requirement(check, correct); !failed.empty()) {
    // Traced beside the correctness checks before the judge or a second
    // look (a sanitizer's report) failed one: that trace is dropped unread.
    if (traced) {
      std::error_code ec;
      fs::remove(traced->file, ec);
    }
    return judge_by_grader(check, Verdict::not_run, "not timed: " + failed);
  }
  // CPU mode times nothing: the grader does not run a speed check there,
  // whatever a record would say of it.
  if (g.cpu_mode) {
    Judged r = judge_by_grader(check, Verdict::not_run, "");
    r.edit_words([](CheckResult& w) { w.notes.push_back(kSpeedNotRunInCpuMode); });
    return r;
  }
  return std::nullopt;
}

Grader::Verdicts Grader::run_speed_checks(const Setup& s, Verdicts verdicts, Traces traces) {
  const SubmissionGrade& g = s.grade;
  const int slot = s.slot;
  // What follows a timing is CPU work that only adds words (words_after_timing).
  // It runs beside the next check's GPU timing, one check's at a time (both
  // may build in the slot's folder), and joins the check's result when done.
  struct Counting {
    std::size_t lab, check;
    std::future<WordsAfterTiming> words;
  };
  std::optional<Counting> counting;
  const auto settle = [&] {
    if (!counting) return;
    const WordsAfterTiming extra = counting->words.get();
    // Words through edit_words, which keeps the verdict and measurements as
    // they are; the counts through the one door for a chart's numbers.
    Judged& done = *verdicts[counting->lab][counting->check];
    done.edit_words([&](CheckResult& w) {
      if (extra.failures) w.failures = *extra.failures;
      if (extra.cause) w.cause = *extra.cause;
      if (extra.notes) w.notes = *extra.notes;
      w.notes.insert(w.notes.end(), extra.counted.notes.begin(), extra.counted.notes.end());
    });
    done.add_chart_measurements(extra.counted.measurements);
    counting.reset();
  };
  for (std::size_t i = 0; i < g.labs.size(); ++i) {
    const LabGrade& lab = g.labs[i];
    if (lab.status != LabStatus::graded) continue;
    const RunContext lc = s.lab_context(i, build(slot));
    std::vector<Judged> correct;  // what the speed checks' requirements read
    for (const auto& r : verdicts[i])
      if (r) correct.push_back(*r);
    for (std::size_t k = 0; k < lab.spec->checks.size(); ++k) {
      const CheckSpec& check = lab.spec->checks[k];
      if (verdicts[i][k]) continue;
      // Traced beside the correctness checks where those it requires passed
      // there (correctness.cpp); traced here otherwise.
      std::optional<Traced> traced;
      if (i < traces.size() && k < traces[i].size()) traced = std::move(traces[i][k]);
      if (std::optional<Judged> untimed = untimed_speed_check(g, check, correct, traced)) {
        verdicts[i][k] = std::move(untimed);
        continue;
      }
      std::string launch;
      Judged r =
          run_speed_check(speed_context(s, i, check), *lab.spec, check, slot, launch, std::move(traced));
      profile(fmt::format("slot {}: {} {} ran", slot, lab.spec->id, check.id));
      const CheckResult timed = r.result();
      verdicts[i][k] = std::move(r);
      settle();
      counting = Counting{i, k, std::async(std::launch::async, [this, lc, &lab, &check, slot, timed, launch] {
                            return words_after_timing(lc, *lab.spec, check, slot, timed, launch);
                          })};
    }
  }
  settle();
  return verdicts;
}

}  // namespace cudalab
