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

#include "core/grade_document.h"
#include "pipeline/grader.h"

namespace cudalab {

nlohmann::json gradescope_json(const GradeDocument& g);
nlohmann::json prairielearn_json(const GradeDocument& g);
std::string junit_xml(const GradeDocument& g);
// With `submissions` (a grade from a platform's export), the columns
// submitters, submitted_at, days_late, late_fraction, score_before_late come
// last, so that the others keep their places.
std::string csv_header(const std::vector<std::string>& lab_ids, bool submissions = false);
std::string csv_header(const GradeDocument& g);  // its labs' columns
std::string csv_row(const GradeDocument& g);     // with the submission's columns where it has them
std::string csv_row(const GradeDocument& g, bool submissions);
// A submitter as the views name them: "Name (sid, login, email)".
std::string submitter_line(const Submitter& s);
// The lines naming who handed a grade in, when, and the late penalty; "" for
// a grade not made from a platform's export.
std::string submission_header(const GradeDocument& g);
// The one writer of a cell of every CSV the grader writes (grade.csv,
// grades.csv, class.csv, the platforms' gradebooks): quoted where it holds a
// comma, a quote or a line break (RFC 4180), and never something a
// spreadsheet runs. What is written unprefixed is decided by `kind`:
//   text    anything from outside (a student's name, email, login or SID from
//           a platform's export, a platform's own cells, submission ids, a
//           check's diagnosis) and the grader's own words. A cell that starts
//           with =, +, -, @, a tab or a carriage return would be run as a
//           formula (OWASP's CSV-injection rule): it is written as ' and
//           the cell, quoted, and reads back (parse_csv, split_csv_line)
//           with the ' in front.
//   number  a number the grader formatted itself (a score, points, a count,
//           a share, a late fraction): written as it is, so that -1.5 stays
//           the number -1.5. Only a plain decimal number is taken as one
//           (-?digits[.digits][e[+-]digits]); anything else given as a number
//           is written as text.
enum class CsvKind { text, number };
std::string csv_field(const std::string& s, CsvKind kind = CsvKind::text);
// A cell for csv_line: text unless made by csv_number.
struct CsvCell {
  std::string value;
  CsvKind kind = CsvKind::text;
  CsvCell(std::string v, CsvKind k = CsvKind::text)
      : value(std::move(v)), kind(k) {}  // NOLINT: text by default
  CsvCell(const char* v) : value(v) {}   // NOLINT
};
inline CsvCell csv_number(std::string formatted) {
  return CsvCell(std::move(formatted), CsvKind::number);
}
// One CSV line: each cell through csv_field, joined by commas, and a newline.
std::string csv_line(const std::vector<CsvCell>& cells);

// A batch: each submission's document, or why it has none. The batch's
// gradebook (grades.csv) and page (index.html) are functions of this alone.
struct BatchEntry {
  std::string id;
  std::optional<GradeDocument> grade;
  std::string problem;  // without a grade: "not graded" or "error"
};
struct BatchView {
  std::vector<std::string> lab_ids;  // the course's labs, in its order
  std::vector<double> lab_max;       // each lab's weighted maximum
  std::vector<BatchEntry> entries;
};
// One gradebook row per entry (csv_row of its grade, else zeros and the problem).
std::vector<std::string> batch_rows(const BatchView& b);
std::string batch_csv(const BatchView& b);

// The text a student reads for one check: verdict, measurements, failures, notes.
std::string check_output(const GradedCheck& check);
// The text of the whole submission in short, for a platform's page beside
// its tests: the total and GPU, each lab's points, ignored files, notes.
std::string submission_output(const GradeDocument& g);
// report.txt, for a terminal: the total and GPU, then lab by lab every check
// as the console shows it (report.h's graded_lab_text: verdict, points, name,
// and for a check that did not pass its lead first, then its other messages),
// the ignored files and the notes; plain text, wrapped at 100 columns.
std::string report_text(const GradeDocument& g);

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
