// grader/authoring/expect.h: expected verdicts for a known student file (the
// framework's own tests: the solution passes, the skeleton and the typical
// mistakes fail with the right message).
//
//   description = "tiled matmul without boundary checks"
//   base = "solutions"          # where files the variant lacks come from ("labs": the skeleton)
//   [expect]
//   square = "pass"
//   ragged = { verdict = "fail", cause = "boundary_checks", leads = "the boundary checks" }
//   speed = { verdict = "fail", explains = "uncoalesced matmul_naive.cu:30" }
//   (cause: the cause id its diagnosis names, cudalab/vocabulary.h; leads: what
//   the check's lead says, leading_line below; explains: below)
//   [expect_cpu]                # CPU mode only, where it differs (speed: not_run)
//   square = "fail"
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cudalab/vocabulary.h"

namespace cudalab {

struct Expectation {
  std::string check_id;
  Verdict verdict = Verdict::pass;  // pass, fail, timeout, crash, not_run or error
  std::string says;                 // a phrase the failures or notes must contain (case-insensitive)
  std::string leads;                // a phrase the check's lead (leading_line) must contain
  std::optional<Cause> cause;       // the cause its diagnosis must name (a grade's cause_of)
  // A speed check with an `explain` check: the cause its diagnosis names from
  // CPU mode's counts (explain.h SlowCause: "uncoalesced", "traffic", ...),
  // followed for conflicts and uncoalesced by the file:line it names
  // ("uncoalesced coalescing.cu:31"). Checked in CPU mode, where no speed is
  // timed, with the variant's and the solution's access builds.
  std::string explains;
};

// What a failing check's messages must not do, whatever their cause: a
// "Diagnosis:" line anywhere but first, "(below)" on the last line, a
// sanitizer's raw lines ("=========", "+0x1c0", "hazards displayed"). The
// first such problem, or "". Host-only.
std::string message_problem(const std::vector<std::string>& failures);

// The problems with a failing check's messages as a student reads them: a
// lead (leading_line) that does not say `leads`, more than one cause
// ("Diagnosis:" and "Likely cause:" lines), or a message_problem. Empty if
// none. Host-only.
std::string leading_cause_problem(const std::vector<std::string>& failures, const std::string& leads);

struct ExpectFile {
  std::string description;
  std::string base = "solutions";
  std::vector<Expectation> expectations;   // in no particular order
  std::vector<Expectation> cpu_overrides;  // [expect_cpu]

  const Expectation* find(const std::string& check_id) const;
  // The expectations in CPU mode: [expect_cpu] over [expect], and speed
  // checks "not_run" (CPU mode never times).
  ExpectFile for_cpu_mode(const std::vector<std::string>& speed_checks) const;
};

ExpectFile parse_expect(const std::string& text, const std::string& source);
ExpectFile load_expect(const std::filesystem::path& path);

// Case-insensitive substring test.
bool contains_phrase(const std::string& haystack, const std::string& phrase);

}  // namespace cudalab
