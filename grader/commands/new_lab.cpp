// cudalab new-lab NN_name "Title": lays out a new lab's files from templates
// (tools/new_lab.py does the work); cudalab check-lab NN_name: checks one lab
// and builds and runs its variants alone (tools/check_lab.py). docs/new-lab.md
// is the guide to both.
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

NewLabCommand::NewLabCommand(CLI::App& app)
    : Command(app, "new-lab",
              "Lay out a new lab's files (labs/, solutions/, handouts/, tests/variants/) from templates, "
              "ready to fill (docs/new-lab.md)") {
  sub_->add_option("name", name_, "the lab's folder name, NN_name: e.g. 05_reduction")->required();
  sub_->add_option("title", title_, "the lab's title, e.g. \"Sum reduction\"")->required();
}

namespace {

// Runs one of the instructor's Python tools in this process's place; returns
// only where it could not be started.
int exec_tool(const char* command, const char* tool, std::vector<std::string> args) {
  const std::filesystem::path script = kSourceRoot / "tools" / tool;
  if (!std::filesystem::exists(script) || !std::filesystem::is_directory(kSourceRoot / "solutions")) {
    fmt::print(stderr,
               "cudalab {}: {} is not the instructor's tree (no solutions/ or tools/{}): labs are written "
               "and checked there, not in a student release\n",
               command, kSourceRoot.string(), tool);
    return kUsage;
  }
  std::vector<std::string> argv = {"python3", script.string(), "--source", kSourceRoot.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  std::fflush(stdout);
  execvp(cargv[0], cargv.data());  // returns only on failure
  fmt::print(stderr, "cudalab {}: cannot run python3: {}\n", command, std::strerror(errno));
  return kFailed;
}

}  // namespace

int NewLabCommand::run() {
  return exec_tool("new-lab", "new_lab.py", {name_, title_});
}

CheckLabCommand::CheckLabCommand(CLI::App& app)
    : Command(app, "check-lab",
              "Check one lab as the framework's tests and the release will (manifest, handouts, leak scan), "
              "then build and run its variants alone (docs/new-lab.md); instructor's tree only") {
  sub_->add_option("name", name_, "the lab's folder name, NN_name: e.g. 05_reduction")->required();
  sub_->add_flag("--no-build", no_build_, "the checks that build nothing only: a second");
}

int CheckLabCommand::run() {
  std::vector<std::string> args = {"--build", kBuildRoot.string(), name_};
  if (no_build_) args.insert(args.begin(), "--no-build");
  return exec_tool("check-lab", "check_lab.py", std::move(args));
}

}  // namespace cudalab
