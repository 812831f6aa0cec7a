// The main of every lab test binary: Catch2 plus cudalab's options, the GPU
// check (exit 77, "skipped" for meson test, when there is no usable GPU) and
// the listener that turns each test case into a check record.
#if !defined(CUDALAB_CATCH_V3_BUILD)
#define CATCH_CONFIG_RUNNER
#endif
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cudalab/diagnosis.h"
#include "cudalab/evidence.h"
#include "cudalab/replay.h"
#include "cudalab/run.h"
#include "cudalab/testing.h"

namespace cudalab::detail {
extern std::string lab_toml_path;
extern std::uint64_t seed_value;
extern const char* const default_lab_toml;  // lab_info.cpp, generated per lab
extern const char* const reference_archs;   // the same: a release's prebuilt GPU code
extern const bool reference_linked_build;   // the same: solutions or skeletons in namespace ref
}  // namespace cudalab::detail

namespace {

// A student release's references are prebuilt for the course's architectures
// only (prebuilt/cuda_archs.txt): SASS for sm_XY runs on sm_XZ with Z >= Y,
// PTX for compute_XY on anything from XY on. On another GPU every reference
// launch would fail with "no kernel image"; say so once, up front.
std::string reference_arch_problem(int major, int minor) {
  const std::string list = cudalab::detail::reference_archs;
  if (list.empty()) return "";
  std::vector<std::string> names;
  const int cc = major * 10 + minor;
  for (std::size_t pos = 0; pos <= list.size();) {
    std::size_t end = list.find(',', pos);
    if (end == std::string::npos) end = list.size();
    const std::string code = list.substr(pos, end - pos);
    pos = end + 1;
    const bool sass = code.rfind("sm_", 0) == 0, ptx = code.rfind("compute_", 0) == 0;
    if (!sass && !ptx) continue;
    const int a = std::atoi(code.c_str() + (sass ? 3 : 8));
    if (sass && a / 10 == major && a % 10 <= minor) return "";
    if (ptx && cc >= a) return "";
    names.push_back(code);
  }
  return fmt::format(
      "this GPU is sm_{}{}; the course's references were built for {} only, so no check can run "
      "on it. Run the checks in CPU mode (`./cudalab test --cpu`) and ask the course staff for a "
      "release built for sm_{}{} (course.toml [release] cuda_archs)",
      major, minor, fmt::join(names, ", "), major, minor);
}

#if CUDALAB_CATCH_V3
using ListenerBase = Catch::EventListenerBase;
#define CUDALAB_ASSERTION_RESULT void
#define CUDALAB_ASSERTION_RETURN
#else
using ListenerBase = Catch::TestEventListenerBase;
#define CUDALAB_ASSERTION_RESULT bool
#define CUDALAB_ASSERTION_RETURN true
#endif

class RecordListener : public ListenerBase {
 public:
  using ListenerBase::ListenerBase;

  void testCaseStarting(Catch::TestCaseInfo const& info) override {
    ListenerBase::testCaseStarting(info);
    start_ = std::chrono::steady_clock::now();
    cudalab::begin_check(std::string(info.name));
    // Correctness checks leave evidence for the grader's judge.
    const cudalab::CheckSpec* spec = cudalab::this_lab().find_by_name(std::string(info.name));
    cudalab::evidence::set_enabled(spec && spec->kind == cudalab::CheckKind::correctness);
    // A memory check reads its inputs after each launch too (cudalab/run.h).
    cudalab::set_memory_check(spec && spec->kind == cudalab::CheckKind::correctness &&
                              spec->judge == "memory");
  }

  CUDALAB_ASSERTION_RESULT assertionEnded(Catch::AssertionStats const& stats) override {
    const auto& r = stats.assertionResult;
    if (!r.isOk()) {
      std::string msg;
      // FAIL's own message is among them too. (v3's getMessage() is a StringRef.)
      const std::string own = r.hasMessage() ? std::string(r.getMessage()) : std::string();
      for (const auto& info : stats.infoMessages)
        if (!r.hasMessage() || info.message != own) msg += std::string(info.message) + "\n";
      if (r.hasExpression())
        msg += fmt::format("{} with expansion {}\n", r.getExpressionInMacro(), r.getExpandedExpression());
      if (r.hasMessage()) msg += std::string(r.getMessage());
      while (!msg.empty() && msg.back() == '\n') msg.pop_back();
      cudalab::add_failure(msg);
    }
    return CUDALAB_ASSERTION_RETURN;
  }

