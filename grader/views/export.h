// grader/views/export.h: a graded submission in the formats graders read.
//   Gradescope   results.json: score, execution_time, output, tests[] with
//                name, score, max_score, status, output, visibility
//   PrairieLearn results.json: gradable, score (0..1), message, output,
//                tests[] with name, points, max_points, message, output
//   JUnit XML    testsuites / testsuite (one per lab) / testcase (one per check)
//   CSV          one gradebook row per submission: id, total, max, one column per lab
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/batch.h"
#include "core/grade_document.h"
#include "core/submission_grade.h"

namespace cudalab {

nlohmann::json gradescope_json(const GradeDocument& g);
nlohmann::json prairielearn_json(const GradeDocument& g);
std::string junit_xml(const GradeDocument& g);
// Writes the views of one grade into `dir` (results.json, prairielearn.json,
// junit.xml, grade.csv, report.txt, report.html), each from `g` alone.
void write_views(const GradeDocument& g, const std::filesystem::path& dir);
// grade.json, written once, then its views.
GradeDocument write_grade(const SubmissionGrade& g, const std::filesystem::path& dir);
// grade.json of a document already made (e.g. with a late rule applied), then its views.
void write_grade_document(const GradeDocument& doc, const std::filesystem::path& dir);
// A batch's gradebook, page and class view: dir/grades.csv, dir/index.html
// and dir/class.csv (class_view.h).
void write_batch_views(const BatchView& b, const std::filesystem::path& dir);

// `cudalab export DIR...`: the views written again from grade.json, without
// grading. DIR is one submission's results (DIR/grade.json) or a batch's
// (DIR/<submission>/grade.json: then its grades.csv, index.html and class.csv too).
// Returns the process's exit code; problems go to stderr.
int export_views(const std::vector<std::filesystem::path>& dirs);

}  // namespace cudalab
