// cudalab/run.h: one run of a student's launcher on guarded buffers.
//
//   cudalab::Run run("matmul_tiled", "M=513 N=257 K=129");
//   float* A = run.input("A", a);        // uploaded; checked unchanged after
//   float* C = run.output("C", M * N);   // poisoned before the launch
//   auto launched = run.launch([&] { matmul_tiled(A, B, C, M, N, K); });
//   std::vector<float> c = run.result("C");
//   std::vector<std::string> problems = run.memory_problems();
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <string>
#include <vector>

#include "cudalab/buffer.h"
#include "cudalab/compare.h"

namespace cudalab {

struct LaunchOutcome {
  bool ok = true;
  bool not_implemented = false;
  bool context_lost = false;  // a sticky error: no further GPU work in this process
  cudaError_t error = cudaSuccess;
  std::string message;  // for the student: what failed, where, the likely cause
};

// A kernel launch the process made (GPU builds: every cudaLaunchKernel goes
// through the harness, linked with --wrap; CPU mode: simt names the
// configuration in its own messages).
struct LaunchSeen {
  const void* kernel = nullptr;  // the host stub
  dim3 grid, block;
  std::size_t shared_bytes = 0;
  cudaError_t result = cudaSuccess;
};
// The launches since the last clear (run_launcher clears it before each launcher).
std::vector<LaunchSeen>& launches_seen();
// "matmul_tiled_kernel<<<grid (0, 64, 1), block (16, 16, 1)>>>"
std::string describe_launch(const LaunchSeen& l);
// Names a kernel by its host stub (set by the GPU build; "" otherwise).
std::string (*&launch_kernel_namer())(const void*);
// The cause of a launch error that this configuration explains (a grid
// dimension of 0, a block of more than 1024 threads...), or "". Host-only.
std::string configuration_problem(const LaunchSeen& l);

// Memory safety judged before the launcher's host code can repair it: while
// Run::launch runs a launcher, the guard zones of the Run's buffers are read
// after every kernel launch, before control returns to the launcher (GPU
// builds: launch_wrap.cpp, once the launch's stream has finished it; CPU
// mode: simt, at the end of each simulated launch), and whatever damage is
// seen there stays (GuardedBuffer::keep_guard_damage). A launcher that saves
// the bytes past C and writes them back after its kernel is then judged as
// its twin without the copy. observing_launches: whether a Run is watching.
// What this does not reach (the test process runs the student's native code,
// so what it records stays a Claim): launches that bypass the runtime's
// launch calls (a CUDA graph, the driver API), a kernel that puts the bytes
// back itself, and host code that patches the harness's memory. A memory
// check's inputs are read after each launch too. On a GPU the grader judges
// the memory check where no host code of the student's runs: the check's
// traced launches replayed on guarded buffers in the reference build
// (cudalab/replay.h), as the speed checks are.
bool observing_launches();
void observe_launch() noexcept;
// The running check is a memory check (lab.toml judge = "memory"; the test
// main sets it per check): its Runs read their inputs after each launch too.
void set_memory_check(bool on);

// Calls a launcher, then checks for launch errors (cudaGetLastError) and
// execution errors (cudaDeviceSynchronize). Exceptions from the launcher
// (CUDALAB_TODO, CUDA_CHECK, anything else) become a failed outcome.
LaunchOutcome run_launcher(const std::string& what, const std::function<void()>& launcher);

// Advice for a CUDA error seen at launch or during execution. Host-only.
std::string advice_for(cudaError_t error);

// True for errors that leave the CUDA context unusable (illegal address...).
bool is_sticky(cudaError_t error);

// Set once a sticky error happened in this process; later runs refuse to start.
bool context_lost();
const std::string& context_lost_reason();

class Run {
 public:
  Run(std::string launcher, std::string shape);

  float* input(const std::string& name, const std::vector<float>& data);
  float* output(const std::string& name, std::size_t count);
  LaunchOutcome launch(const std::function<void()>& launcher);
  std::vector<float> result(const std::string& name) const;
  // Runs the last launcher again on the same inputs (restored, outputs
  // poisoned) and counts the elements of `name` that differ, bit for bit,
  // from its first result: more than 0 means a race. -1 if it could not run.
  long long rerun_changed(const std::string& name);
  // Where every element of output `name` came back unwritten or NaN (c, its
  // comparison with `expected`): runs the last launcher once more with that
  // output filled with 0 instead of the poison, and tells the diagnosis when
  // the result is then right, i.e. the kernel adds to the output (C[i] +=)
  // instead of storing into it. Returns whether it did (once per check; later
  // calls of the same check return what that probe found).
  bool check_accumulates(const Comparison& c, const std::vector<double>& expected,
                         const Tolerance& tolerance);
  // Where output `name` lacks whole last rows or columns (c): runs
  // `reference` (the reference solution's launcher, writing into the scratch
  // buffer it is given, on this run's inputs) once, and tells the diagnosis
  // its launch, which says whether the student's grid is short or a bound
  // stops threads that ran. Words only: its output is never judged.
  void note_reference_launch(const Comparison& c, const std::function<void(float* out)>& reference);
  // Guard zones written and inputs changed, as messages for the student.
  // The zones judged hold the damage seen after any launch of the launcher
  // too (observe_launch), not only what is left after it returned.
  std::vector<std::string> memory_problems() const;
  // Reads every buffer's guard zones now and keeps their damage
  // (observe_launch, after each launch of Run::launch's launcher).
  void keep_guard_damage() noexcept;

  const std::string& launcher() const { return launcher_; }
  const std::string& shape() const { return shape_; }

 private:
  const GuardedBuffer& find(const std::string& name) const;

  std::string launcher_, shape_;
  std::vector<GuardedBuffer> buffers_;
  std::vector<std::vector<float>> originals_;  // per buffer; empty for outputs
  // A memory check's inputs as a launch of its launcher left them, where
  // they differed from the originals (per buffer; empty: none seen): a
  // launcher that writes an input back after its kernel changed it is judged
  // as its kernel left it.
  bool watch_inputs_ = false;
  std::vector<std::vector<float>> changed_seen_;
  std::function<void()> last_launcher_;
};

}  // namespace cudalab
