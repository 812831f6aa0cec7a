// grader/views/class_view.h: a batch seen from the front of the class.
//
// Where an instructor's next lecture should go: per check of each lab, how
// many submissions failed it and the causes they failed with, the most
// common first, each with who they are (grouped by the cause id the grade
// keeps for each check, vocabulary.h: never by cutting a diagnosis's words),
// and each submission's status (graded, not graded, error, compile error,
// late). A function of the batch's grade documents alone (BatchView): the
// batch page (index.html) shows it, class.csv holds it for a spreadsheet.
#pragma once

#include <string>
#include <vector>

#include "core/batch.h"
#include "core/grade_document.h"

namespace cudalab {

// What a failing check opens with, as report.html and report.txt lead with
// it: the first line of its first message (report.h's check_messages: why it
// counts for nothing, else its "Diagnosis:" line, else its first failure).
// "" for a check that passed or has no message.
std::string check_diagnosis(const GradedCheck& check);

// A submission's status in the batch: "graded", "not graded", "error",
// "compile error", "rejected", "missing file" or "not run" (the worst of its
// labs'), then ", late (N days)" where its late rule took points.
struct SubmissionStatus {
  std::string word;    // one of the above, without the lateness
  std::string detail;  // why, for a person: the labs it concerns or the problem; "" none
  int days_late = 0;
  std::string text() const;  // word, detail in parentheses, then the lateness
};
SubmissionStatus submission_status(const BatchEntry& e);

struct DiagnosisCount {
  // The group: a check's cause (spelling(Cause), "boundary_checks"), or in a
  // lab's "(not graded)" row its status ("build_failed"); `text` its words
  // for a person (title(Cause), "compile error").
  std::string cause;
  std::string text;
  int count = 0;
  std::string example;  // the first of them as its student read it, for the page's details
  // The submissions behind it (their batch ids), in the batch's order: the
  // instructor's next step is to ask them.
  std::vector<std::string> who;
};

// One check of one lab across the class. `of`: the submissions whose lab
// was graded (the check has a verdict in their document); `failed`: those
// whose verdict is fail, timeout, crash or error; `not_run`: not_run or
// skipped (no GPU, or a check it requires failed). `diagnoses`: the most
// common first, ties in order of first appearance; all of them, the views
// show three. A lab's row with check "(not graded)" counts the submissions
// whose lab was not graded at all (did not compile, a file missing,
// rejected), its diagnoses their lab status; `of` there is every submission.
struct ClassCheck {
  std::string lab, check, name, kind;
  int of = 0, passed = 0, failed = 0, not_run = 0;
  std::vector<DiagnosisCount> diagnoses;
};
struct ClassView {
  int submissions = 0;
  std::vector<ClassCheck> checks;  // by lab (the batch's order), then the lab's check order
};
ClassView class_view(const BatchView& b);

// class.csv: one row per check (ClassCheck), the three most common
// causes in columns, each with the submissions behind it ("; " between):
//   lab,check,kind,of,passed,failed,not_run,cause_1,diagnosis_1,count_1,share_1,who_1,...,who_3
// share_i = count_i / of, a fraction with three decimals ("" where no
// diagnosis); a lab's "(not graded)" row comes first and has kind "lab".
std::string class_csv(const ClassView& v);

}  // namespace cudalab
