// cudalab: the course's command-line program.
//
//   cudalab test [LAB...]   build the labs from labs/ and run their checks
//   cudalab doctor          what this machine has, and what is missing
//   cudalab selftest        the framework's own tests (meson test)
//   cudalab expect ...      run a test binary against expected verdicts
//
// Normally started through the ./cudalab script at the repository root,
// which installs what is missing and configures the build first.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>

#include "checks.h"
#include "cudalab/manifest.h"
#include "expect.h"
#include "process.h"
#include "report.h"
#include "score.h"

namespace fs = std::filesystem;
using namespace cudalab;

namespace {

// Exit codes (README): 0 all good, 1 checks failed or internal error,
// 2 usage or manifest error, 3 no GPU: built only, GPU checks not run.
constexpr int kOk = 0, kFailed = 1, kUsage = 2, kNoGpu = 3;

const fs::path kSourceRoot = CUDALAB_SOURCE_ROOT;
const fs::path kBuildRoot = CUDALAB_BUILD_ROOT;

std::vector<std::string> all_labs() {
  std::vector<std::string> labs;
  for (const auto& e : fs::directory_iterator(kSourceRoot / "labs"))
    if (e.is_directory() && fs::exists(e.path() / "lab.toml")) labs.push_back(e.path().filename().string());
  std::sort(labs.begin(), labs.end());
  return labs;
}

// Keeps the compiler's error lines and a little context.
std::string trim_build_log(const std::string& log, bool verbose) {
  if (verbose) return log;
  std::istringstream in(log);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::string out;
  int budget = 40;
  for (std::size_t i = 0; i < lines.size() && budget > 0; ++i) {
    if (lines[i].find("error") == std::string::npos && lines[i].find("Error") == std::string::npos) continue;
    for (std::size_t j = i; j < lines.size() && j < i + 4 && budget > 0; ++j, --budget) out += lines[j] + "\n";
    i += 3;
  }
  return out.empty() ? log.substr(log.size() > 4000 ? log.size() - 4000 : 0) : out;
}

bool build_targets(const std::vector<std::string>& targets, bool verbose) {
  ProcessOptions opt;
  opt.argv = {"meson", "compile", "-C", kBuildRoot.string()};
  opt.argv.insert(opt.argv.end(), targets.begin(), targets.end());
  opt.timeout_s = 1800;
  opt.output_cap = 1 << 20;
  fmt::print("building {} ...\n", fmt::join(targets, ", "));
  std::fflush(stdout);
  const ProcessResult p = run_process(opt);
  if (p.ok()) return true;
  fmt::print(stderr, "the build failed ({}):\n{}\n", p.describe(), trim_build_log(p.output, verbose));
  return false;
}

struct GpuProbe {
  bool usable = false;
  std::string line;  // one line: the GPU, or why there is none
  nlohmann::json info;
};

GpuProbe probe_gpu() {
  GpuProbe g;
  const fs::path exe = kBuildRoot / "harness" / "cudalab-gpuinfo";
  if (!fs::exists(exe)) {
    g.line = "not probed: the CUDA parts are not built (no nvcc?)";
    return g;
  }
  ProcessOptions opt;
  opt.argv = {exe.string()};
  opt.timeout_s = 60;
  const ProcessResult p = run_process(opt);
  g.info = nlohmann::json::parse(p.output, nullptr, false);
  if (g.info.is_discarded() || !g.info.is_object()) {
    g.line = "the GPU probe failed: " + p.describe();
    return g;
  }
  g.usable = g.info.value("usable", false);
  g.line = g.usable ? fmt::format("{} (sm_{}, {} SMs, {:.0f} GB/s peak DRAM, {:.0f} MiB L2)",
                                  g.info.value("name", "?"),
                                  [&] { auto cc = g.info.value("compute_capability", "?"); cc.erase(std::remove(cc.begin(), cc.end(), '.'), cc.end()); return cc; }(),
                                  g.info.value("sm_count", 0), g.info.value("peak_dram_gbs", 0.0),
                                  g.info.value("l2_mib", 0.0))
                    : g.info.value("reason", std::string("no usable GPU"));
  return g;
}

int cmd_test(const std::vector<std::string>& labs_arg, const std::vector<std::string>& only,
             const std::string& seed, bool verbose, bool no_build) {
  const std::vector<std::string> labs = labs_arg.empty() ? all_labs() : labs_arg;
  std::vector<LabSpec> specs;
  for (const auto& id : labs) {
    const fs::path toml = kSourceRoot / "labs" / id / "lab.toml";
    if (!fs::exists(toml)) {
      fmt::print(stderr, "cudalab: there is no lab '{}' (labs: {})\n", id, fmt::join(all_labs(), ", "));
      return kUsage;
    }
    try {
      specs.push_back(load_lab(toml));
    } catch (const ManifestError& e) {
      fmt::print(stderr, "cudalab: {}\n", e.what());
      return kUsage;
    }
  }
  if (!no_build) {
    std::vector<std::string> targets;
    for (const auto& id : labs) targets.push_back(id + "-tests");
    targets.push_back("cudalab-gpuinfo");
    if (!build_targets(targets, verbose)) return kFailed;
  }
  const Style style = Style::for_stdout(verbose);
  const GpuProbe gpu = probe_gpu();
  fmt::print("GPU: {}\n", gpu.line);
  if (!gpu.usable) fmt::print("The labs were built; their GPU checks are reported as skipped.\n");

  bool any_failed = false;
  RunContext ctx;
  ctx.seed = seed;
  ctx.work_dir = kBuildRoot / "records";
  ctx.clean_env = false;  // a student's own machine: keep their environment
  for (const auto& lab : specs) {
    ctx.binary = kBuildRoot / "labs" / (lab.id + "-tests");
    ctx.lab_toml = lab.file;
    print_lab_header(style, lab, seed.empty() ? "" : "seed " + seed);
    std::vector<CheckResult> results;
    for (const auto& check : lab.checks) {
      if (!only.empty() && std::find(only.begin(), only.end(), check.id) == only.end()) continue;
      CheckResult r;
      if (!gpu.usable) {
        r.id = check.id, r.name = check.name, r.kind = check.kind, r.verdict = "skipped";
      } else {
        r = run_check(ctx, lab, check);
      }
      results.push_back(r);
    }
    double points = 0, max_points = 0;
    for (const auto& r : results) {
      const CheckSpec& spec = *lab.find_by_id(r.id);
      const CheckScore s = score_check(spec, r, results);
      print_check(style, spec, r, s);
      points += s.points;
      max_points += s.max_points;
      any_failed |= (r.verdict != "pass" && r.verdict != "skipped" && r.verdict != "not_run");
    }
    print_lab_total(style, lab, points, max_points,
                    gpu.usable ? " (on this machine; your grade comes from the course's grader)" : " (GPU checks skipped)");
  }
  if (!gpu.usable) return kNoGpu;
  return any_failed ? kFailed : kOk;
}

int cmd_expect(const fs::path& binary, const fs::path& lab_toml, const fs::path& expect_path) {
  LabSpec lab;
  ExpectFile ex;
  try {
    lab = load_lab(lab_toml);
    ex = load_expect(expect_path);
  } catch (const ManifestError& e) {
    fmt::print(stderr, "cudalab: {}\n", e.what());
    return kUsage;
  }
  RunContext ctx;
  ctx.binary = binary;
  ctx.lab_toml = lab_toml;
  ctx.work_dir = fs::temp_directory_path() / "cudalab-expect";
  fmt::print("{}: {}\n", expect_path.parent_path().filename().string(), ex.description);
  fmt::print("{:<20} {:<9} {:<9} {}\n", "check", "expected", "got", "message");
  for (const auto& e : ex.expectations) {
    if (!lab.find_by_id(e.check_id)) {
      fmt::print(stderr, "cudalab: {}: no check '{}' in {}\n", expect_path.string(), e.check_id, lab_toml.string());
      return kUsage;
    }
  }
  int mismatches = 0, skipped = 0;
  for (const CheckSpec& check : lab.checks) {  // in the lab's order
    const Expectation* expected = ex.find(check.id);
    if (!expected) continue;
    const Expectation& e = *expected;
    const CheckResult r = run_check(ctx, lab, check);
    if (r.verdict == "skipped") {
      ++skipped;
      fmt::print("{:<20} {:<9} {:<9} {}\n", e.check_id, e.verdict, "skipped", r.notes.empty() ? "" : r.notes[0]);
      continue;
    }
    std::string text;
    for (const auto& f : r.failures) text += f + "\n";
    for (const auto& n : r.notes) text += n + "\n";
    const bool ok = r.verdict == e.verdict && (e.says.empty() || contains_phrase(text, e.says));
    mismatches += !ok;
    std::string first = r.failures.empty() ? (r.notes.empty() ? "" : r.notes[0]) : r.failures[0];
    if (auto nl = first.find('\n'); nl != std::string::npos) first = first.substr(0, nl);
    fmt::print("{:<20} {:<9} {:<9} {}{}\n", e.check_id, e.verdict, r.verdict, ok ? "" : "MISMATCH: ", first.substr(0, 160));
    if (!ok) {
      if (!e.says.empty() && !contains_phrase(text, e.says)) fmt::print("    expected the message to say \"{}\"\n", e.says);
      fmt::print("    full message:\n{}\n", text);
      if (!r.output.empty()) fmt::print("    output:\n{}\n", r.output);
    }
  }
  if (skipped == static_cast<int>(ex.expectations.size())) return 77;
  return mismatches ? kFailed : kOk;
}

std::string first_line_of(const std::vector<std::string>& argv) {
  ProcessOptions opt;
  opt.argv = argv;
  opt.timeout_s = 30;
  const ProcessResult p = run_process(opt);
  if (!p.ok()) return {};
  std::string out = p.output;
  std::smatch m;
  if (std::regex_search(out, m, std::regex(R"(release [0-9.]+|[0-9]+\.[0-9]+\.[0-9]+)"))) return m.str();
  return out.substr(0, out.find('\n'));
}

int cmd_doctor() {
  int missing = 0;
  auto row = [&](const std::string& what, const std::string& value, const std::string& fix) {
    if (value.empty()) {
      ++missing;
      fmt::print("  {:<18} MISSING  {}\n", what, fix);
    } else {
      fmt::print("  {:<18} {}\n", what, value);
    }
  };
  fmt::print("cudalab {} (source {}, build {})\n", CUDALAB_VERSION, kSourceRoot.string(), kBuildRoot.string());
  const GpuProbe gpu = probe_gpu();
  fmt::print("GPU\n");
  if (gpu.usable) {
    const auto& i = gpu.info;
    row("device", i.value("name", ""), "");
    row("compute capability", i.value("compute_capability", ""), "");
    row("SMs", std::to_string(i.value("sm_count", 0)), "");
    row("driver / runtime", i.value("driver", "") + " / " + i.value("runtime", ""), "");
    row("peak DRAM", fmt::format("{:.0f} GB/s (2 x {:.0f} MHz x {} bits / 8)", i.value("peak_dram_gbs", 0.0),
                                 i.value("mem_clock_mhz", 0.0), i.value("bus_width_bits", 0)), "");
    row("peak FP32", fmt::format("{:.0f} GFLOP/s", i.value("peak_fp32_gflops", 0.0)), "");
    row("L2", fmt::format("{:.0f} MiB", i.value("l2_mib", 0.0)), "");
    row("shared mem/block", fmt::format("{:.0f} KiB ({:.0f} KiB opt-in)", i.value("smem_per_block_kib", 0.0),
                                        i.value("smem_per_block_optin_kib", 0.0)), "");
  } else {
    fmt::print("  none usable: {}\n  The labs still build; their GPU checks are skipped.\n", gpu.line);
  }
  fmt::print("Tools\n");
  row("nvcc", first_line_of({"nvcc", "--version"}), "install the CUDA toolkit (nvcc 12 or newer; 13 tested)");
  row("meson", first_line_of({"meson", "--version"}), "apt-get install meson (1.0 or newer)");
  row("ninja", first_line_of({"ninja", "--version"}), "apt-get install ninja-build");
  row("Catch2", CUDALAB_CATCH2_VERSION, "apt-get install catch2");
  row("compute-sanitizer", first_line_of({"compute-sanitizer", "--version"}),
      "optional (ships with the CUDA toolkit): for --sanitize");
  row("ncu", first_line_of({"ncu", "--version"}), "optional (Nsight Compute): for memory-access metrics on a GPU");
  return missing ? kFailed : kOk;
}

int cmd_selftest(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"meson", "test", "-C", kBuildRoot.string(), "--print-errorlogs"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  std::fflush(stdout);
  execvp(cargv[0], cargv.data());
  fmt::print(stderr, "cudalab: cannot run meson: {}\n", std::strerror(errno));
  return kFailed;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"cudalab: GPU memory-optimisation labs: build, check, grade"};
  app.require_subcommand(1);

