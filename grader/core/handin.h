// grader/core/handin.h: a submission as a platform handed it in: who, when,
// and the late rule's penalty for that time (late.h). The penalty is an input
// of scoring (submission_grade.h score_submission), not an edit of a grade.
#pragma once

#include <string>
#include <vector>

namespace cudalab {

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
  double score_before = 0;  // the weighted points before the penalty (score_submission sets it)
  std::string reason;       // for the student; "" on time
};

}  // namespace cudalab
