#include "gpu_probe.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <vector>

#include "common.h"
#include "core/time_limits.h"
#include "course_build.h"
#include "run/meson_project.h"
#include "run/process.h"

namespace fs = std::filesystem;

namespace cudalab {

GpuProbe probe_gpu(bool build) {
  GpuProbe g;
  // The probe is the CUDA half of the harness, minutes of nvcc on a first
  // run, for a line that says there is no driver.
  if (build && !fs::exists(kBuildRoot / "harness" / "cudalab-gpuinfo"))
    if (std::string why = no_gpu_driver(); !why.empty()) {
      g.line = std::move(why);
      return g;
    }
  if (build) {
    if (const std::string why = ensure_gpu_probe(); !why.empty()) {
      g.line = "not probed: " + why;
      return g;
    }
  }
  const fs::path exe = kBuildRoot / "harness" / "cudalab-gpuinfo";
  if (!fs::exists(exe)) {
    g.line = "not probed: the CUDA parts are not built (no nvcc?)";
    return g;
  }
  ProcessOptions opt;
  opt.argv = {exe.string()};
  opt.timeout_s = kGpuProbeLimit_s;
  const ProcessResult p = run_process(opt);
  g.info = nlohmann::json::parse(p.output, nullptr, false);
  if (g.info.is_discarded() || !g.info.is_object()) {
    g.line = "the GPU probe failed: " + p.describe();
    return g;
  }
  g.usable = g.info.value("usable", false);
  g.line =
      g.usable
          ? fmt::format(
                "{} (sm_{}, {} SMs, {:.0f} GB/s peak DRAM, {:.0f} MiB L2)", g.info.value("name", "?"),
                [&] {
                  auto cc = g.info.value("compute_capability", "?");
                  cc.erase(std::remove(cc.begin(), cc.end(), '.'), cc.end());
                  return cc;
                }(),
                g.info.value("sm_count", 0), g.info.value("peak_dram_gbs", 0.0), g.info.value("l2_mib", 0.0))
          : g.info.value("reason", std::string("no usable GPU"));
  return g;
}

std::string ensure_gpu_probe() {
  if (!target_exists("cudalab-gpuinfo")) {
    const std::string nvcc = find_nvcc();
    if (nvcc.empty())
      return "no CUDA toolkit: nvcc is not installed (on PATH or in /usr/local/cuda/bin), so the GPU probe "
             "cannot be built";
    // nvcc came after the build was configured: configure it again, with nvcc on PATH.
    const std::string dir = fs::path(nvcc).parent_path().string();
    const std::string path = std::getenv("PATH") ? std::string(std::getenv("PATH")) : "/usr/bin:/bin";
    setenv("PATH", (dir + ":" + path).c_str(), 1);
    const ProcessResult p = run_process(MesonProject(kBuildRoot).setup(kSourceRoot, {}, true, 600));
    if (!p.ok() || !target_exists("cudalab-gpuinfo"))
      return fmt::format(
          "nvcc is installed ({}) but {} was configured without it and configuring it again failed ({}): run "
          "`meson setup --reconfigure {}`",
          nvcc, kBuildRoot.string(), p.describe(), kBuildRoot.string());
  }
  const MesonProject project(kBuildRoot);
  const std::string probe = "harness/cudalab-gpuinfo";
  const ProcessResult p = run_process(project.build({probe}, {project.output_of(probe, {})}, 1800));
  if (!p.ok())
    return fmt::format("the GPU probe (harness/cudalab-gpuinfo) did not build ({}):\n{}", p.describe(),
                       trim_build_log(p.output, false));
  return {};
}

std::string no_gpu_driver() {
  std::error_code ec;
  for (const char* p : {"/dev/nvidiactl", "/dev/nvidia0", "/proc/driver/nvidia/version", "/dev/dxg"})
    if (fs::exists(p, ec)) return {};
  return "no NVIDIA driver is installed (no /dev/nvidiactl, /proc/driver/nvidia or /dev/dxg)";
}

std::string find_nvcc() {
  if (const char* path = std::getenv("PATH")) {
    std::istringstream in(path);
    for (std::string dir; std::getline(in, dir, ':');)
      if (!dir.empty() && access((fs::path(dir) / "nvcc").c_str(), X_OK) == 0)
        return (fs::path(dir) / "nvcc").string();
  }
  std::vector<fs::path> homes;
  if (const char* home = std::getenv("CUDA_HOME"); home && *home) homes.emplace_back(home);
  homes.emplace_back("/usr/local/cuda");
  for (const auto& h : homes)
    if (access((h / "bin" / "nvcc").c_str(), X_OK) == 0) return (h / "bin" / "nvcc").string();
  return {};
}

}  // namespace cudalab
