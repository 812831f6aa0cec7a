// grader/commands/common.h: what several of the cudalab program's subcommands
// share: their exit codes, where the course and its build are, the labs, and
// the sandbox every graded check needs. The course's build (course_build.h)
// and the GPU probe (gpu_probe.h) have headers of their own.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace cudalab {

// Exit codes (docs/instructors.md): 0 all good, 1 checks failed or internal error,
// 2 usage or manifest error, 3 no GPU: built only, GPU checks not run.
constexpr int kOk = 0, kFailed = 1, kUsage = 2, kNoGpu = 3;

// The course's source tree and the build this program belongs to (meson's
// -DCUDALAB_SOURCE_ROOT and -DCUDALAB_BUILD_ROOT, set for the program's files).
extern const std::filesystem::path kSourceRoot;
extern const std::filesystem::path kBuildRoot;

// The labs under labs/ (each folder with a lab.toml), sorted.
std::vector<std::string> all_labs();

// Every graded check runs through cudalab-sandbox: without it nothing can be
// judged, so say so once, before minutes of building, rather than per check.
// True (and said on stderr) where it is missing.
bool sandbox_missing();

}  // namespace cudalab
