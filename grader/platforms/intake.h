// grader/platforms/intake.h: a platform's export of an assignment's submissions read
// into the hand-ins a batch grades, each with who handed it in and when, as
// the platform recorded it (`cudalab grade --batch EXPORT --from PLATFORM`).
//
//   gradescope    the "Export Submissions" zip, unpacked: submission_metadata.yml
//                 (submission_<id>: :submitters: [:name:, :sid:, :email:],
//                 :created_at:) and a folder submission_<id>/ per submission
//   prairielearn  the assessment's "final files" zip, unpacked: flat files named
//                 <uid or group>_<instance>_<qid>_<variant>_<n>_<submission id>_<file>,
//                 and beside it, if there, the final (or all) submissions CSV for
//                 names and dates
//   classroom     `gh classroom clone student-repos`: <slug>-submissions/ with a
//                 repository per student or group, and beside or in it, if there,
//                 the assignment's grades CSV (github_username, roster_identifier,
//                 student_repository_name, submission_timestamp, ...)
//
// Where each format comes from: docs/course.md, "After the deadline".
#pragma once

#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/grade_document.h"

namespace cudalab {

enum class Platform { gradescope, prairielearn, classroom };
std::optional<Platform> parse_platform(const std::string& name);
const char* platform_name(Platform p);

// The export cannot be read at all (its metadata is malformed, or missing
// where the platform always writes it): the message names the file and entry.
class IntakeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One PrairieLearn question's final submission in a hand-in.
struct QuestionSubmission {
  std::string qid;
  std::string instance;            // the assessment instance number
  std::string submission_id;       // PrairieLearn's
  std::vector<std::string> files;  // the student's file names, as submitted
};

// One submission to grade.
struct HandIn {
  std::string key;                            // unique and safe as a folder name: results/<key>/
  std::filesystem::path files;                // the folder of the student's files; empty: nothing to grade
  SubmissionRecord record;                    // platform, its submission id, time, submitters
  std::vector<QuestionSubmission> questions;  // PrairieLearn: the questions in it
  std::string group;  // a group's name where the platform keys by it (PrairieLearn, Classroom)
  // Classroom: the grades CSV's row of each submitter (in submitters' order),
  // copied into the gradebook with cudalab's points.
  std::vector<std::vector<std::pair<std::string, std::string>>> platform_rows;
  std::string problem;  // why it cannot be graded ("" it can): a row of 0 says so
};

struct Intake {
  Platform platform = Platform::gradescope;
  std::vector<HandIn> handins;        // sorted by key
  std::vector<std::string> warnings;  // entries passed over, each naming the file and entry
};

// Reads the export at `dir`. PrairieLearn's flat files are staged, under their
// original names, in a folder per hand-in under `staging` (created). Throws
// IntakeError where the export as a whole cannot be read.
Intake read_export(Platform platform, const std::filesystem::path& dir, const std::filesystem::path& staging);

// The pieces, for the tests.
// Gradescope's submission_metadata.yml: one hand-in per submission_<id> key
// (files: dir/submission_<id>, problem set where that folder is missing).
std::vector<HandIn> parse_gradescope_metadata(const std::string& yaml, const std::string& source,
                                              const std::filesystem::path& dir);
// A PrairieLearn download's file name split into its parts: nullopt where it
// does not have them all.
struct PrairieLearnFile {
  std::string owner;  // the uid, or the group's name
  std::string instance, qid, variant, submission_number, submission_id, name;
};
std::optional<PrairieLearnFile> parse_prairielearn_name(const std::string& file);

// A name safe as a file or folder name: letters, digits, '-', '_', '.', '@'
// kept, anything else '_', never hidden, never empty.
std::string safe_name(const std::string& s);

// The cells of a CSV text, row by row (RFC 4180: quoted cells may hold commas,
// quotes and line breaks).
std::vector<std::vector<std::string>> parse_csv(const std::string& text);

}  // namespace cudalab
