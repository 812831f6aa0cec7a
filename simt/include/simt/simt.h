// simt/simt.h: controls and diagnostics of cudalab's CPU mode that are not
// part of the CUDA API (for the harness, the cudalab tool and simt's tests).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vector_types.h"

namespace simt {

// --- schedule: the order in which the fibers of a block run between barriers.
//   inorder       thread 0, 1, 2, ... each runs until its next __syncthreads
//                 (the default: the first thread runs ahead of all others, which
//                 exposes a missing barrier at the first tile that is reused)
//   reverse       the last thread first
//   random:SEED   a new random order after every barrier, and a random order
//                 of the blocks; reproducible from the seed
// Set by CUDALAB_SIMT_SCHEDULE or set_schedule(); a bad spec throws
// std::invalid_argument (the environment variable's: a warning, then inorder).
void set_schedule(const std::string& spec);
std::string schedule();

// What went wrong in the last launch that failed, in words for the student:
// the error, the thread and block, the address and the nearest allocation,
// the source line when the kernel was compiled with -g. Empty if none did.
const std::string& last_error_detail();

// The configuration of the last launch CPU mode ran (or refused) since the
// last call, as the harness describes a GPU launch: "matmul_tiled_kernel<<<grid
// (3, 2, 1), block (16, 16, 1)>>>", then forgotten; "" if none.
std::string take_last_launch();
// The last launch's grid and block (run or refused), as numbers: false if
// none since the process began (or reset_for_tests).
bool last_launch_config(dim3& grid, dim3& block);

// The first __syncthreads() since the last call that some threads of a block
// never reached because they had returned before it while the others waited
// there ("in matmul_tiled_kernel<<<...>>>, 3 of the 256 threads of block
// (1, 0, 0) had returned ... before the __syncthreads() at file:line ..."),
// then forgotten; "" if none.
std::string take_barrier_skip();

// Called at the end of every launch whose grid ran to its end, before
// control returns to the code that launched it; nullptr: none. The harness
// reads its buffers' guard zones there (cudalab/run.h observe_launch): a
// launcher's host code that writes back the bytes its kernel overwrote past
// a buffer then comes too late. Kernels are native code in the launcher's
// process, so this is a barrier against repairs through the CUDA API (device
// memory is closed to host code), not against code that patches the
// harness's own memory.
void set_after_launch(void (*hook)());

// Tests only: forget every error, sticky ones included (a real CUDA process
// would have to exit).
void reset_errors_for_tests();

// Tests only: forget what launches left behind, as in a fresh process: every
// error (as reset_errors_for_tests), the reports above (take_last_launch,
// take_barrier_skip), the warnings already given (they are given again), and
// the schedule (back to CUDALAB_SIMT_SCHEDULE, or inorder). Device memory
// and the access report stay. Not inside a kernel (std::logic_error).
void reset_for_tests();

// "file:line" for a code address, from the debug information (addr2line);
// "" when there is none.
std::string describe_code_address(const void* pc);

}  // namespace simt

// --- the access report (a TU compiled with simt's access-report flags; see
// simt/README.md). Per source line of a kernel, the memory requests of the
// warps of 32 consecutive threads: 32-byte sectors of global memory, bank
// conflicts of shared memory (32 banks of 4 bytes), counted as Nsight Compute
// counts them.
namespace simt::access {

struct LineStats {
  std::string file;  // as the debug information names it
  int line = 0;
  std::string function;  // the kernel launched, as the launch wrote it (e.g. "transpose<32>")
  std::string space;     // "global" or "shared"
  bool store = false;
  int bytes = 0;                   // bytes per thread of the widest access on the line
  long long requests = 0;          // warp-level instructions executed
  long long threads = 0;           // thread-level accesses (active lanes summed)
  long long sectors = 0;           // global: 32-byte sectors touched
  long long ideal_sectors = 0;     // global: sectors the bytes could have fitted in
  long long wavefronts = 0;        // shared: passes through the banks
  long long ideal_wavefronts = 0;  // shared: passes with no conflict
  // An atomic (atomicAdd, ...: its read-modify-write counted once, at the
  // line that called it; `store` is false), and per request the most lanes
  // that named one address, summed: a warp's atomics on one address run one
  // after another, so lanes_per_address() is their contention (32: every lane
  // adds to one counter; 1: each to its own, as privatised bins do).
  bool atomic = false;
  long long same_address = 0;
  double lanes_per_address() const { return requests ? double(same_address) / requests : 0; }
  long long conflicts() const { return wavefronts - ideal_wavefronts; }
  double sectors_per_request() const { return requests ? double(sectors) / requests : 0; }
  double ideal_sectors_per_request() const { return requests ? double(ideal_sectors) / requests : 0; }
  double conflicts_per_request() const { return requests ? double(conflicts()) / requests : 0; }
};

// Recording: on from the start when CUDALAB_SIMT_ACCESS_REPORT is set (to a
// file, "-" for stderr; a name ending in .json gets JSON), where the report is
// written at exit.
void enable(bool on);
bool enabled();
// Blocks recorded per launch (the first ones; 0: all). Default 64, or
// CUDALAB_SIMT_ACCESS_BLOCKS.
void set_blocks_per_launch(long long blocks);
void reset();
// What was recorded so far, per source line, in file and line order.
std::vector<LineStats> collect();
std::string format_text(const std::vector<LineStats>& lines);
std::string format_json(const std::vector<LineStats>& lines);

}  // namespace simt::access
