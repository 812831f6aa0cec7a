// cudalab release --out DIR [--archs 75,90] [--course FILE] [--no-gpu] [--force]:
// writes the student release of the course. The work is tools/release.py's
// (what is copied, what is left out, how the prebuilt references are
// compiled); this is its subcommand in the cudalab program.
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#include "commands.h"
#include "common.h"

namespace cudalab {

ReleaseCommand::ReleaseCommand(CLI::App& app)
    : Command(app, "release",
              "Write the student release: skeletons, tests, harness, handouts and prebuilt references; no "
              "solutions, no grading seed") {
  sub_->add_option("--out", out_, "the folder to write (new, or empty)")->required();
  sub_->add_option("--archs", archs_,
                   "CUDA architectures of the prebuilt GPU references, e.g. 75,90 (default: course.toml "
                   "[release] cuda_archs)");
  sub_->add_option("--course", course_, "the course file (default course.toml)");
  sub_->add_flag("--no-gpu", no_gpu_, "CPU-mode references only (where there is no nvcc)");
  sub_->add_flag("--force", force_, "replace --out if it exists");
}

int ReleaseCommand::run() {
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
    return kUsage;
  }
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  std::fflush(stdout);
  execvp(cargv[0], cargv.data());
  fmt::print(stderr, "cudalab release: cannot run python3: {}\n", std::strerror(errno));
  return kFailed;
}

}  // namespace cudalab
