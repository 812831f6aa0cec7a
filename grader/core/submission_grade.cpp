#include "core/submission_grade.h"

namespace cudalab {

void score_submission(SubmissionGrade& g) {
  g.score = g.max_score = 0;
  for (auto& lab : g.labs) {
    lab.points = 0;
    lab.max_points = lab.spec->total_points();
    lab.scores.clear();
    for (std::size_t i = 0; i < lab.results.size(); ++i) {
      lab.scores.push_back(score_check(lab.spec->checks[i], lab.results[i], lab.results));
      lab.points += lab.scores.back().points;
    }
    g.score += lab.weight * lab.points;
    g.max_score += lab.weight * lab.max_points;
  }
  if (g.late) {
    g.late->score_before = g.score;
    g.score *= 1 - g.late->fraction;  // fraction 1 past max_days: nothing
  }
}

}  // namespace cudalab
