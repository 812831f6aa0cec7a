// cudalab selftest [--long] [ARGS...]: the framework's own tests, `meson test`
// on the course's build, run in place of this process.
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>

#include "commands.h"
#include "common.h"

namespace cudalab {

SelftestCommand::SelftestCommand(CLI::App& app)
    : Command(app, "selftest", "The framework's own tests: meson test (unit and GPU suites)") {
  sub_->add_flag("--long", long_,
                 "the suite 'long' too (end-to-end grading of batches, the gallery, the release: minutes "
                 "each; CI runs them)");
  // Everything else goes to meson test in its order (a positional option here
  // would take "unit" of "--suite unit" away from its flag).
  sub_->footer("Other arguments go to meson test in their order, e.g. --suite unit, or a test's name.");
  sub_->allow_extras();
}

int SelftestCommand::run() {
  const std::vector<std::string> args = sub_->remaining();
  std::vector<std::string> argv = {"meson", "test", "-C", kBuildRoot.string(), "--print-errorlogs"};
  // Everything but the suite 'long' (whole batches graded, grading folders and
  // a release built from scratch: minutes each, CI runs them): 7 minutes from
  // a fresh clone on two cores. Named suites or tests run as named.
  static const std::set<std::string> with_value = {
      "--suite",    "--no-suite",  "--num-processes", "-t",       "--timeout-multiplier",
      "--setup",    "--test-args", "--wrapper",       "--repeat", "--logbase",
      "--gdb-path", "-C",          "--max-lines"};
  bool named = false;  // a suite or a test named: run as named
  for (std::size_t i = 0; i < args.size(); ++i) {
    const bool value = i > 0 && with_value.count(args[i - 1]);
    if (args[i] == "--suite" || args[i].rfind("--suite=", 0) == 0 || (!value && args[i].rfind("-", 0) != 0))
      named = true;
  }
  if (!long_ && !named) argv.insert(argv.end(), {"--no-suite", "long"});
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  std::fflush(stdout);
  execvp(cargv[0], cargv.data());
  fmt::print(stderr, "cudalab: cannot run meson: {}\n", std::strerror(errno));
  return kFailed;
}

}  // namespace cudalab
