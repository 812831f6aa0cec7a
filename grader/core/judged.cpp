#include "core/judged.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <system_error>
#include <utility>

#include "core/files.h"
#include "cudalab/diagnosis.h"
#include "cudalab/evidence.h"

namespace fs = std::filesystem;

namespace cudalab {

void Judged::edit_words(const std::function<void(CheckResult&)>& edit) {
  CheckResult words = r_;
  edit(words);
  r_.failures = std::move(words.failures);
  r_.notes = std::move(words.notes);
  r_.output = std::move(words.output);
  // The cause names what the lead says: words, like the lead (a second look
  // that replaced the lead replaced its cause), never a verdict.
  r_.cause = words.cause;
}

void Judged::add_chart_measurements(const std::vector<Measurement>& extra) {
  for (const auto& m : extra)
    if (m.key.rfind("chart_", 0) == 0) r_.measurements.push_back(m);
}

void Judged::lower_to_fail(const std::string& why) {
  if (r_.verdict == Verdict::pass || r_.verdict == Verdict::not_run) r_.verdict = Verdict::fail;
  ratio_.reset();
  r_.failures.insert(r_.failures.begin(), why);
  r_.cause = Cause::sanitizer_report;
}

Judged judge_correctness(Claim claim, const fs::path& reference_evidence, const CheckSpec& check,
                         std::vector<std::string>* right_labels, const std::map<Cause, std::string>* words) {
  Judged j;
  j.r_ = std::move(claim.said);
  // Its measurements are shown as its own; no score reads them (timed_ratio stays empty).
  const fs::path student = std::move(claim.evidence);
  struct Remove {
    fs::path file;
    ~Remove() {
      std::error_code ec;
      if (!file.empty()) fs::remove(file, ec);
    }
  } remove{student};
  if (j.r_.verdict != Verdict::pass) return j;  // a failure, a crash, a timeout: the claim lowers, and stands
  // A pass from the test process stands only if its evidence agrees with
  // the reference solution's on the same inputs.
  std::string error;
  std::error_code ec;
  const std::uintmax_t reference_size = fs::file_size(reference_evidence, ec);
  evidence::Evidence mine, theirs;
  if (ec || !evidence::read(reference_evidence.string(), theirs, error)) {
    j.r_.verdict = Verdict::error;
    j.r_.failures.push_back(fmt::format(
        "the grader has no reference evidence for this check ({}): it cannot judge it; tell your instructor",
        ec ? ec.message() : error));
    return j;
  }
  // Bounded before it is read: the reference's evidence for the same check
  // also holds the expected values, so a student's is smaller.
  if (const std::string big = over_bound(student, reference_size + kEvidenceSlackBytes, "its evidence");
      !big.empty()) {
    j.r_.verdict = Verdict::fail;
    j.r_.failures = {big};
    return j;
  }
  if (student.empty() || !evidence::read(student.string(), mine, error)) {
    j.r_.verdict = Verdict::fail;
    j.r_.failures.push_back(
        fmt::format("the test process reported a pass but left no readable evidence of its outputs ({}): the "
                    "grader judges every correctness check from the outputs themselves",
                    student.empty() ? "none was asked for" : error));
    return j;
  }
  // One cause first, from all the outputs judged (as in the test process).
  diagnosis::begin();
  const evidence::Verdict v = evidence::judge(mine, theirs, check.judge);
  const diagnosis::Lead lead = v.ok ? diagnosis::Lead{} : diagnosis::diagnose(diagnosis::facts(), words);
  if (v.ok && right_labels) *right_labels = evidence::labels_right(mine, theirs);
  diagnosis::end();
  if (v.ok) return j;
  j.r_.verdict = Verdict::fail;
  j.r_.failures = v.failures;
  j.r_.cause = lead.cause;
  if (!lead.text.empty()) j.r_.failures.insert(j.r_.failures.begin(), "Diagnosis: " + lead.text + ".");
  j.r_.notes.push_back(
      "judged by the grader, outside the test process, against the reference solution's outputs for the same "
      "inputs");
  return j;
}

Judged judge_memory_replay(Judged claimed, Testimony replay, const fs::path& reference_evidence,
                           const std::vector<std::string>& student_right) {
  Judged j = std::move(claimed);
  struct Remove {
    fs::path file;
    ~Remove() {
      std::error_code ec;
      if (!file.empty()) fs::remove(file, ec);
    }
  } remove{replay.evidence};
  if (!j.passed()) return j;
  // Where the failures below were found, on a line of its own after them:
  // the first line stays the replay's own diagnosis.
  const std::string where =
      "found in the grader's replay of your launches: your kernels, run again on guarded buffers in a "
      "process "
      "that runs none of your host code. A launcher that puts back what its kernel overwrote is judged as "
      "its "
      "kernel left it";
  const CheckResult& said = replay.said;
  if (said.verdict != Verdict::pass) {
    // The replay's own words: a launch that failed there, a buffer written
    // past, or why it could not replay.
    j.r_.verdict = said.verdict == Verdict::timeout ? Verdict::timeout : Verdict::fail;
    // The cause its diagnosis names leads, as its words do (a graph launch
    // past the end of C: the boundary checks).
    j.r_.cause = said.cause;
    j.r_.failures.assign(said.failures.begin(),
                         said.failures.begin() + std::min<std::size_t>(4, said.failures.size()));
    if (j.r_.failures.empty()) j.r_.failures.push_back("the check did not pass");
    j.r_.failures.push_back(where +
                            "; one that works on memory the launcher allocated or filled itself (cudaMalloc, "
                            "cudaMemcpy) cannot be replayed.");
    return j;
  }
  std::string error;
  evidence::Evidence mine, theirs;
  if (replay.evidence.empty() || !evidence::read(replay.evidence.string(), mine, error) ||
      !evidence::read(reference_evidence.string(), theirs, error)) {
    j.r_.verdict = Verdict::error;
    j.r_.failures = {fmt::format(
        "the grader's replay of your launches left no evidence it could read ({}): tell your instructor",
        error.empty() ? "none" : error)};
    return j;
  }
  diagnosis::begin();
  diagnosis::pause(true);  // the words are the replay's, not a second diagnosis
  const evidence::Verdict memory = evidence::judge(mine, theirs, "memory");
  const evidence::Verdict values = evidence::judge(evidence::only_labels(mine, student_right),
                                                   evidence::only_labels(theirs, student_right), "values");
  diagnosis::pause(false);
  diagnosis::end();
  if (memory.ok && values.ok) {
    j.r_.notes.push_back(
        "memory judged by the grader: your launches replayed on guarded buffers in a process that runs none "
        "of "
        "your host code");
    return j;
  }
  j.r_.verdict = Verdict::fail;
  j.r_.failures = memory.failures;
  // Bytes past a buffer, or an input put back: the memory's own cause.
  j.r_.cause = !values.ok ? Cause::replay_differs : Cause::writes_outside;
  for (const auto& f : memory.failures)
    if (values.ok && f.find("changed the input") != std::string::npos) j.r_.cause = Cause::writes_input;
  if (!values.ok) {
    j.r_.failures.insert(
        j.r_.failures.begin(),
        "Diagnosis: your kernels computed something else when the grader replayed your launches alone than "
        "in "
        "your own run, where their outputs were right: a kernel that depends on what the launcher set "
        "besides "
        "its arguments (a __device__ variable, memory it filled) computes something else there, and so may a "
        "race that showed there and not in your run.");
    // The replay's evidence, without the cause the comparison would offer for
    // it ("the grid does not cover all of C"): the diagnosis above is the cause.
    if (!values.failures.empty()) {
      std::string evidence = values.failures.front();
      if (const auto cut = evidence.find("\nLikely cause: "); cut != std::string::npos) evidence.erase(cut);
      j.r_.failures.push_back("in the replay: " + evidence);
    }
  }
  j.r_.failures.push_back(where + ".");
  return j;
}

Judged judge_speed_untimed(Claim traced) {
  Judged j;
  j.r_ = std::move(traced.said);
  if (!traced.evidence.empty()) {
    std::error_code ec;
    fs::remove(traced.evidence, ec);
  }
  // Whatever it measured is its own word: nothing of it is shown or scored.
  j.r_.measurements.clear();
  if (j.r_.verdict == Verdict::pass || j.r_.verdict == Verdict::not_run || j.r_.verdict == Verdict::skipped)
    j.r_.verdict = Verdict::fail;
  j.r_.failures.insert(j.r_.failures.begin(),
                       "not timed: the run that records your launches did not pass, and a speed check counts "
                       "only for launches that the grader replays and times itself");
  return j;
}

Judged judge_speed_timed(Testimony replay) {
  Judged j;
  j.r_ = std::move(replay.said);
  if (j.r_.verdict == Verdict::pass || j.r_.verdict == Verdict::fail) j.ratio_ = j.r_.recorded_ratio();
  return j;
}

Judged judge_by_grader(const CheckSpec& check, Verdict verdict, const std::string& why) {
  Judged j;
  j.r_.id = check.id, j.r_.name = check.name, j.r_.kind = check.kind;
  j.r_.verdict =
      verdict == Verdict::pass ? Verdict::error : verdict;  // the grader's word never passes a check unseen
  if (!why.empty()) j.r_.failures.push_back(why);
  return j;
}

Judged judge_failed_testimony(Testimony t) {
  Judged j;
  j.r_ = std::move(t.said);
  if (j.r_.verdict == Verdict::pass) j.r_.verdict = Verdict::error;
  return j;
}

}  // namespace cudalab
