// cudalab/gpu.h: which GPU this process runs on, and what it can do.
#pragma once

#include <cstddef>
#include <string>

namespace cudalab {

struct GpuInfo {
  bool usable = false;
  std::string reason;  // why not usable: no driver, no device, driver too old

  int device = 0;
  int device_count = 0;  // every device the runtime sees (CUDA_VISIBLE_DEVICES applies)
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  std::size_t global_mem_bytes = 0;
  std::size_t l2_bytes = 0;
  std::size_t smem_per_block = 0;        // default limit per block
  std::size_t smem_per_block_optin = 0;  // with cudaFuncSetAttribute
  double sm_clock_khz = 0;
  double mem_clock_khz = 0;
  int bus_width_bits = 0;
  double peak_dram_gbs = 0;                     // 2 x memory clock x bus width / 8
  double peak_fp32_gflops = 0;                  // FP32 lanes x SMs x 2 (FMA) x SM clock; 0 if unknown
  int driver_version = 0, runtime_version = 0;  // e.g. 13000
  // Several processes may use the GPU at once (compute mode Default; not
  // Exclusive Process, which some clusters set, nor Prohibited).
  bool shared_by_processes = false;

  std::string compute_capability() const;  // "9.0"
  std::string describe() const;            // one line for reports
};

// Probes the GPU once per process (device 0, or CUDA_VISIBLE_DEVICES's first).
const GpuInfo& gpu();

// 2 x memory clock (kHz) x bus width (bits) / 8, in GB/s (10^9 B/s).
double peak_dram_gbs(double mem_clock_khz, int bus_width_bits);

// FP32 lanes per SM for a compute capability; 0 when unknown.
int fp32_lanes_per_sm(int cc_major, int cc_minor);

// "13.0" from 13000.
std::string cuda_version_string(int version);

}  // namespace cudalab
