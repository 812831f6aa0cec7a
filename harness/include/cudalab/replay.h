// cudalab/replay.h: speed measured where no student host code runs.
//
// A graded speed check takes two processes. The student's test binary runs
// the check up to its timing, calls the student's launcher once and writes
// down the kernel launches it made (the trace: kernel names, configurations,
// parameter bytes, and which parameter words point into which of the timed
// buffers), then ends the check. The reference build of the same test binary,
// which runs no student host code, then runs the check again with the
// student's compiled kernels loaded from the submission's objects (their
// .nv_fatbin sections) and times the trace's launches, replayed on its own
// buffers, against the reference side by side (cudalab/timing.h: fresh
// inputs every round, every output verified, the physical limit). Only that
// process's record counts: whatever the student's process writes, forged or
// not, can end the check early but never sets a time or a ratio.
//
// The trace is untrusted input: it only names kernels of the student's own
// objects, its parameters must match the loaded kernel's, and pointers are
// rewritten only into the replaying process's timed buffers. A trace that
// leaves out work (a cudaMemcpy, a host computation) times fast and verifies
// wrong: the replay computes only what the kernels compute.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace cudalab::replay {

// One pointer inside a parameter: the 8 bytes at `offset` of the parameter
// are `delta` bytes past the start of timed buffer `buffer` (the timing's
// inputs in order, then its outputs' student buffers).
struct Relocation {
  std::size_t param = 0, offset = 0;
  std::size_t buffer = 0;
  std::uint64_t delta = 0;
};

struct Launch {
  std::string kernel;  // the mangled name, as in the student's object
  unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
  std::size_t shared_bytes = 0;
  std::vector<std::string> params;  // raw bytes each
  std::vector<Relocation> relocations;
};

struct Trace {
  std::vector<Launch> launches;
  std::vector<std::uint64_t> buffer_bytes;  // the sizes the student's process timed
};

// Memory checks: the launches of every call of the launcher that a Run
// made (cudalab/run.h), one Trace per call, in order. Its buffers are the
// Run's whole allocations (guard zones included), in the order the Run made
// them, so that a pointer into a guard zone is replayed into the replaying
// process's guard zone.
//
// The student's process (--trace-fd, in a correctness check) runs the check
// as always and writes down each call of Run::launch; the reference build
// (--replay-fd and --replay-code-fd) runs the same check with the k-th call's
// launches, replayed on its own guarded buffers, in place of the k-th
// Run::launch, and writes the evidence a student's run writes. The memory
// check is judged on that evidence: the guard zones, the inputs and the
// outputs as the kernels left them in a process that runs none of the
// student's host code, so that no host code can put back what a kernel
// overwrote (grader/core/judged.h judge_memory_replay).
std::string calls_to_json(const std::vector<Trace>& calls);
bool calls_from_json(const std::string& text, std::vector<Trace>& calls, std::string& error);
// At most this many calls of a launcher in one check.
inline constexpr std::size_t kMaxCalls = 64;

// Set by the GPU build (replay_gpu.cpp); Run::launch calls it in a traced or
// replayed correctness check with its buffers' allocations. It wraps
// `launcher` (trace: the call's launches are written down) or replaces it
// (replay: the traced launches of the next call).
using LauncherHook = void (*)(const std::vector<std::pair<std::uint64_t, std::uint64_t>>& buffers,
                              std::function<void()>& launcher);
LauncherHook& launcher_hook();

// Limits on what a trace may hold (it comes from the student's process).
inline constexpr std::size_t kMaxLaunches = 4096, kMaxParams = 64, kMaxParamBytes = 4096;

std::string to_json(const Trace& trace);
// Parses and checks a trace: sizes within the limits, relocations inside
// their parameter and buffer. False with a reason otherwise.
bool from_json(const std::string& text, Trace& trace, std::string& error);

// The relocations of one parameter: every 8-byte-aligned word whose value
// lies in [base, base + bytes] of a buffer (one past the end included).
std::vector<Relocation> find_pointers(const std::string& param, std::size_t param_index,
                                      const std::vector<std::pair<std::uint64_t, std::uint64_t>>& buffers);

// The bytes of section `name` of an ELF64 object; false with a reason.
bool elf_section(const std::string& object, const std::string& name, std::string& out, std::string& error);

// Several pieces of device code in one stream of bytes: (8-byte little-endian
// length, bytes) each.
std::string pack(const std::vector<std::string>& pieces);
bool unpack(const std::string& packed, std::vector<std::string>& pieces, std::string& error);

// What the test process does for the check's student timing. Set by the
// test main from --trace-fd (the student's process: trace, do not time) or
// --replay-fd and --replay-code-fd (the reference build: time the trace).
enum class Mode { off, trace, replay };
Mode mode();
void set_trace(int fd);
void set_replay(int trace_fd, int code_fd);
// True in the grader's two runs of a speed check (trace or replay): the
// replay's timing verifies every timed output against the reference's, so a
// lab's own check of the output before its timing is left out there (it
// would cost a large launch and its expected values twice, and decide nothing).
bool graded_timing();
int trace_fd();
int replay_trace_fd();
int replay_code_fd();

// GPU builds (replay_gpu.cpp): launch_wrap.cpp reports every launch here;
// kept only while a trace is being taken. func: a host stub or a cudaKernel_t.
void record_launch(const void* func, const unsigned grid[3], const unsigned block[3],
                   std::size_t shared_bytes, void** args);

// Reads a whole descriptor from its start; false on an error.
bool read_fd(int fd, std::string& out);
bool write_fd(int fd, const std::string& text);

}  // namespace cudalab::replay
