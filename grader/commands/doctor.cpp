// cudalab doctor: what this machine has for cudalab (the GPU, CPU mode, the
// tools, the grader's isolation), and for each missing piece the command that
// installs it.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <sstream>
#include <vector>

#include "commands.h"
#include "common.h"
#include "core/time_limits.h"
#include "course_build.h"
#include "gpu_probe.h"
#include "run/process.h"
#include "run/sandbox.h"

namespace fs = std::filesystem;

namespace cudalab {

namespace {

// The version a tool says it is (`nvcc --version`: "release 13.0"), else the
// first line it prints; "" where it fails.
std::string first_line_of(const std::vector<std::string>& argv) {
  ProcessOptions opt;
  opt.argv = argv;
  opt.timeout_s = kToolVersionLimit_s;
  const ProcessResult p = run_process(opt);
  if (!p.ok()) return {};
  std::string out = p.output;
  std::smatch m;
  if (std::regex_search(out, m, std::regex(R"(release [0-9.]+|[0-9]+\.[0-9]+\.[0-9]+)"))) return m.str();
  return out.substr(0, out.find('\n'));
}

// A program on PATH or next to nvcc (the CUDA toolkit's bin/); "" if none.
std::string find_tool(const std::string& name) {
  if (const char* path = std::getenv("PATH")) {
    std::istringstream in(path);
    for (std::string dir; std::getline(in, dir, ':');)
      if (!dir.empty() && access((fs::path(dir) / name).c_str(), X_OK) == 0)
        return (fs::path(dir) / name).string();
  }
  if (const std::string nvcc = find_nvcc(); !nvcc.empty()) {
    const fs::path p = fs::path(nvcc).parent_path() / name;
    if (access(p.c_str(), X_OK) == 0) return p.string();
  }
  return {};
}

}  // namespace

DoctorCommand::DoctorCommand(CLI::App& app)
    : Command(app, "doctor", "What this machine has for cudalab, and what is missing") {}

int DoctorCommand::run() {
  int missing = 0;
  const std::string sudo = geteuid() == 0 ? "" : "sudo ";
  // A missing required piece counts (exit code 1); an optional one does not.
  auto row = [&](const std::string& what, const std::string& value, const std::string& fix,
                 bool optional = false) {
    if (!value.empty()) {
      fmt::print("  {:<18} {}\n", what, value);
    } else if (optional) {
      fmt::print("  {:<18} not installed (optional)  {}\n", what, fix);
    } else {
      ++missing;
      fmt::print("  {:<18} MISSING  {}\n", what, fix);
    }
  };
  auto version_of = [](const std::string& tool) {
    const std::string path = find_tool(tool);
    return path.empty() ? std::string() : first_line_of({path, "--version"});
  };
  fmt::print("cudalab {} (source {}, build {})\n", CUDALAB_VERSION, kSourceRoot.string(),
             kBuildRoot.string());
  std::fflush(stdout);
  const GpuProbe gpu = probe_gpu(/*build=*/true);  // builds the probe where nvcc is
  fmt::print("GPU\n");
  if (gpu.usable) {
    const auto& i = gpu.info;
    std::string cc = i.value("compute_capability", "");
    std::string sm = cc;
    sm.erase(std::remove(sm.begin(), sm.end(), '.'), sm.end());
    row("device", i.value("name", ""), "");
    row("compute capability", cc.empty() ? "" : fmt::format("{} (sm_{})", cc, sm), "");
    row("SMs", std::to_string(i.value("sm_count", 0)), "");
    row("driver / runtime", i.value("driver", "") + " / " + i.value("runtime", ""), "");
    row("peak DRAM",
        fmt::format("{:.0f} GB/s (2 x {:.0f} MHz x {} bits / 8)", i.value("peak_dram_gbs", 0.0),
                    i.value("mem_clock_mhz", 0.0), i.value("bus_width_bits", 0)),
        "");
    row("peak FP32",
        fmt::format("{:.0f} GFLOP/s (2 x {} SMs x FP32 lanes x {:.0f} MHz)", i.value("peak_fp32_gflops", 0.0),
                    i.value("sm_count", 0), i.value("sm_clock_mhz", 0.0)),
        "");
    row("L2", fmt::format("{:.0f} MiB", i.value("l2_mib", 0.0)), "");
    row("shared mem/block",
        fmt::format("{:.0f} KiB ({:.0f} KiB opt-in)", i.value("smem_per_block_kib", 0.0),
                    i.value("smem_per_block_optin_kib", 0.0)),
        "");
  } else {
    // Why, and what would give one.
    const std::string& why = gpu.line;
    std::string fix;
    if (why.find("no NVIDIA driver") != std::string::npos)
      fix =
          "this machine has no NVIDIA driver: on a machine with an NVIDIA GPU, install its driver "
          "(nvidia-smi must list the GPU)";
    else if (why.find("no CUDA device") != std::string::npos)
      fix = "the driver sees no device: check `nvidia-smi` and CUDA_VISIBLE_DEVICES";
    else if (why.find("no CUDA toolkit") != std::string::npos)
      fix = "install the CUDA toolkit (nvcc, below), then run `cudalab doctor` again";
    else if (why.find("driver") != std::string::npos)
      fix = "the driver is too old for the CUDA runtime, or it failed: update the NVIDIA driver";
    fmt::print("  none usable: {}\n", why);
    if (!fix.empty()) fmt::print("  {}\n", fix);
    fmt::print(
        "  Without a GPU, `./cudalab test` and `./cudalab grade` run the correctness checks in CPU mode "
        "(simulated GPU threads on the CPU);\n  speed checks need a GPU and are not run, so a grade made "
        "here is provisional (exit code 3).\n");
  }
  const std::vector<std::string> labs = all_labs();
  row("CPU mode",
      !labs.empty() && target_exists(labs.front() + "-tests-cpu")
          ? "available (simt: kernels on simulated threads)"
          : "",
      fmt::format("configure the build again: meson setup --reconfigure {}", kBuildRoot.string()));
  fmt::print("Tools\n");
  row("nvcc", version_of("nvcc"),
      "install the CUDA toolkit 12 or newer (13 tested): https://developer.nvidia.com/cuda-downloads, e.g. " +
          sudo + "apt-get install cuda-toolkit from NVIDIA's repository");
  row("meson", version_of("meson"), sudo + "apt-get install meson (1.0 or newer)");
  row("ninja", version_of("ninja"), sudo + "apt-get install ninja-build");
  row("Catch2", CUDALAB_CATCH2_VERSION, sudo + "apt-get install catch2");
  row("compute-sanitizer", version_of("compute-sanitizer"),
      "ships with the CUDA toolkit (" + sudo + "apt-get install cuda-sanitizer-13-0): for --sanitize", true);
  row("ncu", version_of("ncu"),
      "Nsight Compute (" + sudo + "apt-get install cuda-nsight-compute-13-0): memory-access metrics on a GPU",
      true);
  fmt::print("Grading\n");
  // What confines each graded check (cudalab-sandbox --probe).
  const IsolationProbe& isolation = probe_isolation();
  row("isolation", isolation.ok ? isolation.summary : "", isolation.summary);
  if (missing) fmt::print("{} missing: the commands above install them\n", missing);
  return missing ? kFailed : kOk;
}

}  // namespace cudalab
