// simt/src/internal.h: what simt's source files share.
#pragma once

#define SIMT_RUNTIME_INTERNAL 1

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "simt/launch.h"

// True while a recorded block's fiber runs: the access callbacks' fast path.
extern "C" int simt_access_active;

namespace simt::detail {

// --- error state (errors.cpp)
// Records a failed call's error as CUDA does (cudaGetLastError returns it once).
cudaError_t fail(cudaError_t e);
// Execution errors surface at the next synchronising call, then stick.
void set_pending(cudaError_t e, const std::string& detail);
// Called on entry of every API call except the error queries: turns a
// pending execution error into the sticky one. Returns the sticky error.
cudaError_t sync_point();
cudaError_t sticky();
void set_detail(const std::string& detail);

// --- memory (memory.cpp)
enum class Space : std::uint8_t { none, global, shared };
struct Allocation {
  std::uintptr_t base = 0;
  std::size_t bytes = 0;
  int kind = 0;  // 0 device, 1 managed, 2 pinned host
};
// The allocation holding addr, or nullptr (not thread-safe; simt runs on one thread).
const Allocation* find_allocation(std::uintptr_t addr);
// Text for a fault message: where addr lies relative to the nearest allocation.
std::string describe_address(std::uintptr_t addr);
// cudaMalloc'd memory is inaccessible to host code, as on a GPU: it opens
// only while a kernel runs or the runtime copies. Nestable; opens every
// device allocation on the way in and closes them on the way out.
struct DeviceAccess {
  DeviceAccess();
  ~DeviceAccess();
  DeviceAccess(const DeviceAccess&) = delete;
  DeviceAccess& operator=(const DeviceAccess&) = delete;
};

// --- shared memory (scheduler.cpp; the running launch's, launch_state.h)
struct SharedRange {
  std::uintptr_t lo = 0, hi = 0;
};

// --- scheduler <-> access recorder (access.cpp)
void access_begin_launch(const Site& site, const Config& cfg);
bool access_record_block(long long block_linear);  // whether to record this block
void access_begin_block(unsigned threads);
void access_set_thread(unsigned linear_tid);
void access_barrier();  // all threads passed a barrier: close the open requests
void access_end_block();
void access_write_report_at_exit();

// Code address -> object file and the address addr2line wants.
struct CodeLocation {
  std::string object;
  std::uintptr_t offset = 0;
};
CodeLocation locate_code(std::uintptr_t pc);

}  // namespace simt::detail
