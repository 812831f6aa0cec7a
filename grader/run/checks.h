// grader/run/checks.h: runs one check of a lab test binary in its own process and
// reads its verdict from the machine-readable record.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/judged.h"
#include "core/records.h"
#include "core/time_limits.h"
#include "cudalab/manifest.h"
#include "cudalab/vocabulary.h"
#include "cudalab/vocabulary_fmt.h"

namespace cudalab {

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

// A check's run in the student's build (the test binary with the student's
// files linked in): whatever it reports is a Claim.
Claim run_student_check(const RunContext& ctx, const LabSpec& lab, const CheckSpec& check);
// A check's run in the reference build (the reference's evidence and time,
// the speed replay): a Testimony. ctx.binary must be the reference's.
Testimony run_reference_check(const RunContext& ctx, const LabSpec& lab, const CheckSpec& check);
// A memory check's replay (cudalab/replay.h): the reference build runs the
// check with the launches the student's run traced (ctx.replay_trace, the
// kernels ctx.replay_code) in place of its launcher, and writes the evidence
// a student's run writes (ctx.reference_evidence set, evidence_out empty).
Testimony run_memory_replay(const RunContext& ctx, const LabSpec& lab, const CheckSpec& check);

// Reads a check's result from a record file's JSON text. Host-only (tested).
bool parse_check_record(const std::string& json_text, const std::string& name, CheckResult& out,
                        std::string* skipped_reason = nullptr);

}  // namespace cudalab
