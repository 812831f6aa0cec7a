// cudalab selftest [--long] [ARGS...]: the framework's own tests, `meson test`
// on the course's build, run in place of this process.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "commands.h"
#include "common.h"

namespace cudalab {

namespace {

// The suites of the build's tests as Meson lists them (meson-info/intro-tests.json,
// what `meson test --list` reads), so that the help names what a build has:
// a suite added in tests/meson.build shows here without an edit.
std::string suites_of_build() {
  std::ifstream in(kBuildRoot / "meson-info" / "intro-tests.json");
  nlohmann::json tests;
  if (in) tests = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!tests.is_array()) return "Its suites are listed here once build/ is configured (./cudalab --version).";
  std::vector<std::string> order;                    // as tests/meson.build first names them
  std::map<std::string, std::pair<int, int>> count;  // tests, of them long
  for (const auto& t : tests) {
    if (!t.contains("suite") || !t["suite"].is_array()) continue;
    std::vector<std::string> suites;
    for (const auto& s : t["suite"]) {
      const std::string full = s.is_string() ? s.get<std::string>() : "";
      suites.push_back(full.substr(full.find(':') + 1));  // "cudalab:unit": the project, then the suite
    }
    const bool is_long = std::find(suites.begin(), suites.end(), "long") != suites.end();
    for (const auto& s : suites) {
      if (!count.count(s)) order.push_back(s);
      ++count[s].first;
      if (is_long) ++count[s].second;
    }
  }
  std::string out = "Suites of this build (tests in each; of them in 'long'):";
  for (const auto& s : order) {
    const auto [n, n_long] = count[s];
    out += fmt::format("\n  {:<16} {}{}", s, n,
                       n_long > 0 && s != "long" ? fmt::format("; {} long", n_long) : "");
  }
  return out;
}

}  // namespace

SelftestCommand::SelftestCommand(CLI::App& app)
    : Command(app, "selftest", "The framework's own tests: meson test (unit and GPU suites)") {
  sub_->add_flag("--long", long_,
                 "the suite 'long' too (end-to-end grading of batches, the gallery, the release: minutes "
                 "each; CI runs them)");
  // Everything else goes to meson test in its order (a positional option here
  // would take "unit" of "--suite unit" away from its flag).
  // The footer is built when --help asks for it, not on every run of the program.
  sub_->footer([] {
    return "Other arguments go to meson test in their order: --suite NAME runs one suite (--suite harness, "
           "--suite grader: one unit-test binary each), a test's name runs that test. The suite 'long' runs "
           "only with --long or --suite long, also where another suite is named.\n" +
           suites_of_build();
  });
  sub_->allow_extras();
}

int SelftestCommand::run() {
  const std::vector<std::string> args = sub_->remaining();
  std::vector<std::string> argv = {"meson", "test", "-C", kBuildRoot.string(), "--print-errorlogs"};
  // Everything but the suite 'long' (whole batches graded, grading folders and
  // a release built from scratch: minutes each, CI runs them): 7 minutes from
  // a fresh clone on two cores. A named suite leaves it out too (the suite
  // 'grader' holds both the grader's unit tests, seconds, and its end-to-end
  // runs); a test named, or the suite 'long' itself, runs as named.
  static const std::set<std::string> with_value = {
      "--suite",    "--no-suite",  "--num-processes", "-t",       "--timeout-multiplier",
      "--setup",    "--test-args", "--wrapper",       "--repeat", "--logbase",
      "--gdb-path", "-C",          "--max-lines"};
  bool with_long = long_;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const bool value = i > 0 && with_value.count(args[i - 1]);
    const bool test_named = !value && args[i].rfind("-", 0) != 0;
    const bool long_named =
        (value && args[i - 1] == "--suite" && args[i] == "long") || args[i] == "--suite=long";
    if (test_named || long_named) with_long = true;
  }
  if (!with_long) argv.insert(argv.end(), {"--no-suite", "long"});
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
