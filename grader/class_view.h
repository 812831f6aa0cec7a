// grader/class_view.h: a batch seen from the front of the class.
//
// Where an instructor's next lecture should go: per check of each lab, how
// many submissions failed it and the three causes they failed with most
// often (each diagnosis cut to its cause, with its numbers and shapes
// normalized away, so that "wrong value at K=9 on M=17: ..." and "wrong
// value at K=5 on M=33: ..." are one),
// and each submission's status (graded, not graded, error, compile error,
// late). A function of the batch's grade documents alone (BatchView): the
// batch page (index.html) shows it, class.csv holds it for a spreadsheet.
#pragma once

#include <string>
#include <vector>

#include "export.h"
#include "grade_document.h"

namespace cudalab {

// What a failing check opens with, as report.html and report.txt lead with
// it: the first line of its first message (report.h's check_messages: why it
// counts for nothing, else its "Diagnosis:" line, else its first failure).
// "" for a check that passed or has no message.
std::string check_diagnosis(const GradedCheck& check);

// A diagnosis with what varies between students taken out, for grouping:
// a leading "Diagnosis: " and trailing full stops dropped, every number
// (digits, a decimal point, an exponent, a hex 0x..) that is not part of a
// word becomes '#', a shape's "17x33" becomes "#x#", and runs of spaces one.
// Digits inside a word (float4, sm_90, matmul_tiled.cu) stay.
std::string normalize_diagnosis(const std::string& diagnosis);

// A normalized diagnosis cut to its cause, what a lecture addresses: the
// text before its first ": ", "; " or ". " outside parentheses ("the
// boundary checks", "C[#][#] is NaN though A and B hold none", "matmul_tiled
// runs at #x the speed of the naive kernel"). Diagnoses that name one cause
// with different evidence after it (the shapes that failed, the student's
// launch) are one group. The whole text where nothing cuts it.
std::string diagnosis_cause(const std::string& normalized);

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
  std::string text;  // the cause (diagnosis_cause of normalize_diagnosis)
  int count = 0;
  std::string example;  // the first of them in full (normalized), for the page's details
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
// diagnoses in columns, each with the submissions behind it ("; " between):
//   lab,check,kind,of,passed,failed,not_run,diagnosis_1,count_1,share_1,who_1,...,who_3
// share_i = count_i / of, a fraction with three decimals ("" where no
// diagnosis); a lab's "(not graded)" row comes first and has kind "lab".
std::string class_csv(const ClassView& v);

}  // namespace cudalab
