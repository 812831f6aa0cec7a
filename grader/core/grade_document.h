// grader/core/grade_document.h: one graded submission as one document.
//
// The grader builds a GradeDocument once per graded submission, writes it as
// grade.json (schema: grader/grade.schema.json, versioned by `format`), and
// every view is a function of it alone: results.json (Gradescope),
// prairielearn.json, junit.xml, grade.csv, report.txt, report.html, and a
// batch's grades.csv and index.html (exports.h). Nothing reads a view back:
// batch resume, `cudalab export` (the views written again without grading),
// PrairieLearn's entry point and the gallery runner read grade.json.
//
// The document is plain data: the verdicts the grader reached (judged.h)
// and the points it gave, copied out; nothing in it can change a grade.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/records.h"
#include "core/score.h"
#include "cudalab/manifest.h"
#include "cudalab/vocabulary.h"

namespace cudalab {

struct SubmissionGrade;

// grade.json's `format`. A reader refuses any other: a new field that old
// readers may ignore keeps the number; a changed or removed one bumps it.
// /2 added each check's `cause` (required): a reader of /1 documents
// (`cudalab export` of an older batch) gives their failing checks the cause
// `unrecorded`.
inline constexpr std::string_view kGradeFormat = "cudalab-grade/2";
inline constexpr std::string_view kGradeFormatV1 = "cudalab-grade/1";

// The cause a grade keeps for a check (vocabulary.h): its result's, or for a
// check that failed without one, what became of it (a timeout, a crash, a
// speed check slower than its line); none for a check that did not fail.
Cause cause_of(const CheckResult& r);

struct GradedCheck {
  // What the views need of the check's lab.toml entry: id, name, kind,
  // visibility, points, thresholds (numbers), credit, requires.
  CheckSpec spec;
  CheckResult result;  // the grader's verdict, messages and measurements
  CheckScore score;    // unweighted points
};

struct GradedLab {
  std::string id, title;
  double weight = 1;
  LabStatus status = LabStatus::graded;
  std::string message;                // why it was not graded, for the student
  double points = 0, max_points = 0;  // unweighted
  std::vector<GradedCheck> checks;    // in the lab's order; empty unless graded
};

// Who handed a submission in, as the platform's export names them: Gradescope
// gives name, sid and email; PrairieLearn the uid (login), uin (sid) and
// name; GitHub Classroom the login (github_username) and the roster
// identifier (sid). A group submission has several.
struct Submitter {
  std::string name, sid, email, login;
};

// The platform's record of a submission graded from its export
// (`cudalab grade --batch EXPORT --from PLATFORM`, intake.h).
struct SubmissionRecord {
  std::string platform;  // "gradescope", "prairielearn" or "classroom"
  std::string id;        // the platform's own submission id ("" where it has none)
  std::string time;      // when it was submitted, ISO 8601 with the platform's offset; "" not given
  std::vector<Submitter> submitters;
};

// An assignment's late rule applied to a submission's time (late.h).
struct LatePenalty {
  std::string due;          // the assignment's due date, as course.toml gives it
  double per_day = 0;       // of the points, per day or part of one
  int max_days = 0;         // later than this: no points
  int days = 0;             // days late; 0 on time
  double fraction = 0;      // of the points taken (1 past max_days)
  double score_before = 0;  // the weighted points before the penalty
  std::string reason;       // for the student; "" on time
};

struct GradeDocument {
  std::string id;          // the submission's id (its folder or archive name)
  std::string assignment;  // the assignment graded (course.toml [[assignment]]); "" the course's labs
  std::string error;       // the submission could not be read at all
  std::vector<std::string> ignored;
  std::vector<std::string> notes;
  double score = 0, max_score = 0;  // weighted totals
  double seconds = 0;
  bool gpu = false, cpu_mode = false, provisional = false;
  std::string gpu_line;
  std::string grader_version;  // the cudalab that graded it
  std::vector<GradedLab> labs;
  // Graded from a platform's export: who handed it in and when, and the
  // late rule applied (score is then the points after the penalty).
  std::optional<SubmissionRecord> submission;
  std::optional<LatePenalty> late;

  // How it was graded: "gpu", "cpu" (correctness only) or "none".
  std::string mode() const { return gpu ? "gpu" : cpu_mode ? "cpu" : "none"; }
};

// The document of a graded submission (its labs' specs copied in).
GradeDocument grade_document(const SubmissionGrade& g, const std::string& grader_version);

nlohmann::json to_json(const GradeDocument& d);
// nullopt with `error` set (naming the field) for anything but a document of
// kGradeFormat.
std::optional<GradeDocument> grade_document_from_json(const nlohmann::json& j, std::string& error);
std::optional<GradeDocument> load_grade_document(const std::filesystem::path& file, std::string& error);
void save_grade_document(const GradeDocument& d, const std::filesystem::path& file);

}  // namespace cudalab
