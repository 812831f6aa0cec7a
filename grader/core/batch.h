// grader/core/batch.h: a batch of graded submissions as records: each
// submission's document (or why it has none), and the gradebook row made of
// it as numbers. grades.csv (views/csv.h) writes the rows; index.html
// (views/report_html.h) draws and lists them; neither reads the other.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/grade_document.h"

namespace cudalab {

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

// One submission's row of the gradebook.
struct GradebookRow {
  std::string id;
  double score = 0, max_score = 0;  // weighted; 0 without a grade
  // Each lab's weighted points, in the course's order (the document's labs);
  // nullopt without a grade.
  std::vector<std::optional<double>> labs;
  // "graded"; else what was not: "unreadable", "<lab>:<status>" per lab not
  // graded; without a grade, the entry's problem ("not graded", "error").
  std::string status;
  const GradeDocument* grade = nullptr;  // the entry's, where it has one
};
GradebookRow gradebook_row(const GradeDocument& g);
// One per entry, in the batch's order: an entry without a grade has zeros,
// one empty cell per lab of the course, and its problem.
std::vector<GradebookRow> gradebook_rows(const BatchView& b);
// Whether any entry was graded from a platform's export (then the
// gradebook has the submission's columns).
bool batch_has_submissions(const BatchView& b);

}  // namespace cudalab
