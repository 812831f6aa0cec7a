// grader/run/process.h: runs a command in its own process group with a wall-clock
// timeout and a cap on what it prints. A hung kernel, a crash or a printf
// flood costs only that command: on timeout the whole group is killed.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cudalab {

struct ProcessOptions {
  std::vector<std::string> argv;        // argv[0] is looked up in PATH if it has no '/'
  std::string cwd;                      // empty: the current directory
  double timeout_s = 0;                 // 0: none
  std::size_t output_cap = 256 * 1024;  // bytes kept: the first and last halves
  // If set, the child's whole environment; otherwise it inherits ours.
  std::optional<std::map<std::string, std::string>> env;
  // Added to the child's nice value: builds that overlap a timed check run
  // at a lower priority, so the check's host thread gets a core at once.
  int niceness = 0;
  // Open descriptors the child gets: (ours, its number). The record and the
  // evidence of a check travel this way, never as paths.
  std::vector<std::pair<int, int>> pass_fds;
  // > 0: the most memory each process of the command may allocate
  // (RLIMIT_DATA, inherited by everything it starts: a build's every
  // compiler). A hostile file can make a compiler grow without end.
  std::uint64_t memory_limit_bytes = 0;
  // Called with the output as it comes, on the caller's thread (a build's
  // progress reads ninja's status lines); ProcessResult::output still has it.
  std::function<void(std::string_view)> on_output;
};

struct ProcessResult {
  bool started = false;
  int exit_code = -1;  // when it exited normally
  int signal = 0;      // when a signal ended it
  bool timed_out = false;
  std::string output;            // stdout and stderr together, capped
  std::size_t output_bytes = 0;  // what it printed in all
  double seconds = 0;
  std::string error;  // why it could not start

  bool ok() const { return started && !timed_out && signal == 0 && exit_code == 0; }
  // "exit code 1", "killed by SIGSEGV (segmentation fault)", "timed out after 60 s"
  std::string describe() const;
};

ProcessResult run_process(const ProcessOptions& options);

// Whether a command run with a memory limit died of it, as its output says
// (a compiler reports a failed allocation; none is killed by the limit).
bool ran_out_of_memory(const ProcessOptions& options, const ProcessResult& result);
// "the build ran out of its 8 GiB memory limit"
std::string describe_memory_limit(const std::string& what, std::uint64_t bytes);

// The environment variables a check needs and nothing else (PATH, HOME,
// LANG, CUDA_VISIBLE_DEVICES...): nothing the grader knows leaks to students.
std::map<std::string, std::string> minimal_environment();

// GLIBC_TUNABLES as given (the user's own, "" for none) with malloc's huge
// pages added, unless it chooses them already: what a check runs with.
std::string with_huge_pages(const std::string& tunables);

// "SIGSEGV (segmentation fault)"
std::string signal_name(int sig);

}  // namespace cudalab
