#include "views/csv.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

#include "views/text.h"

namespace cudalab {

namespace {

// -?digits[.digits][e[+-]digits]: what fmt writes for a finite double.
bool plain_number(const std::string& s) {
  std::size_t i = s.size() > 0 && s[0] == '-' ? 1 : 0;
  const auto digits = [&] {
    const std::size_t from = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i > from;
  };
  if (!digits()) return false;
  if (i < s.size() && s[i] == '.' && (++i, !digits())) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == s.size();
}

}  // namespace

std::string csv_field(const std::string& s, CsvKind kind) {
  // OWASP's CSV-injection rule: a leading ' makes the cell text to a
  // spreadsheet, and the quotes keep a separator inside it from starting a
  // cell of its own.
  const bool formula = !s.empty() && std::string_view("=+-@\t\r").find(s[0]) != std::string_view::npos &&
                       !(kind == CsvKind::number && plain_number(s));
  if (!formula && s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = formula ? "\"'" : "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string csv_line(const std::vector<CsvCell>& cells) {
  std::string line;
  for (std::size_t i = 0; i < cells.size(); ++i)
    line += (i ? "," : "") + csv_field(cells[i].value, cells[i].kind);
  return line + "\n";
}

// The columns a grade from a platform's export adds, after the others so
// that theirs keep their places.
constexpr const char* kSubmissionColumns[] = {"submitters", "submitted_at", "days_late", "late_fraction",
                                              "score_before_late"};

std::string csv_header(const std::vector<std::string>& lab_ids, bool submissions) {
  std::vector<CsvCell> h = {"submission", "score", "max_score"};
  h.insert(h.end(), lab_ids.begin(), lab_ids.end());
  h.emplace_back("status");
  if (submissions) h.insert(h.end(), std::begin(kSubmissionColumns), std::end(kSubmissionColumns));
  return csv_line(h);
}

std::string csv_header(const GradeDocument& g) {
  std::vector<std::string> ids;
  for (const auto& lab : g.labs) ids.push_back(lab.id);
  return csv_header(ids, g.submission.has_value());
}

std::string csv_row(const GradeDocument& g) {
  return csv_row(g, g.submission.has_value());
}

// The submission's columns of a row (kSubmissionColumns), empty without one.
void add_submission_cells(std::vector<CsvCell>& row, const GradeDocument* g) {
  if (!g || !g->submission) {
    row.insert(row.end(), std::size(kSubmissionColumns), "");
    return;
  }
  std::vector<std::string> who;
  for (const auto& s : g->submission->submitters) who.push_back(submitter_line(s));
  row.insert(row.end(), {fmt::format("{}", fmt::join(who, "; ")), g->submission->time});
  if (g->late)
    row.insert(row.end(), {csv_number(fmt::format("{}", g->late->days)),
                           csv_number(fmt::format("{:g}", g->late->fraction)),
                           csv_number(fmt::format("{:.2f}", g->late->score_before))});
  else
    row.insert(row.end(), 3, "");
}

// A gradebook row as CSV cells: its numbers as numbers, empty cells for labs
// without points.
std::vector<CsvCell> gradebook_cells(const GradebookRow& r, bool submissions) {
  std::vector<CsvCell> row = {r.id, csv_number(fmt::format("{:.2f}", r.score)),
                              csv_number(fmt::format("{:g}", r.max_score))};
  for (const auto& points : r.labs)
    row.push_back(points ? csv_number(fmt::format("{:.2f}", *points)) : CsvCell(""));
  row.emplace_back(r.status);
  if (submissions) add_submission_cells(row, r.grade);
  return row;
}

std::string csv_row(const GradeDocument& g, bool submissions) {
  return csv_line(gradebook_cells(gradebook_row(g), submissions));
}

std::vector<std::string> batch_rows(const BatchView& b) {
  const bool submissions = batch_has_submissions(b);
  std::vector<std::string> rows;
  for (const auto& r : gradebook_rows(b)) {
    std::string line = csv_line(gradebook_cells(r, submissions));
    line.pop_back();  // its newline
    rows.push_back(std::move(line));
  }
  return rows;
}

std::string batch_csv(const BatchView& b) {
  std::string csv = csv_header(b.lab_ids, batch_has_submissions(b));
  for (const auto& row : batch_rows(b)) csv += row + "\n";
  return csv;
}

}  // namespace cudalab
