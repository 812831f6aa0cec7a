// grader/commands/gpu_probe.h: the GPU this machine has, as the course's
// probe (harness/cudalab-gpuinfo, built with nvcc) reports it, for `cudalab
// test`, `grade` and `doctor`.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace cudalab {

struct GpuProbe {
  bool usable = false;
  std::string line;  // one line: the GPU, or why there is none
  nlohmann::json info;
};

// probe_gpu(true) builds the probe first where it can (ensure_gpu_probe),
// and where no NVIDIA driver is (no_gpu_driver) a probe not built yet is not
// built: the line says so.
GpuProbe probe_gpu(bool build = false);

// Builds the GPU probe (harness/cudalab-gpuinfo) where it is missing or
// stale: the ./cudalab script builds only the program. A build configured
// before nvcc was installed is configured again. "" when the probe is there,
// else why not.
std::string ensure_gpu_probe();

// Why no GPU can be usable here, known without the probe: no NVIDIA driver
// (none of its device nodes, /proc/driver/nvidia, or WSL's /dev/dxg); ""
// where there may be one, and only the probe can tell.
std::string no_gpu_driver();

// nvcc on PATH, or where the CUDA toolkit installs it; "" if none.
std::string find_nvcc();

}  // namespace cudalab