  void testCaseEnded(Catch::TestCaseStats const& stats) override {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    cudalab::end_check(stats.totals.assertions.failed == 0 && !stats.aborting, s);
    ListenerBase::testCaseEnded(stats);
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

}  // namespace

CATCH_REGISTER_LISTENER(RecordListener)

int main(int argc, char** argv) {
  Catch::Session session;
  std::string record, lab_toml, seed;
  int record_fd = -1, evidence_fd = -1, trace_fd = -1, replay_fd = -1, replay_code_fd = -1;
  int launches_fd = -1, reference_launches_fd = -1;
  bool evidence_expected = false;
#if CUDALAB_CATCH_V3
  using Catch::Clara::Opt;
#else
  using Catch::clara::Opt;
#endif
  session.cli(
      session.cli() |
      Opt(record, "file")["--record"]("write the machine-readable JSON record of the checks here") |
      Opt(record_fd, "fd")["--record-fd"]("write the record to this open descriptor (the grader's)") |
      Opt(evidence_fd,
          "fd")["--evidence-fd"]("write the outputs of correctness checks here, for the grader's judge") |
      Opt(evidence_expected)["--evidence-expected"](
          "evidence of the expected values instead of the outputs (the reference's run)") |
      Opt(trace_fd, "fd")["--trace-fd"]("speed checks: trace the launches of one call of the launcher here "
                                        "and end the check (the grader's)") |
      Opt(replay_fd, "fd")["--replay-fd"]("speed checks: time these traced launches instead (the grader's)") |
      Opt(replay_code_fd, "fd")["--replay-code-fd"]("the compiled kernels the traced launches name") |
      Opt(launches_fd, "fd")["--launches-fd"]("write each launcher call's last launch here (the "
                                              "reference's run, for the students' diagnoses)") |
      Opt(reference_launches_fd, "fd")["--reference-launches-fd"](
          "the reference's launches, as --launches-fd wrote them (a submission's run)") |
      Opt(lab_toml, "lab.toml")["--lab-toml"]("read checks, points and thresholds from this manifest") |
      Opt(seed, "seed")["--seed"]("seed for the random inputs (default 2026; also CUDALAB_SEED)"));
  if (int rc = session.applyCommandLine(argc, argv); rc != 0) return rc;

  const auto& cfg = session.configData();
  if (cfg.showHelp || cfg.listTests || cfg.listTags || cfg.listReporters
#if CUDALAB_CATCH_V3
      || cfg.listListeners
#else
      || cfg.listTestNamesOnly
#endif
  )
    return session.run();

  if (seed.empty())
    if (const char* env = std::getenv("CUDALAB_SEED")) seed = env;
  if (!seed.empty()) {
    char* end = nullptr;
    cudalab::detail::seed_value = std::strtoull(seed.c_str(), &end, 10);
    if (!end || *end) {
      std::fprintf(stderr, "cudalab: --seed wants a whole number, not '%s'\n", seed.c_str());
      return 2;
    }
  }
  if (lab_toml.empty())
    if (const char* env = std::getenv("CUDALAB_LAB_TOML")) lab_toml = env;
  if (lab_toml.empty()) lab_toml = cudalab::detail::default_lab_toml;
  cudalab::detail::lab_toml_path = lab_toml;
  try {
    (void)cudalab::this_lab();
  } catch (const cudalab::ManifestError& e) {
    std::fprintf(stderr, "cudalab: %s\n", e.what());
    return 2;
  }

  if (record.empty())
    if (const char* env = std::getenv("CUDALAB_RECORD")) record = env;
  cudalab::set_record_path(record);
  if (record_fd >= 0) cudalab::set_record_fd(record_fd);
  if (trace_fd >= 0) cudalab::replay::set_trace(trace_fd);
  if (replay_fd >= 0) cudalab::replay::set_replay(replay_fd, replay_code_fd);
  cudalab::set_reference_linked(cudalab::detail::reference_linked_build);
  cudalab::set_launches_fd(launches_fd);
  if (reference_launches_fd >= 0) {
    std::string table;
    if (cudalab::replay::read_fd(reference_launches_fd, table)) cudalab::load_reference_launches(table);
  }
  cudalab::evidence::set_write_expected(evidence_expected);
  cudalab::evidence::set_sink(evidence_fd);
  cudalab::set_record_context("lab", cudalab::this_lab().id);
  cudalab::set_record_context("seed", std::to_string(cudalab::seed()));

  const cudalab::GpuInfo& gpu = cudalab::gpu();
  cudalab::set_record_context("gpu", gpu.describe());
  if (!gpu.usable) {
    cudalab::set_record_context("skipped", gpu.reason);
    std::printf("cudalab: skipping the GPU checks: %s\n", gpu.reason.c_str());
    return 77;  // meson test: skipped
  }
  if (!cudalab::cpu_mode())
    if (const std::string problem = reference_arch_problem(gpu.cc_major, gpu.cc_minor); !problem.empty()) {
      std::fprintf(stderr, "cudalab: %s\n", problem.c_str());
      return 2;
    }
  cudalab::set_record_context("mode", cudalab::cpu_mode() ? "cpu" : "gpu");
  cudalab::diagnosis::set_lab(cudalab::this_lab().id, cudalab::cpu_mode(),
                              cudalab::this_lab().diagnosis_words);
  std::printf("cudalab: %s; seed %llu\n", gpu.describe().c_str(),
              static_cast<unsigned long long>(cudalab::seed()));

  const int failed = session.run();
  // Never pass vacuously: a run in which every check was "not run" is a skip.
  if (failed == 0 && cudalab::checks_run() == 0 && cudalab::checks_not_run() > 0) return 77;
  return failed == 0 ? 0 : 1;
}
