// grader/commands/course_build.h: the course's own build (kBuildRoot), as
// `cudalab test` and the GPU probe use it: which targets it has, and building
// some of them with the compiler's errors shown. (The grader's build of a
// submission is another, in its grading folder: grade.h.)
#pragma once

#include <string>
#include <vector>

namespace cudalab {

// Whether the build has this target: a path ("labs/03_tiling-tests"), or a
// name looked up under labs/ and harness/ ("03_tiling-tests-cpu").
bool target_exists(const std::string& target);

// Builds the targets (names as target_exists takes them), its progress on
// stderr (progress.h) and the build's errors (trim_build_log) where it fails.
bool build_targets(const std::vector<std::string>& targets, bool verbose);

// Keeps the compiler's error lines and a little context; all of it if verbose.
std::string trim_build_log(const std::string& log, bool verbose);

}  // namespace cudalab
