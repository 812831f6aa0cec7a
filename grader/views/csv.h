// grader/views/csv.h: every CSV the grader writes, one writer of a cell:
// grade.csv and a batch's grades.csv (the gradebook rows, core/batch.h), and
// the cells class.csv and the platforms' gradebooks are made of.
#pragma once

#include <string>
#include <vector>

#include "core/batch.h"
#include "core/grade_document.h"

namespace cudalab {

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

// With `submissions` (a grade from a platform's export), the columns
// submitters, submitted_at, days_late, late_fraction, score_before_late come
// last, so that the others keep their places.
std::string csv_header(const std::vector<std::string>& lab_ids, bool submissions = false);
std::string csv_header(const GradeDocument& g);  // its labs' columns
std::string csv_row(const GradeDocument& g);     // with the submission's columns where it has them
std::string csv_row(const GradeDocument& g, bool submissions);
// One gradebook row per entry (csv_row of its grade, else zeros and the problem).
std::vector<std::string> batch_rows(const BatchView& b);
std::string batch_csv(const BatchView& b);

}  // namespace cudalab
