#include "course_build.h"

#include <fmt/format.h>

#include <cstdio>
#include <sstream>

#include "common.h"
#include "run/meson_project.h"
#include "run/process.h"
#include "run/progress.h"

namespace cudalab {

// A lab's targets are in labs/, the GPU probe in harness/.
const std::vector<std::string> kTargetFolders = {"labs", "harness"};

bool target_exists(const std::string& target) {
  // Meson writes every target into build.ninja; a CPU-mode target exists
  // wherever simt built, a GPU one only where nvcc was found.
  return !MesonProject(kBuildRoot).output_of(target, kTargetFolders).empty();
}

bool build_targets(const std::vector<std::string>& targets, bool verbose) {
  const MesonProject project(kBuildRoot);
  std::vector<std::string> outputs;
  for (const auto& t : targets) outputs.push_back(project.output_of(t, kTargetFolders));
  ProcessOptions opt = project.build(targets, outputs, 1800);
  // On stderr, and only where it takes more than a moment: stdout is the
  // checks' results.
  Progress progress(fmt::format("building {}", fmt::join(targets, ", ")), "steps");
  opt.on_output = [&progress](std::string_view chunk) { progress.feed(chunk); };
  const ProcessResult p = run_process(opt);
  progress.finish(p.ok());
  if (p.ok()) return true;
  fmt::print(stderr, "the build failed ({}):\n{}\n", p.describe(), trim_build_log(p.output, verbose));
  return false;
}

std::string trim_build_log(const std::string& log, bool verbose) {
  if (verbose) return log;
  std::istringstream in(log);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::string out;
  int budget = 40;
  for (std::size_t i = 0; i < lines.size() && budget > 0; ++i) {
    if (lines[i].find("error") == std::string::npos && lines[i].find("Error") == std::string::npos) continue;
    for (std::size_t j = i; j < lines.size() && j < i + 4 && budget > 0; ++j, --budget)
      out += lines[j] + "\n";
    i += 3;
  }
  return out.empty() ? log.substr(log.size() > 4000 ? log.size() - 4000 : 0) : out;
}

}  // namespace cudalab
