// cudalab-student: the student's command, `cudalab test` and nothing else.
//
// `./cudalab test` builds and runs this program, not the whole cudalab
// program: a student needs to run a lab's checks, not the grader's batches,
// exports, platform readers and calibration, which on a two-core laptop
// without a GPU took minutes of a first run to compile. The checks run exactly
// as `cudalab test` in the full program runs them: the same code
// (commands/test.cpp, in the cudalab-checks library both link).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <exception>
#include <string>

#include "commands/commands.h"
#include "commands/common.h"

using namespace cudalab;

int main(int argc, char** argv) {
  CLI::App app{
      "cudalab: GPU memory-optimisation labs (the student's command; `./cudalab --help` lists the rest)"};
  app.set_version_flag("--version", std::string("cudalab ") + CUDALAB_VERSION);
  app.require_subcommand(1);
  TestCommand test(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kOk : kUsage;
  }
  try {
    return test.run();
  } catch (const std::exception& e) {
    fmt::print(stderr, "cudalab: internal error: {}\n", e.what());
    return kFailed;
  }
}
