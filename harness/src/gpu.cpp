#include "cudalab/gpu.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

namespace cudalab {

double peak_dram_gbs(double mem_clock_khz, int bus_width_bits) {
  return 2.0 * mem_clock_khz * 1e3 * bus_width_bits / 8.0 / 1e9;
}

int fp32_lanes_per_sm(int major, int minor) {
  // From the CUDA C++ Programming Guide's table of arithmetic throughput.
  switch (major * 10 + minor) {
    case 75:
      return 64;  // Turing
    case 80:
      return 64;  // A100
    case 86:
    case 87:
    case 89:
      return 128;  // GA10x, Orin, Ada
    case 90:
      return 128;  // H100
    case 100:
    case 101:
    case 103:
    case 110:
    case 120:
    case 121:
      return 128;  // Blackwell
    default:
      return 0;
  }
}

std::string cuda_version_string(int version) {
  return fmt::format("{}.{}", version / 1000, (version % 1000) / 10);
}

std::string GpuInfo::compute_capability() const {
  return fmt::format("{}.{}", cc_major, cc_minor);
}

std::string GpuInfo::describe() const {
  if (!usable) return "no usable GPU: " + reason;
  return fmt::format("{} (sm_{}{}, {} SMs, {:.0f} GB/s peak DRAM, {} MB L2, driver {}, runtime {})", name,
                     cc_major, cc_minor, sm_count, peak_dram_gbs, l2_bytes >> 20,
                     cuda_version_string(driver_version), cuda_version_string(runtime_version));
}

namespace {

GpuInfo probe() {
  GpuInfo info;
  cudaDriverGetVersion(&info.driver_version);
  cudaRuntimeGetVersion(&info.runtime_version);
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  info.device_count = err == cudaSuccess ? count : 0;
  if (err != cudaSuccess || count == 0) {
    switch (err) {
      case cudaSuccess:
      case cudaErrorNoDevice:
        info.reason = "no CUDA device is visible (check nvidia-smi and CUDA_VISIBLE_DEVICES)";
        break;
      case cudaErrorInsufficientDriver:
        info.reason = info.driver_version == 0
                          ? "no NVIDIA driver is installed"
                          : fmt::format("the NVIDIA driver supports CUDA {} but this build needs {}",
                                        cuda_version_string(info.driver_version),
                                        cuda_version_string(info.runtime_version));
        break;
      default:
        info.reason = fmt::format("the CUDA runtime could not start: {}", cudaGetErrorString(err));
    }
    cudaGetLastError();
    return info;
  }
  cudaGetDevice(&info.device);
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, info.device) != cudaSuccess) {
    info.reason = fmt::format("cudaGetDeviceProperties failed: {}", cudaGetErrorString(cudaGetLastError()));
    return info;
  }
  auto attr = [&](cudaDeviceAttr a) {
    int v = 0;
    cudaDeviceGetAttribute(&v, a, info.device);
    return v;
  };
  info.name = prop.name;
  info.cc_major = prop.major;
  info.cc_minor = prop.minor;
  info.sm_count = prop.multiProcessorCount;
  info.shared_by_processes = attr(cudaDevAttrComputeMode) == cudaComputeModeDefault;
  info.global_mem_bytes = prop.totalGlobalMem;
  info.l2_bytes = static_cast<std::size_t>(attr(cudaDevAttrL2CacheSize));
  info.smem_per_block = prop.sharedMemPerBlock;
  info.smem_per_block_optin = static_cast<std::size_t>(attr(cudaDevAttrMaxSharedMemoryPerBlockOptin));
  // CUDA 13 removed the clock fields from cudaDeviceProp; the attributes remain.
  info.sm_clock_khz = attr(cudaDevAttrClockRate);
  info.mem_clock_khz = attr(cudaDevAttrMemoryClockRate);
  info.bus_width_bits = attr(cudaDevAttrGlobalMemoryBusWidth);
  info.peak_dram_gbs = peak_dram_gbs(info.mem_clock_khz, info.bus_width_bits);
  info.peak_fp32_gflops =
      2.0 * fp32_lanes_per_sm(info.cc_major, info.cc_minor) * info.sm_count * info.sm_clock_khz / 1e6;
  info.usable = true;
  return info;
}

}  // namespace

const GpuInfo& gpu() {
  static const GpuInfo info = probe();
  return info;
}

}  // namespace cudalab
