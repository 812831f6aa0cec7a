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

#include "core/handin.h"
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
// `unrecorded`. /3 added each timed speed check's `speed` (the ratio, the
// pass line, the credit curve's points: CheckScore::speed), which the views
// read instead of the measurements: a reader of /1 and /2 documents makes it
// from the check's "ratio" measurement and thresholds, as the grader did.
inline constexpr std::string_view kGradeFormat = "cudalab-grade/3";
inline constexpr std::string_view kGradeFormatV2 = "cudalab-grade/2";
inline constexpr std::string_view kGradeFormatV1 = "cudalab-grade/1";

// The cause a grade keeps for a check (vocabulary.h): its result's, or for a
// check that failed without one, what became of it (a timeout, a crash, a
// speed check the grader timed (`timed`) slower than its line); none for a
// check that did not fail.
Cause cause_of(const CheckResult& r, bool timed);

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
