// cudalab-gpuinfo: prints what cudalab knows of the GPU as JSON, for
// `cudalab doctor`. Kept out of the cudalab program so that the grader itself
// never touches the GPU. Exit code 77 when there is no usable GPU.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cudalab/gpu.h"

int main() {
  const cudalab::GpuInfo& g = cudalab::gpu();
  nlohmann::json j = {{"usable", g.usable},
                      {"reason", g.reason},
                      {"driver", cudalab::cuda_version_string(g.driver_version)},
                      {"runtime", cudalab::cuda_version_string(g.runtime_version)}};
  if (g.usable) {
    j.update({{"name", g.name},
              {"device_count", g.device_count},
              {"compute_capability", g.compute_capability()},
              {"sm_count", g.sm_count},
              {"shared_by_processes", g.shared_by_processes},
              {"global_mem_gib", g.global_mem_bytes / double(1 << 30)},
              {"l2_mib", g.l2_bytes / double(1 << 20)},
              {"smem_per_block_kib", g.smem_per_block / 1024.0},
              {"smem_per_block_optin_kib", g.smem_per_block_optin / 1024.0},
              {"sm_clock_mhz", g.sm_clock_khz / 1000},
              {"mem_clock_mhz", g.mem_clock_khz / 1000},
              {"bus_width_bits", g.bus_width_bits},
              {"peak_dram_gbs", g.peak_dram_gbs},
              {"peak_fp32_gflops", g.peak_fp32_gflops}});
  }
  std::printf("%s\n", j.dump(2).c_str());
  return g.usable ? 0 : 77;
}