  std::vector<std::string> labs, only;
  std::string seed;
  bool verbose = false, no_build = false;
  auto* test = app.add_subcommand("test", "Build the labs in labs/ and run their checks (all labs if none named)");
  test->add_option("labs", labs, "labs to test, e.g. 03_tiling");
  test->add_option("--check", only, "run only these checks (ids from lab.toml)");
  test->add_option("--seed", seed, "seed for the random inputs");
  test->add_flag("-v,--verbose", verbose, "show every failure and the test output");
  test->add_flag("--no-build", no_build, "do not rebuild first");

  auto* doctor = app.add_subcommand("doctor", "What this machine has for cudalab, and what is missing");

  std::vector<std::string> meson_args;
  auto* selftest = app.add_subcommand("selftest", "The framework's own tests: meson test (unit and GPU suites)");
  selftest->add_option("meson_args", meson_args, "passed to meson test, e.g. --suite unit");
  selftest->allow_extras();

  std::string binary, lab_toml, expect_path;
  auto* expect = app.add_subcommand("expect", "Run a lab test binary and compare its verdicts with an expect.toml");
  expect->add_option("--binary", binary, "the lab test binary")->required();
  expect->add_option("--lab-toml", lab_toml, "the lab's manifest")->required();
  expect->add_option("--expect", expect_path, "the expected verdicts")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kOk : kUsage;
  }
  try {
    if (*test) return cmd_test(labs, only, seed, verbose, no_build);
    if (*doctor) return cmd_doctor();
    if (*selftest) {
      auto extras = selftest->remaining();
      meson_args.insert(meson_args.end(), extras.begin(), extras.end());
      return cmd_selftest(meson_args);
    }
    if (*expect) return cmd_expect(binary, lab_toml, expect_path);
  } catch (const std::exception& e) {
    fmt::print(stderr, "cudalab: internal error: {}\n", e.what());
    return kFailed;
  }
  return kUsage;
}
