// grader/core/submission_grade.h: a submission as the pipeline grades it:
// per lab, its status and the grader's verdicts (judged.h), and the scores
// made from them (score.h). The grade document (grade_document.h) is made
// from it once it is scored.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/handin.h"
#include "core/judged.h"
#include "core/score.h"
#include "cudalab/manifest.h"
#include "cudalab/vocabulary.h"

namespace cudalab {

struct LabGrade {
  const LabSpec* spec = nullptr;
  double weight = 1;
  LabStatus status = LabStatus::graded;  // cudalab/vocabulary.h
  std::string message;                   // why it was not graded, for the student
  // One per check, in the lab's order: verdicts the grader reached itself
  // (judged.h), the only thing a score is computed from.
  std::vector<Judged> results;
  std::vector<CheckScore> scores;
  double points = 0, max_points = 0;  // unweighted
};

struct SubmissionGrade {
  std::string id;
  std::string assignment;  // course.toml's assignment graded ("" the course's labs)
  std::vector<LabGrade> labs;
  std::vector<std::string> ignored;  // files not taken, with the reason
  std::vector<std::string> notes;
  double score = 0, max_score = 0;  // weighted totals
  double seconds = 0;
  bool gpu = false;
  bool cpu_mode = false;  // no GPU; correctness graded in CPU mode (course.toml, or cpu_fallback)
  // CPU mode for want of a GPU, not by the course's choice (GraderConfig::
  // cpu_fallback): speed checks not run, a provisional grade (exit code 3).
  bool provisional = false;
  std::string gpu_line;
  std::string error;  // the submission could not be read at all
  // Graded from a platform's export: who handed it in and when, and the
  // late rule's penalty for that time (late.h late_penalty), which
  // score_submission takes off the score.
  std::optional<SubmissionRecord> submission;
  std::optional<LatePenalty> late;
};

// Fills score, max_score and each lab's points from its results, then takes
// the late penalty (g.late, where set) off the score, keeping the score
// before it in g.late->score_before. Host-only.
void score_submission(SubmissionGrade& g);

}  // namespace cudalab
