// cudalab: the course's command-line program. Each subcommand is a class in
// commands/commands.h with a file of its own (commands/<name>.cpp): test,
// grade, doctor, selftest, expect, export, release, bundle, calibrate. This file only
// dispatches: build the command line, parse it, run the command it names.
//
// Normally started through the ./cudalab script at the repository root,
// which installs what is missing and configures the build first.
#include <fmt/format.h>
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <exception>
#include <string>

#include "commands/commands.h"
#include "commands/common.h"

using namespace cudalab;

namespace {

// CUDALAB_PROFILE: the grader's own peak memory (its children's are theirs):
// what everything it reads from a submission is bounded for.
void print_peak_memory_if_profiling() {
  if (const char* p = std::getenv("CUDALAB_PROFILE"); p && *p && std::string(p) != "0") {
    rusage self{};
    getrusage(RUSAGE_SELF, &self);
    fmt::print(stderr, "cudalab: the grader's peak memory: {:.1f} MiB\n", self.ru_maxrss / 1024.0);
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"cudalab: GPU memory-optimisation labs: build, check, grade"};
  app.set_version_flag("--version", std::string("cudalab ") + CUDALAB_VERSION);
  app.require_subcommand(1);

  // In the order `cudalab --help` lists them.
  TestCommand test(app);
  GradeCommand grade(app);
  DoctorCommand doctor(app);
  SelftestCommand selftest(app);
  ExpectCommand expect(app);
  ExportCommand export_cmd(app);
  ReleaseCommand release(app);
  BundleCommand bundle(app);
  CalibrateCommand calibrate(app);
  NewLabCommand new_lab(app);
  CheckLabCommand check_lab(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kOk : kUsage;
  }
  try {
    if (test.selected()) return test.run();
    if (grade.selected()) {
      const int rc = grade.run();
      print_peak_memory_if_profiling();
      return rc;
    }
    if (doctor.selected()) return doctor.run();
    if (selftest.selected()) return selftest.run();
    if (expect.selected()) return expect.run();
    if (export_cmd.selected()) return export_cmd.run();
    if (release.selected()) return release.run();
    if (bundle.selected()) return bundle.run();
    if (new_lab.selected()) return new_lab.run();
    if (check_lab.selected()) return check_lab.run();
    if (calibrate.selected()) return calibrate.run();
  } catch (const std::exception& e) {
    fmt::print(stderr, "cudalab: internal error: {}\n", e.what());
    return kFailed;
  }
  return kUsage;
}
