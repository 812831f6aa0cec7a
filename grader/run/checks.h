// grader/run/checks.h: runs one check of a lab test binary in its own process and
// reads its verdict from the machine-readable record.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/time_limits.h"
#include "cudalab/manifest.h"
#include "cudalab/vocabulary.h"
#include "cudalab/vocabulary_fmt.h"

namespace cudalab {

struct Measurement {
  std::string key;
  double value = 0;
  std::string unit;
};

struct CheckResult {
  std::string id, name;
  CheckKind kind = CheckKind::correctness;
  Verdict verdict = Verdict::error;   // cudalab/vocabulary.h
  std::vector<std::string> failures;  // what went wrong, for the student
  // The cause its "Diagnosis:" line names (cudalab/vocabulary.h): set with
  // that line by whoever writes it (the harness's diagnosis, the judge, a
  // second look); without one, a timeout or crash says what became of the
  // check; none where nothing names a cause.
  Cause cause = Cause::none;
  std::vector<std::string> notes;
  std::vector<Measurement> measurements;
  std::string output;  // the process's output, when it tells something
  double seconds = 0;

  bool passed() const { return verdict == Verdict::pass; }
  const Measurement* find(const std::string& key) const;
};

struct RunContext {
  std::filesystem::path binary;        // the lab's test binary
  std::filesystem::path lab_toml;      // the manifest it reads thresholds from
  std::string seed;                    // empty: the binary's default
  std::filesystem::path work_dir;      // for the record files
  bool clean_env = true;               // minimal environment
  std::vector<std::string> extra_env;  // KEY=VALUE added to it
  // compute-sanitizer tool to run the check under ("" none): memcheck,
  // racecheck, synccheck or initcheck. Speed checks are then not run.
  std::string sanitizer;
  // Its time limit (time_limits.h check_run_limit): whose run it is, and
  // course.toml's check_timeout_s (<= 0: none).
  RunRole role = RunRole::student;
  double course_cap_s = 0;
  // The submission's allowance for words (time_limits.h): a second look's or
  // hang look's run is limited to what is left of it and counted against it.
  // Null: no allowance (./cudalab test).
  std::shared_ptr<WordsAllowance> words;
  // Correctness checks: where the test process's evidence goes (kept there:
  // the reference's run), or the reference's evidence to judge it against
  // (the student's run: the evidence is then a scratch file). Both empty: no
  // evidence (./cudalab test, sanitizer runs).
  std::filesystem::path evidence_out;
  std::filesystem::path reference_evidence;
  // > 0: the reference solution's wall time on this check (same seed, mode
  // and machine): a student's run then gets check_limit(reference_s, ...)
  // (time_limits.h), and a timeout says both. The grader's student runs only
  // (./cudalab test and sanitizer runs keep the lab's limit).
  double reference_s = 0;
  // Speed checks (cudalab/replay.h). The student's run: where its launch
  // trace goes (the check then ends untimed). The grader's replay (the
  // reference build): the trace to time, and the student's compiled kernels.
  std::filesystem::path trace_out;
  std::filesystem::path replay_trace, replay_code;
  // CPU mode's access build (simt): where its access report goes (.json for
  // JSON, else text). The test process writes it in its scratch folder, the
  // only place it may write, and run_check copies it here.
  std::filesystem::path access_out;
  // The process's own output in the result whatever the verdict (`cudalab
  // test --verbose`); otherwise only where it tells why a check ended (a
  // crash, a timeout, an error), as a grade carries it.
  bool keep_output = false;
};

// The sanitizer's report for the student, folded to what they act on: for
// racecheck every pair of lines that race (the access kinds, file:line, the
// hazards) and the kernel once; otherwise the first report, the kernel it
// names and its summary line; no offsets (+0x1c0), parameter lists or
// folders. "" if it reported nothing. Host-only (tested).
std::string summarize_sanitizer(const std::string& tool, const std::string& output);
// A sanitizer's output the grader could not read as a report: its lines
// that are not host frames, folded as above, once each, the last
// `max_lines`. Host-only (tested).
std::string fold_sanitizer_output(const std::string& output, std::size_t max_lines);

// What a folded racecheck report says where it found a race.
inline constexpr const char* kRaceReported = "reported a race";

// A correctness check that ran out of time: the causes it may have, a
// failure line of its own under the limit's, until a second look names one.
inline constexpr const char* kHangCauses =
    "An endless loop? (a loop whose index never advances, or a __syncthreads() that not every thread of the "
    "block reaches)";

// The most the grader reads of what a check's process wrote, each checked
// by its size before a byte of it is read (the sandbox lets a check write up
// to 1 GiB, and a submission's checks run side by side): over it, the check
// fails and says which bound. A record holds one check's verdict, messages
// and measurements (a few KiB); a launch trace, the launches of one speed
// check's run; an access report, per-line counts of a lab's kernels. A
// student's evidence may be no larger than the reference's for the same
// check (which also holds the expected values) plus kEvidenceSlackBytes.
inline constexpr std::uintmax_t kMaxRecordBytes = 1u << 20;
inline constexpr std::uintmax_t kMaxTraceBytes = 4u << 20;
inline constexpr std::uintmax_t kMaxAccessReportBytes = 4u << 20;
inline constexpr std::uintmax_t kEvidenceSlackBytes = 1u << 20;

// "12.0 MiB", "640 KiB", "37 bytes". Host-only (tested).
std::string describe_bytes(std::uintmax_t bytes);

// "" when `file` is at most `limit` bytes; else the failure for the student:
// "the check wrote 64.0 MiB to its record, more than the 1.0 MiB a record may
// hold: the grader did not read it".
std::string over_bound(const std::filesystem::path& file, std::uintmax_t limit, const std::string& what);

// A check's process, run confined: its result as the record and the process
// say, and the file where it left its evidence (a student's run judged
// against the reference's: RunContext::reference_evidence set), for the
// judge to read and remove (judged.h). Nothing here judges a pass.
struct CheckRun {
  CheckResult result;
  std::filesystem::path evidence;
};
CheckRun run_check_process(const RunContext& ctx, const LabSpec& lab, const CheckSpec& check);

// run_check_process without the evidence: `./cudalab test`, calibration, and
// the reference's runs (judged.h wraps those as a Testimony).
CheckResult run_check(const RunContext& ctx, const LabSpec& lab, const CheckSpec& check);

// Where the reference's run of a check writes its launches, one line a
// launcher call (cudalab/testing.h reference_launch), beside its evidence; a
// student's run of the same check reads them for its diagnosis. A grader's
// build of a submission holds no reference to launch (-Dreference_code=absent).
std::filesystem::path reference_launches_file(const std::filesystem::path& reference_evidence);

// "<lab>-<check>-<pid>-<n>": a name for one run's files (record, evidence,
// trace, staged binary) that no other run of this process shares, even of the
// same check: a batch over several GPUs runs two submissions' checks at once.
std::string run_stem(const std::string& lab, const std::string& check);
// `ctx` run by `binary` with nothing of the grader's judging, timing or
// sanitizing: no evidence, no reference time, no trace or replay (a second
// look's CPU-mode run, an access or traffic count).
RunContext bare_run(const RunContext& ctx, const std::filesystem::path& binary);

// Reads a check's result from a record file's JSON text. Host-only (tested).
bool parse_check_record(const std::string& json_text, const std::string& name, CheckResult& out,
                        std::string* skipped_reason = nullptr);

}  // namespace cudalab
