#include "release.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

namespace cudalab {

namespace {
const std::filesystem::path kSourceRoot = CUDALAB_SOURCE_ROOT;
}

// CLI11 keeps pointers to these members: the object must stay where
// add_release_command() put it (main's local), which guaranteed copy elision
// does: it is constructed in place, never copied.
ReleaseCommand::ReleaseCommand(CLI::App& app) {
  sub_ = app.add_subcommand(
      "release",
      "Write the student release: skeletons, tests, harness, handouts and prebuilt references; no "
      "solutions, no grading seed");
  sub_->add_option("--out", out_, "the folder to write (new, or empty)")->required();
  sub_->add_option("--archs", archs_,
                   "CUDA architectures of the prebuilt GPU references, e.g. 75,90 (default: course.toml "
                   "[release] cuda_archs)");
  sub_->add_option("--course", course_, "the course file (default course.toml)");
  sub_->add_flag("--no-gpu", no_gpu_, "CPU-mode references only (where there is no nvcc)");
  sub_->add_flag("--force", force_, "replace --out if it exists");
}

int ReleaseCommand::run() const {
  std::vector<std::string> argv = {"python3",  (kSourceRoot / "tools" / "release.py").string(),
                                   "--source", kSourceRoot.string(),
                                   "--out",    out_};
  if (!archs_.empty()) argv.insert(argv.end(), {"--archs", archs_});
  if (!course_.empty()) argv.insert(argv.end(), {"--course", course_});
  if (no_gpu_) argv.push_back("--no-gpu");
  if (force_) argv.push_back("--force");
  if (!std::filesystem::exists(kSourceRoot / "tools" / "release.py") ||
      !std::filesystem::is_directory(kSourceRoot / "solutions")) {
    fmt::print(stderr,
               "cudalab release: {} is not the instructor's tree (no solutions/): a release is made "
               "from the full course, not from a release\n",
               kSourceRoot.string());
    return 2;
  }
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  std::fflush(stdout);
  execvp(cargv[0], cargv.data());
  fmt::print(stderr, "cudalab release: cannot run python3: {}\n", std::strerror(errno));
  return 1;
}

}  // namespace cudalab
