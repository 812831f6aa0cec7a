// grader/export.h: a graded submission in the formats graders read.
//   Gradescope   results.json: score, execution_time, output, tests[] with
//                name, score, max_score, status, output, visibility
//   PrairieLearn results.json: gradable, score (0..1), message, output,
//                tests[] with name, points, max_points, message, output
//   JUnit XML    testsuites / testsuite (one per lab) / testcase (one per check)
//   CSV          one gradebook row per submission: id, total, max, one column per lab
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "grade.h"

namespace cudalab {

nlohmann::json gradescope_json(const SubmissionGrade& g);
nlohmann::json prairielearn_json(const SubmissionGrade& g);
std::string junit_xml(const SubmissionGrade& g);
std::string csv_header(const std::vector<LabSpec>& labs);
std::string csv_row(const SubmissionGrade& g);
std::string csv_field(const std::string& s);
// The cells of one CSV line (quoted cells may hold commas; "" is a quote).
std::vector<std::string> split_csv_line(const std::string& line);

// The text a student reads for one check: verdict, measurements, failures, notes.
std::string check_output(const CheckSpec& spec, const CheckResult& r, const CheckScore& s);
// The text of the whole submission: GPU, ignored files, lab by lab.
std::string submission_output(const SubmissionGrade& g);

}  // namespace cudalab
