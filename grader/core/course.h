// grader/core/course.h: the course file (course.toml): which labs count, their
// weights, and grading settings. Errors name the file, line and field.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/time_limits.h"
#include "cudalab/manifest.h"

namespace cudalab {

// An assignment: the labs a course hands out together and grades as one
// ([[assignment]] in course.toml). Its maximum is the sum of its labs'.
struct Assignment {
  std::string name;               // what --assignment and the platforms' bundles call it
  std::vector<std::string> labs;  // a subset of the course's, in the course's order
  std::string due;                // as written in course.toml (an RFC 3339 date-time or a date); "" none
  // Lateness: this fraction of the points is taken for each day (or part of
  // one) after `due`, and nothing is given after max_days. per_day 0: none.
  double late_per_day = 0;
  int late_max_days = 0;
};

struct CourseSpec {
  std::filesystem::path file;
  std::string title;
  std::vector<std::string> labs;          // [course] labs; without it, every lab of known_labs
  std::map<std::string, double> weights;  // lab -> weight (default 1)
  std::string seed;                       // grading seed ("" = the labs' default)
  double build_timeout_s = 600;
  // All of one submission's second looks and explanations (time_limits.h).
  double words_allowance_s = kWordsAllowance_s;
  double check_timeout_s = 0;  // caps every check's timeout when > 0
  bool cpu_mode = false;       // without a GPU, grade correctness in CPU mode
  std::vector<Assignment> assignments;
  std::string assignment;  // the assignment graded (select_assignment); "" every lab of `labs`

  double weight(const std::string& lab) const;
  const Assignment* find_assignment(const std::string& name) const;
};

// The course as one assignment grades it: its labs alone (and their weights),
// `assignment` set. Throws ManifestError naming the assignments there are.
CourseSpec select_assignment(const CourseSpec& course, const std::string& name);

// Parses course.toml; `known_labs` are the lab folders there are (the labs a
// course without a `labs` list grades).
CourseSpec parse_course(const std::string& text, const std::string& source,
                        const std::vector<std::string>& known_labs);
CourseSpec load_course(const std::filesystem::path& path, const std::vector<std::string>& known_labs);

}  // namespace cudalab
