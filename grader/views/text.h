// grader/views/text.h: a grade as plain text: one check as a student reads
// it, the submission in short for a platform's page, report.txt, and who
// handed it in.
#pragma once

#include <string>

#include "core/grade_document.h"

namespace cudalab {

// A submitter as the views name them: "Name (sid, login, email)".
std::string submitter_line(const Submitter& s);
// The lines naming who handed a grade in, when, and the late penalty; "" for
// a grade not made from a platform's export.
std::string submission_header(const GradeDocument& g);
// The text a student reads for one check: verdict, measurements, failures, notes.
std::string check_output(const GradedCheck& check);
// The text of the whole submission in short, for a platform's page beside
// its tests: the total and GPU, each lab's points, ignored files, notes.
std::string submission_output(const GradeDocument& g);
// report.txt, for a terminal: the total and GPU, then lab by lab every check
// as the console shows it (report.h's graded_lab_text: verdict, points, name,
// and for a check that did not pass its lead first, then its other messages),
// the ignored files and the notes; plain text, wrapped at 100 columns.
std::string report_text(const GradeDocument& g);

}  // namespace cudalab
