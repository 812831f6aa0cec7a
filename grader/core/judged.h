// grader/core/judged.h: the trust boundary, in types.
//
// A check runs in a process. When that process runs the student's code (the
// lab's test binary with the student's objects linked in, their static
// constructors included), everything it writes is the student's to forge:
// its record (verdict, messages, measurements), its evidence, its output.
// That is a Claim. A Claim may lower a grade (a failure, a crash, a timeout
// stand as they are), never carry one.
//
// A Testimony comes from a process of the grader's own: the reference
// solution's build, which runs none of the student's host code (the
// reference's own runs, and the speed replay that times the student's
// compiled kernels in it, cudalab/replay.h).
//
// Points come only from a Judged: a verdict the grader reached itself, from
// what it saw of the process (exit, signal, time), from the outputs it
// compared outside the student's process (judge_correctness), or from its
// own timing (judge_speed_timed). Judged has no public constructor and no
// way to raise its verdict; the functions below make one, and score_check
// (score.h) takes nothing else.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/records.h"
#include "cudalab/manifest.h"

namespace cudalab {

// What a process that ran the student's code reported: untrusted. Its
// evidence file (its outputs, cudalab/evidence.h), where it wrote one, is
// the judge's to read and remove.
struct Claim {
  CheckResult said;
  std::filesystem::path evidence;
};

// What a process of the grader's own (the reference build) reported.
struct Testimony {
  CheckResult said;
  // A memory check's replay: the evidence the replayed kernels left (their
  // outputs, guard zones and inputs), the judge's to read and remove.
  std::filesystem::path evidence;
};

struct JudgedForTests;  // tests/unit only: fabricates verdicts for the exports' tests

class Judged {
 public:
  // What the reports show: the verdict the grader reached, the messages
  // (the student's process's own words where it failed), the measurements
  // (for a speed check, only those the grader timed itself).
  const CheckResult& result() const { return r_; }
  Verdict verdict() const { return r_.verdict; }
  bool passed() const { return r_.verdict == Verdict::pass; }
  // The student's kernels' speed relative to the reference's, as the
  // grader's replay timed them; empty for every other check.
  std::optional<double> timed_ratio() const { return ratio_; }

  // Rewrites the words (a second look's diagnosis, the grading folder's
  // paths): whatever `edit` does to the verdict, id, kind or measurements is
  // undone; only failures, notes and output change.
  void edit_words(const std::function<void(CheckResult&)>& edit);
  // Measurements a chart draws and nothing scores (keys "chart_..."; the
  // roofline's traffic counts, taken after the verdict): appended; any other
  // key is dropped, so no count can pose as the grader's timing.
  void add_chart_measurements(const std::vector<Measurement>& extra);
  // A report that a passing check is wrong after all (a sanitizer's): pass
  // becomes fail, with `why` first. Never raises anything.
  void lower_to_fail(const std::string& why);

  // Correctness: a Claim of "pass" stands only if the student's evidence
  // (its outputs) agrees with the reference's on the same inputs; every
  // other Claim stands as the failure it is.
  // right_labels: where given, the launches whose outputs matched the
  // reference's (a memory check's replay must match there too).
  friend Judged judge_correctness(Claim claim, const std::filesystem::path& reference_evidence,
                                  const CheckSpec& check, std::vector<std::string>* right_labels,
                                  const std::map<Cause, std::string>* words);
  // A memory check the claim passed, judged again on its replay, where no
  // host code of the student's runs: its guard zones intact, its inputs
  // unchanged, its outputs written, and right wherever the student's run's
  // were (student_right). Only lowers.
  friend Judged judge_memory_replay(Judged claimed, Testimony replay,
                                    const std::filesystem::path& reference_evidence,
                                    const std::vector<std::string>& student_right);
  // A speed check whose traced run (the student's process recording its
  // launches) did not pass: not timed, no points, its measurements dropped.
  friend Judged judge_speed_untimed(Claim traced);
  // A speed check timed by the grader's replay: its verdict and ratio.
  friend Judged judge_speed_timed(Testimony replay);
  // The grader's own word, no process involved: not_run (a requirement
  // failed, no GPU, CPU mode), fail or error (nothing to judge it by).
  friend Judged judge_by_grader(const CheckSpec& check, Verdict verdict, const std::string& why);
  // A process of the grader's own that misbehaved (the replay crashed, the
  // grader could not time it): never a pass.
  friend Judged judge_failed_testimony(Testimony t);
  friend struct JudgedForTests;

 private:
  Judged() = default;
  CheckResult r_;
  std::optional<double> ratio_;
};

// `words`: the lab's words for each cause's fix (LabSpec::diagnosis_words).
Judged judge_correctness(Claim claim, const std::filesystem::path& reference_evidence, const CheckSpec& check,
                         std::vector<std::string>* right_labels = nullptr,
                         const std::map<Cause, std::string>* words = nullptr);
Judged judge_memory_replay(Judged claimed, Testimony replay, const std::filesystem::path& reference_evidence,
                           const std::vector<std::string>& student_right);
Judged judge_speed_untimed(Claim traced);
Judged judge_speed_timed(Testimony replay);
Judged judge_by_grader(const CheckSpec& check, Verdict verdict, const std::string& why);
Judged judge_failed_testimony(Testimony t);

// What the grader says of speed checks in CPU mode: it does not run them,
// whatever a record would say.
inline constexpr const char* kSpeedNotRunInCpuMode =
    "speed is not measured in CPU mode: the grader times speed checks on a GPU only";

}  // namespace cudalab
