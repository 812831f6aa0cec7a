// cudalab bundle --assignment NAME --platform gradescope|prairielearn|classroom
// [--out DIR] [--course FILE] [--image IMAGE] [--force]: the instructor's one
// step from an assignment of course.toml to what a platform takes: a
// Gradescope autograder zip, PrairieLearn questions, or a GitHub Classroom
// workflow. This checks the command line and the course file (the assignment
// and its labs are the grader's, as `cudalab grade --assignment` reads them);
// tools/bundle.py writes the files.
#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#include "commands.h"
#include "common.h"
#include "core/course.h"

namespace cudalab {

namespace fs = std::filesystem;

namespace {

constexpr std::array<const char*, 3> kPlatforms = {"gradescope", "prairielearn", "classroom"};

}  // namespace

BundleCommand::BundleCommand(CLI::App& app)
    : Command(app, "bundle",
              "Write a platform's upload-ready bundle for one assignment: Gradescope's autograder zip, "
              "PrairieLearn questions or a GitHub Classroom workflow (docs/course.md)") {
  sub_->add_option("--assignment", assignment_, "the assignment, as course.toml's [[assignment]] names it")
      ->required();
  sub_->add_option("--platform", platform_, "gradescope, prairielearn or classroom")->required();
  sub_->add_option("--out", out_, "the folder to write into (default: bundles/<assignment>/<platform>)");
  sub_->add_option("--course", course_, "the course file (default course.toml)");
  sub_->add_option("--image", image_,
                   "prairielearn: the autograder image PrairieLearn pulls (default: the example question's)");
  sub_->add_flag("--force", force_,
                 "write into --out though it is not empty (the bundle's own files are replaced)");
}

int BundleCommand::run() {
  bool known_platform = false;
  for (const char* p : kPlatforms) known_platform = known_platform || platform_ == p;
  if (!known_platform) {
    fmt::print(stderr, "cudalab bundle: no platform '{}' (platforms: {})\n", platform_,
               fmt::join(kPlatforms, ", "));
    return kUsage;
  }
  if (!image_.empty() && platform_ != "prairielearn") {
    fmt::print(stderr, "cudalab bundle: --image is PrairieLearn's (--platform prairielearn)\n");
    return kUsage;
  }
  const fs::path script = kSourceRoot / "tools" / "bundle.py";
  if (!fs::exists(script) || !fs::is_directory(kSourceRoot / "solutions")) {
    fmt::print(stderr,
               "cudalab bundle: {} is not the instructor's tree (no solutions/ or tools/bundle.py): a bundle "
               "grades with the references, so it is made from the full course\n",
               kSourceRoot.string());
    return kUsage;
  }
  const fs::path course_file =
      fs::absolute(course_.empty() ? kSourceRoot / "course.toml" : fs::path(course_));
  CourseSpec assignment;
  try {
    assignment = select_assignment(load_course(course_file, all_labs()), assignment_);
  } catch (const ManifestError& e) {
    fmt::print(stderr, "cudalab bundle: {}\nNothing was written.\n", e.what());
    return kUsage;
  }
  const fs::path out = out_.empty() ? fs::path("bundles") / assignment_ / platform_ : fs::path(out_);
  std::error_code ec;
  if (fs::exists(out, ec) && !fs::is_directory(out, ec)) {
    fmt::print(stderr, "cudalab bundle: --out {} is a file, not a folder\n", out.string());
    return kUsage;
  }
  if (fs::is_directory(out, ec) && !fs::is_empty(out, ec) && !force_) {
    fmt::print(stderr,
               "cudalab bundle: {} is not empty: name a new or empty folder with --out, or add --force to "
               "write the bundle's files into it (replacing those it has)\n",
               out.string());
    return kUsage;
  }

  std::vector<std::string> argv = {"python3",      script.string(),
                                   "--source",     kSourceRoot.string(),
                                   "--course",     course_file.string(),
                                   "--assignment", assignment_,
                                   "--labs",       fmt::format("{}", fmt::join(assignment.labs, ",")),
                                   "--platform",   platform_,
                                   "--out",        out.string()};
  if (!image_.empty()) argv.insert(argv.end(), {"--image", image_});
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  std::fflush(stdout);
  execvp(cargv[0], cargv.data());  // returns only on failure
  fmt::print(stderr, "cudalab bundle: cannot run python3: {}\n", std::strerror(errno));
  return kFailed;
}

}  // namespace cudalab
