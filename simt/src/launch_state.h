// simt/src/launch_state.h: the state of a kernel launch, in one object.
//
// launch_erased() (scheduler.cpp) resets the LaunchState at the start of
// every launch (LaunchState::reset), so nothing of one launch (its fibers, a
// barrier half reached, a fault, the signal handlers it replaced) can reach
// the next; simt::reset_for_tests() resets it too. Code that runs inside the
// launch and cannot be handed it (__syncthreads, __trap, assert, __shared__
// storage, the signal handler, the access recorder) finds it through
// current_launch(), or g_launch where it runs for every barrier.
//
// One object at a fixed address, not one per launch: __syncthreads() (100
// million calls in a 1000^3 tiled matmul) reaches it as it reached the
// globals it replaced, where a pointer to an object of each launch costs a
// load and a saved register at every barrier.
//
// The exceptions: threadIdx, blockIdx, blockDim and gridDim stay plain
// variables (scheduler.cpp). The kernels, compiled in other translation
// units, read them as `threadIdx.x` on every use, and the scheduler writes
// them before it resumes each fiber: they are the running fiber's registers,
// which no launch can inherit from another. So is simt_access_active
// (internal.h), which every instrumented load and store reads first.
//
// What outlives a launch lives elsewhere, each in an object that says why:
// the schedule, the mapped fiber stacks and shared memory, and the reports
// the harness takes after a launch (scheduler.cpp, Scheduler); device memory
// (memory.cpp, DeviceMemory); the CUDA error state (errors.cpp, ErrorState);
// the access report's totals (access.cpp, AccessTotals).
#pragma once

#include <setjmp.h>
#include <signal.h>

#include <cstdint>
#include <string>
#include <vector>

#include "internal.h"
#include "simt/device.h"

namespace simt::detail {

enum class FiberState : std::uint8_t { ready, barrier, done };

// Laid out in 40 bytes: the scheduler walks the fibers at every barrier.
struct Fiber {
  void* ctx = nullptr;  // where to resume it (an fcontext)
  uint3 tid{};
  FiberState state = FiberState::ready;
  // The __syncthreads() it waits at: the call's place in the source, which
  // its macro passes (simt/device.h). It tells one barrier from another
  // without debug information (a confined check cannot run addr2line), and
  // stays the same where the compiler copies the call. A call without the
  // macro gets one of its own, by return address (scheduler.cpp).
  const simt::SyncSite* site = nullptr;
  int predicate = 0;    // given to __syncthreads_count/_and/_or
  unsigned passed = 0;  // once it returned: the barriers of its block it passed
};
static_assert(sizeof(void*) != 8 || sizeof(Fiber) == 40, "a Fiber grew: the barriers walk every one");

// What stops a launch: a signal in a fiber, a trap, an assert, an exception,
// a store past the shared memory.
struct Fault {
  cudaError_t error = cudaSuccess;
  std::string what;  // composed outside signal handlers
  // Filled by the signal handler (no allocation there).
  int sig = 0;
  std::uintptr_t addr = 0, pc = 0;
  bool write = false, known_rw = false, no_address = false;
  uint3 thread{}, block{};
  bool whole_block = false;  // `what` is about the block's threads, not `thread`'s
};

// The barriers of the running block. Every thread that has not returned
// waits at each barrier that opens, so a thread that returned after `passed`
// barriers took part in the first `passed` rounds.
struct BlockBarriers {
  // At the last barrier that opened: the threads whose predicate was not 0
  // (__syncthreads_count) and the threads that waited there.
  int count = 0, arrived = 0;
  unsigned rounds = 0;       // barriers opened so far
  unsigned most_passed = 0;  // the most barriers a thread that returned had passed
  // Each __syncthreads() that opened, and the first round it opened in (0
  // for the block's first barrier).
  struct Opened {
    const simt::SyncSite* site;
    unsigned round;
  };
  std::vector<Opened> opened;
};

struct LaunchState {
  // What was launched.
  const Site* site = nullptr;
  Config cfg;
  const void* kernel_key = nullptr;  // keys the kernel's shared memory and cudaFuncSetAttribute limits
  ThreadBody body = nullptr;
  void* closure = nullptr;
  unsigned threads = 0;  // per block
  // Where this launch's shared memory lies (the access recorder's "shared").
  SharedRange static_shared;   // the arena of static __shared__ variables (used part)
  SharedRange dynamic_shared;  // this launch's dynamic shared memory

  // The running block: a fiber per thread, resumed in `order`.
  std::vector<Fiber> fibers;
  std::vector<unsigned> order;
  unsigned current = 0;           // the fiber running now
  void* scheduler_ctx = nullptr;  // where a fiber returns to (an fcontext)
  bool in_fiber = false;          // a fiber runs (not the scheduler)
  BlockBarriers barriers;

  // Stopping: the fault, where the signal handler jumps back to, and the
  // handlers the launch replaced while it runs.
  Fault fault;
  sigjmp_buf abort;
  struct sigaction old_actions[4];
  stack_t old_altstack{};
  std::string refused;  // why the first block showed the launch cannot run (too much shared memory)

  bool running = false;  // from the launch's first block to its end

  // Forgets everything of the last launch.
  void reset() { *this = LaunchState{}; }
};

// The launch that runs, or ran last (scheduler.cpp).
// Hidden: code in the library reaches it at a fixed offset from the
// instruction, as it reached the globals it replaced.
extern LaunchState g_launch __attribute__((visibility("hidden")));

// The running launch; nullptr outside a launch.
inline LaunchState* current_launch() {
  return g_launch.running ? &g_launch : nullptr;
}

}  // namespace simt::detail
