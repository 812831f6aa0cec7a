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

// --- fills (memory.cpp): what a kernel finds where nothing was written.
// Quiet NaNs whose payloads say where they came from (x86 arithmetic keeps
// a NaN operand's payload): a NaN computed from the slack past an allocation,
// or from shared memory no thread wrote, is neither the harness's output fill
// (0xFFFFFFFF: "never written") nor each other. The harness recognises these
// words (harness/include/cudalab/buffer.h kDeviceSlackNan, kSharedPoisonNan).
inline constexpr std::uint32_t kSlackWord = 0x7FF4D1A0u;
inline constexpr std::uint32_t kSharedPoisonWord = 0x7FF2A5A5u;
// The byte of `word` that lies at address `at` when the word is repeated at
// every 4-byte-aligned address (little-endian, as x86 and the GPU).
inline unsigned char word_byte(const void* at, std::uint32_t word) {
  return static_cast<unsigned char>(word >> (8 * (reinterpret_cast<std::uintptr_t>(at) & 3)));
}
// Fills [at, at + bytes) with `word` repeated at aligned addresses.
void fill_word(void* at, std::size_t bytes, std::uint32_t word);

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
