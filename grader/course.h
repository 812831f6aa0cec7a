// grader/course.h: the course file (course.toml): which labs count, their
// weights, and grading settings. Errors name the file, line and field.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "cudalab/manifest.h"

namespace cudalab {

struct CourseSpec {
  std::filesystem::path file;
  std::string title;
  std::vector<std::string> labs;          // [course] labs; without it, every lab of known_labs
  std::map<std::string, double> weights;  // lab -> weight (default 1)
  std::string seed;                       // grading seed ("" = the labs' default)
  double build_timeout_s = 600;
  double check_timeout_s = 0;  // caps every check's timeout when > 0
  bool cpu_mode = false;       // without a GPU, grade correctness in CPU mode

  double weight(const std::string& lab) const;
};

// Parses course.toml; `known_labs` are the lab folders there are (the labs a
// course without a `labs` list grades).
CourseSpec parse_course(const std::string& text, const std::string& source,
                        const std::vector<std::string>& known_labs);
CourseSpec load_course(const std::filesystem::path& path, const std::vector<std::string>& known_labs);

}  // namespace cudalab
