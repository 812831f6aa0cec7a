// grader/platforms/gradebook.h: a batch graded from a platform's export, written back in
// the form that platform (or the LMS behind it) imports, one row per student,
// and one feedback file per student. Both are functions of the batch's grade
// documents (core/batch.h BatchView) and, for the students whose submission
// could not be graded, of the export's record of them (intake.h).
//
//   gradescope    gradebook-gradescope.csv: the columns of Gradescope's own
//                 assignment score export (Name, SID, Email, Total Score,
//                 Max Points, Status, Submission ID, Submission Time,
//                 Lateness (H:M:S)), then Late Penalty, Score Before Penalty, Reason
//   prairielearn  gradebook-prairielearn.csv: what "Upload new question scores"
//                 takes: uid, group_name, instance, qid, submission_id,
//                 score_perc (0 to 100), feedback
//   classroom     gradebook-classroom.csv: the columns of Classroom's grades CSV
//                 (assignment_name ... points_awarded, points_available[, group_name])
//                 with cudalab's points, then late_days, late_penalty,
//                 points_before_late, reason
//
// Where each format comes from: docs/course.md, "After the deadline".
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/batch.h"
#include "platforms/intake.h"

namespace cudalab {

struct Gradebook {
  Platform platform = Platform::gradescope;
  std::string assignment;                        // the assignment graded
  const std::vector<HandIn>* handins = nullptr;  // the export's, in the batch's order
  const BatchView* batch = nullptr;              // entries[i] is handins[i]'s grade (or why none)
  // PrairieLearn: which lab each student file belongs to, so that a question's
  // score is its labs' points (a question that submits none of them: the whole grade's).
  std::map<std::string, std::string> lab_of_file;
};

// The gradebook's file name and text.
std::string gradebook_file(Platform p);
std::string gradebook_csv(const Gradebook& g);

// One feedback file per student: (file name, text). The name is the
// platform's identity of the student (Gradescope: SID, else email;
// PrairieLearn: uid; Classroom: login), made safe for a file name; the text
// names the student, the assignment, the submission time and any late
// penalty, then the submission's report.txt.
std::vector<std::pair<std::string, std::string>> feedback_files(const Gradebook& g);

// Writes dir/<gradebook_file> and dir/feedback/<student>.txt.
void write_gradebook(const Gradebook& g, const std::filesystem::path& dir);

}  // namespace cudalab
