#include "core/batch.h"

#include <fmt/format.h>

#include <algorithm>

#include "cudalab/vocabulary_fmt.h"

namespace cudalab {

GradebookRow gradebook_row(const GradeDocument& g) {
  GradebookRow row;
  row.id = g.id;
  row.score = g.score;
  row.max_score = g.max_score;
  row.grade = &g;
  std::vector<std::string> status;
  for (const auto& lab : g.labs) {
    row.labs.emplace_back(lab.weight * lab.points);
    if (lab.status != LabStatus::graded) status.push_back(fmt::format("{}:{}", lab.id, lab.status));
  }
  if (!g.error.empty()) status.insert(status.begin(), "unreadable");
  row.status = status.empty() ? "graded" : fmt::format("{}", fmt::join(status, " "));
  return row;
}

std::vector<GradebookRow> gradebook_rows(const BatchView& b) {
  std::vector<GradebookRow> rows;
  for (const auto& e : b.entries) {
    if (e.grade) {
      rows.push_back(gradebook_row(*e.grade));
      continue;
    }
    GradebookRow row;
    row.id = e.id;
    row.labs.resize(b.lab_ids.size());
    row.status = e.problem.empty() ? "not graded" : e.problem;
    rows.push_back(std::move(row));
  }
  return rows;
}

bool batch_has_submissions(const BatchView& b) {
  return std::any_of(b.entries.begin(), b.entries.end(),
                     [](const BatchEntry& e) { return e.grade && e.grade->submission; });
}

}  // namespace cudalab
