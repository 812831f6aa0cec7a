// cudalab/record.h: the machine-readable record of a test run.
//
// Each Catch2 test case is one check. While it runs, the test adds notes (for
// the student) and measurements (for the report and the grader's points); the
// listener in catch_main.cpp adds the verdict and the failure messages. The
// whole record is rewritten as JSON after every check, so a crash loses only
// the check that crashed. People get text; the grader reads this.
#pragma once

#include <string>

namespace cudalab {

// A line shown with the running check's result.
void note(const std::string& line);

// A figure for the report: student_ms, ratio, gbs, pct_peak...
void measure(const std::string& key, double value, const std::string& unit = "");

// The running check did not run in this mode (e.g. speed in CPU mode): its
// verdict becomes "not_run", never "pass".
void mark_not_run(const std::string& reason);

// Where the record goes (empty: nowhere). Set by the test main.
void set_record_path(const std::string& path);
// Or to a descriptor the grader opened (graded runs: the record's path never
// reaches the test process, whose argv and environment the student can read).
void set_record_fd(int fd);
void set_record_context(const std::string& key, const std::string& value);

// The running check's name (the Catch2 test case); empty between checks.
const std::string& current_check();

// Called by the Catch2 listener.
void begin_check(const std::string& name);
void add_failure(const std::string& message);
void end_check(bool passed, double seconds);
// Failures the running check has so far.
int failures_so_far();
// Checks recorded so far with a verdict of pass or fail (not "not_run").
int checks_run();
int checks_not_run();

}  // namespace cudalab
