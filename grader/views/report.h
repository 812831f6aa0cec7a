// grader/views/report.h: a graded check, and a graded lab, as text for people: the
// console (colour on a terminal) and report.txt (plain, wrapped) are both
// written by the functions here, so they cannot drift.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/grade_document.h"
#include "core/records.h"
#include "core/score.h"
#include "cudalab/manifest.h"

namespace cudalab {

struct Style {
  bool colour = false;
  bool verbose = false;   // every failure and the test's output, not the first few
  std::size_t width = 0;  // messages wrapped to this many columns; 0: never
  static Style for_stdout(bool verbose);
  // report.txt: plain text, everything, readable at 100 columns.
  static Style for_file();
};

// The messages under a check's heading, each a paragraph (it may hold
// newlines), in the order a student should read them:
//  - a check that counts for nothing because a check it requires did not
//    pass: why, first ("not timed: 'square' failed", "not counted: it counts
//    only when 'square' passes"), whatever its own verdict;
//  - a check that did not pass: its lead (expect.h's leading_line, its
//    "Diagnosis:" line where it has one) first, then the rest of its
//    failures (the lead's line not repeated), then its measurements; a speed
//    check that failed with no words opens with "too slow" and its ratio;
//  - a check that passed: its measurements;
// then its notes, why it lost points, and the test's output where there is
// any (style.verbose, or a crash, error or timeout).
std::vector<std::string> check_messages(const Style& style, const CheckSpec& spec, const CheckResult& result,
                                        const CheckScore& score);

// One check: a line with its verdict, id, points, name and time, then its
// messages (check_messages) indented under it. Ends with a newline.
std::string check_text(const Style& style, const CheckSpec& spec, const CheckResult& result,
                       const CheckScore& score);
std::string lab_header_text(const Style& style, const std::string& id, const std::string& title,
                            const std::string& context);
std::string lab_total_text(const Style& style, const std::string& id, double points, double max_points,
                           const std::string& label);
// A lab of a grade: its header, each check (or why it was not graded) and
// its total.
std::string graded_lab_text(const Style& style, const GradedLab& lab);

// What a student reads first as the cause of a failed check: its
// "Diagnosis:" line where it has one (a speed check's comes after the ratio it
// explains), otherwise the first line of its first failure ("not implemented
// yet", a speed check's ratio and its advice, a timeout). Host-only.
// (expect.h checks it: a variant's `leads`.)
std::string leading_line(const std::vector<std::string>& failures);

void print_lab_header(const Style& style, const std::string& id, const std::string& title,
                      const std::string& context);
void print_check(const Style& style, const CheckSpec& spec, const CheckResult& result,
                 const CheckScore& score);
void print_lab_total(const Style& style, const std::string& id, double points, double max_points,
                     const std::string& label);

// "student 2.11 ms, naive 3.13 ms: 1.48x (needs 1.30x), 8149 GFLOP/s ..."
std::string describe_measurements(const CheckResult& result, const CheckScore& score);

// `text` with every line that is longer than `width` broken at spaces, its
// continuation indented as the line's own text starts; `width` 0: as is.
std::string wrap_lines(const std::string& text, std::size_t width);

}  // namespace cudalab
