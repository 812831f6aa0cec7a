// cudalab new-lab NN_name "Title": lays out a new lab's files from templates
// (tools/new_lab.py does the work; docs/new-lab.md is the guide).
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

int NewLabCommand::run() {
  const std::filesystem::path script = kSourceRoot / "tools" / "new_lab.py";
  if (!std::filesystem::exists(script) || !std::filesystem::is_directory(kSourceRoot / "solutions")) {
    fmt::print(stderr,
               "cudalab new-lab: {} is not the instructor's tree (no solutions/ or tools/new_lab.py): new "
               "labs are written there, not in a student release\n",
               kSourceRoot.string());
    return kUsage;
  }
  std::vector<std::string> argv = {"python3", script.string(), "--source", kSourceRoot.string(),
                                   name_,     title_};
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  std::fflush(stdout);
  execvp(cargv[0], cargv.data());  // returns only on failure
  fmt::print(stderr, "cudalab new-lab: cannot run python3: {}\n", std::strerror(errno));
  return kFailed;
}

}  // namespace cudalab
