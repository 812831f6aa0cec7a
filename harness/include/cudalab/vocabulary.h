// cudalab/vocabulary.h: the words every part of cudalab shares, as types.
//
// A check's verdict, a check's kind and a lab's status are enums here, each
// with the one spelling that files (lab.toml, the record a test binary
// writes, grade.json) and people see. Code compares enums; only the functions
// below turn them into text and back, so a misspelt "not-run" is an error at
// the border, not a silent mismatch deep inside the grader.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace cudalab {

// What became of one check.
enum class Verdict {
  pass,
  fail,
  not_run,  // did not run in this mode (speed checks in CPU mode)
  skipped,  // the test binary found no GPU
  timeout,  // past its time limit
  crash,    // the process died (a signal, an exit without a verdict)
  error,    // no verdict: the test binary or its record misbehaved
  running,  // only inside a record, while the check runs: never a grade's
};

// A check of a lab: correctness (outputs judged against the reference) or
// speed (a ratio against a baseline, counted only where correctness passed).
enum class CheckKind { correctness, speed };

// What became of one lab of a submission.
enum class LabStatus {
  graded,
  missing,       // a student file is missing
  build_failed,  // it did not compile or link
  rejected,      // a forbidden call, symbol or include
  not_run,       // nothing could run its checks (no GPU and no CPU mode)
};

std::string_view spelling(Verdict v);
std::string_view spelling(CheckKind k);
std::string_view spelling(LabStatus s);

// The enum a spelling names; nullopt for anything else.
std::optional<Verdict> parse_verdict(std::string_view s);
std::optional<CheckKind> parse_check_kind(std::string_view s);
std::optional<LabStatus> parse_lab_status(std::string_view s);

// Every spelling of an enum, comma-separated in declaration order: for
// messages that list what is allowed.
std::string spellings_of_verdicts();
std::string spellings_of_check_kinds();
std::string spellings_of_lab_statuses();

// The record a lab's test binary writes for the grader (cudalab/record.h):
// its `format` field. The grader refuses a record of any other format.
inline constexpr std::string_view kRecordFormat = "cudalab-record/1";

// A note of a run that counts accesses (cudalab::traffic_of): each launch of
// the harness's calls (cudalab::Run), as "counted launch
// transpose(1024x1024): transpose_kernel<<<grid (32, 32, 1), block (32, 8,
// 1)>>>". A slow kernel's diagnosis (grader/explain.h) holds the student's
// launches against the reference's, call for call.
inline constexpr const char* kCountedLaunch = "counted launch ";

}  // namespace cudalab
