#include "new_lab.h"

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
// add_new_lab_command() put it (main's local), which guaranteed copy elision
// does: it is constructed in place, never copied.
NewLabCommand::NewLabCommand(CLI::App& app) {
  sub_ = app.add_subcommand("new-lab",
                            "Lay out a new lab's files (labs/, solutions/, handouts/, tests/variants/) from "
                            "templates, ready to fill (docs/new-lab.md)");
  sub_->add_option("name", name_, "the lab's folder name, NN_name: e.g. 05_reduction")->required();
  sub_->add_option("title", title_, "the lab's title, e.g. \"Sum reduction\"")->required();
}

int NewLabCommand::run() const {
  const std::filesystem::path script = kSourceRoot / "tools" / "new_lab.py";
  if (!std::filesystem::exists(script) || !std::filesystem::is_directory(kSourceRoot / "solutions")) {
    fmt::print(stderr,
               "cudalab new-lab: {} is not the instructor's tree (no solutions/ or tools/new_lab.py): new "
               "labs are written there, not in a student release\n",
               kSourceRoot.string());
    return 2;
  }
  std::vector<std::string> argv = {"python3", script.string(), "--source", kSourceRoot.string(),
                                   name_,     title_};
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  std::fflush(stdout);
  execvp(cargv[0], cargv.data());
  fmt::print(stderr, "cudalab new-lab: cannot run python3: {}\n", std::strerror(errno));
  return 1;
}

}  // namespace cudalab
