#include "cudalab/run.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>

#include "cudalab/check.h"
#include "cudalab/diagnosis.h"
#include "cudalab/evidence.h"
#include "cudalab/lab.cuh"
#include "cudalab/parallel.h"
#include "cudalab/replay.h"
#include "cudalab/testing.h"
#if defined(CUDALAB_CPU_MODE) && CUDALAB_CPU_MODE
#include "simt/simt.h"
#endif

namespace cudalab {

namespace {

#if defined(CUDALAB_CPU_MODE) && CUDALAB_CPU_MODE
constexpr bool cudalab_cpu_build = true;
#else
constexpr bool cudalab_cpu_build = false;
#endif

std::string& lost_reason() {
  static std::string reason;
  return reason;
}

std::string error_label(cudaError_t e) {
  return fmt::format("{} ({})", cudaGetErrorString(e), cudaGetErrorName(e));
}

// The Run whose launcher is running (Run::launch), whose guard zones are read
// after each of its launches (observe_launch).
Run*& observed_run() {
  static Run* run = nullptr;
  return run;
}

// Whether the running check is a memory check (set_memory_check).
bool& judging_memory() {
  static bool memory = false;
  return memory;
}

// The last launch of the last launcher run, as describe_launch says it.
std::string& last_described_launch() {
  static std::string launch;
  return launch;
}

}  // namespace

bool is_sticky(cudaError_t e) {
  switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorMisalignedAddress:
    case cudaErrorAssert:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
      return true;
    default:
      return false;
  }
}

std::string advice_for(cudaError_t e) {
  switch (e) {
    case cudaErrorInvalidConfiguration:
      return "the launch configuration is impossible: a block of more than 1024 threads, a grid "
             "or block dimension of 0, or more shared memory than a block may have. Check the "
             "block size and the grid computation (ceiling division)";
    case cudaErrorInvalidValue:
      return "an argument is invalid; at a kernel launch this is usually a grid dimension of 0 "
             "(the grid was computed by floor division, e.g. N / 16, for a size smaller than the "
             "block) or a block of more than 1024 threads";
    case cudaErrorLaunchOutOfResources:
      return "the block needs more registers or shared memory than an SM can give it: use fewer "
             "threads per block";
    case cudaErrorIllegalAddress:
    case cudaErrorInvalidAddressSpace:
      return "a thread read or wrote outside the buffers: most often a missing boundary check "
             "(threads past the edge of the data) or rows and columns mixed up in an index. "
             "`./cudalab test --sanitize=memcheck` names the line";
    case cudaErrorMisalignedAddress:
      return "a load or store was not aligned to its size, e.g. a float4 access at an address "
             "that is not a multiple of 16 bytes";
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorInvalidPc:
      return "the kernel crashed on the GPU; an out-of-bounds access is the usual cause";
    case cudaErrorAssert:
      return "an assert() in device code failed";
    case cudaErrorLaunchTimeout:
      return "the kernel ran too long and was stopped: an endless loop?";
    case cudaErrorInvalidDeviceFunction:
    case cudaErrorNoKernelImageForDevice:
      return "the build has no code for this GPU's architecture: reconfigure with "
             "-Dgpu_arch=auto on this machine";
    case cudaErrorMemoryAllocation:
      return "the GPU is out of memory: was a size in bytes mixed up with a count of elements?";
    default:
      return "see the CUDA documentation for this error";
  }
}

std::vector<LaunchSeen>& launches_seen() {
  static std::vector<LaunchSeen> seen;
  return seen;
}

std::string (*&launch_kernel_namer())(const void*) {
  static std::string (*namer)(const void*) = nullptr;
  return namer;
}

std::string describe_launch(const LaunchSeen& l) {
  std::string name = l.kernel && launch_kernel_namer() ? launch_kernel_namer()(l.kernel) : "";
  std::string s = fmt::format("{}<<<grid ({}, {}, {}), block ({}, {}, {})", name.empty() ? "kernel" : name,
                              l.grid.x, l.grid.y, l.grid.z, l.block.x, l.block.y, l.block.z);
  if (l.shared_bytes) s += fmt::format(", {} bytes of shared memory", l.shared_bytes);
  return s + ">>>";
}

namespace {

// The cause a failed launch's values and error name (vocabulary.h), read
// from the numbers, as configuration_problem words them.
Cause launch_cause(const LaunchSeen* l, cudaError_t e) {
  if (e == cudaErrorIllegalAddress) return Cause::illegal_address;
  if (!l) return Cause::launch_fails;
  const dim3 g = l->grid, b = l->block;
  if (g.x == 0 || g.y == 0 || g.z == 0) return Cause::empty_grid;
  if (b.x == 0 || b.y == 0 || b.z == 0 || 1ULL * b.x * b.y * b.z > 1024 || b.z > 64)
    return Cause::block_too_large;
  return Cause::launch_fails;
}

}  // namespace

std::string configuration_problem(const LaunchSeen& l) {
  const dim3 g = l.grid, b = l.block;
  const unsigned long long threads = 1ULL * b.x * b.y * b.z;
  if (g.x == 0 || g.y == 0 || g.z == 0)
    return "a grid dimension of 0: the grid was computed by floor division (e.g. N / 16) for a size smaller "
           "than the block; compute it by ceiling division, (N + 15) / 16";
  if (b.x == 0 || b.y == 0 || b.z == 0) return "a block dimension of 0";
  if (threads > 1024)
    return fmt::format("a block of more than 1024 threads ({} x {} x {} = {}): a block has at most 1024", b.x,
                       b.y, b.z, threads);
  if (b.z > 64) return fmt::format("a block {} threads deep: blockDim.z is at most 64", b.z);
  if (g.y > 65535 || g.z > 65535)
    return fmt::format("a grid of {} blocks in y or z: at most 65535 there (put the long dimension in x)",
                       std::max(g.y, g.z));
  if (l.shared_bytes > 48 * 1024)
    return fmt::format(
        "{} bytes of dynamic shared memory: over 48 KiB a kernel needs "
        "cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes)",
        l.shared_bytes);
  return "";
}

void set_memory_check(bool on) {
  judging_memory() = on;
}

bool observing_launches() {
  return observed_run() != nullptr;
}

void observe_launch() noexcept {
  if (Run* run = observed_run()) run->keep_guard_damage();
}

bool context_lost() {
  return !lost_reason().empty();
}
const std::string& context_lost_reason() {
  return lost_reason();
}

LaunchOutcome run_launcher(const std::string& what, const std::function<void()>& launcher) {
  LaunchOutcome out;
  auto fail = [&](cudaError_t e, const std::string& when) {
    out.ok = false;
    out.error = e;
    out.context_lost = is_sticky(e);
    // The launch the error belongs to (the failing one, else the last), named
    // with its configuration, and the cause that configuration explains.
    const auto& seen = launches_seen();
    const LaunchSeen* launch = seen.empty() ? nullptr : &seen.back();
    for (const auto& l : seen)
      if (l.result != cudaSuccess) {
        launch = &l;
        break;
      }
    std::string advice = advice_for(e), yours;
    const LaunchSeen* launch_for_cause = launch;
    if (launch) {
      yours = fmt::format(" Your launch: {}.", describe_launch(*launch));
      if (const std::string p = configuration_problem(*launch); !p.empty()) advice = p;
    }
#if defined(CUDALAB_CPU_MODE) && CUDALAB_CPU_MODE
    // CPU mode: simt checked the configuration itself and says what it saw
    // ("the grid (0, 1, 1) has a dimension of 0").
    const std::string& detail = simt::last_error_detail();
    // The launch CPU mode refused, as numbers: no launch passes the GPU's
    // launch wrapper here.
    LaunchSeen simulated{};
    if (!launch && simt::last_launch_config(simulated.grid, simulated.block)) launch_for_cause = &simulated;
    if (!detail.empty() && (e == cudaErrorInvalidValue || e == cudaErrorInvalidConfiguration)) {
      yours = " " + detail + ".";
      if (detail.find("dimension of 0") != std::string::npos)
        advice = detail +
                 ": the grid was computed by floor division (e.g. N / 16) for a size smaller than "
                 "the block; compute it by ceiling division, (N + 15) / 16";
      else if (detail.find("threads") != std::string::npos)
        advice =
            detail + (detail.find("more than 1024") == std::string::npos
                          ? " (a block of more than 1024 threads, or of more than 64 in z, cannot launch)"
                          : "");
      else
        advice = detail;
    }
    // A store past the end of the kernel's shared memory, which simt saw
    // changing the poisoned bytes after it (an unseen transpose whose load
    // loop stepped by 1, 2026-11-25): what it saw is the cause.
    if (const auto at = detail.find("threads of block");
        e == cudaErrorIllegalAddress && at != std::string::npos &&
        detail.find(diagnosis::kSharedOverrun) != std::string::npos)
      advice = detail.substr(at);
    // A __syncthreads() that not every thread of a block reaches, which simt
    // stops at (a GPU may hang there, or pass by luck): what it saw is the cause.
    if (const auto at = detail.find(diagnosis::kBarrierNotReached);
        e == cudaErrorLaunchFailure && at != std::string::npos)
      advice = detail.substr(at);
#endif
    out.message = diagnosis::collecting() ? fmt::format("{}: {}: {}.{}", what, when, error_label(e), yours)
                                          : fmt::format("{}: {}: {}.{} Likely cause: {}.", what, when,
                                                        error_label(e), yours, advice);
    diagnosis::launch_failed(
        what, fmt::format("{}: {}", when, error_label(e)),
        advice + (launch ? fmt::format(" (your launch: {})", describe_launch(*launch)) : std::string()),
        false, launch_cause(launch_for_cause, e));
    if (out.context_lost && lost_reason().empty()) lost_reason() = out.message;
  };
  if (context_lost()) {
    out.ok = false;
    out.context_lost = true;
    out.message = fmt::format(
        "{}: not run: an earlier error left the GPU unusable in this process ({}). Fix that "
        "first; each check also runs on its own with `./cudalab test LAB --check ID`",
        what, lost_reason());
    return out;
  }
  cudaGetLastError();  // clear a non-sticky error left by an earlier run
  // The harness's own work (the outputs' poison is a cudaMemset, asynchronous
  // on the legacy stream) done before the launcher runs: a launcher whose
  // kernels run on a cudaStreamNonBlocking stream does not wait for the
  // legacy stream, and its results could be overwritten by the poison. With
  // checks side by side on one GPU that happened (gallery 37-39 on an H100).
  if (cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess) {
    fail(e, "the GPU failed before the launcher ran");
    return out;
  }
  launches_seen().clear();
  last_described_launch().clear();
#if defined(CUDALAB_CPU_MODE) && CUDALAB_CPU_MODE
  simt::take_barrier_skip();  // only this launcher's launches count
  simt::take_last_launch();
#endif
  try {
    launcher();
  } catch (const NotImplemented& e) {
    out.ok = false;
    out.not_implemented = true;
    out.message = fmt::format("{}: {}", what, e.what());
    diagnosis::launch_failed(what, e.what(), "", true);
    cudaGetLastError();
    return out;
  } catch (const CudaError& e) {
    fail(e.code(), fmt::format("a CUDA call in the launcher failed ({})", e.what()));
    if (!out.context_lost) cudaGetLastError();
    return out;
  } catch (const std::exception& e) {
    out.ok = false;
    out.message = fmt::format("{}: the launcher threw an exception: {}", what, e.what());
    return out;
  } catch (...) {
    out.ok = false;
    out.message = fmt::format("{}: the launcher threw an exception that is not a std::exception", what);
    return out;
  }
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) {
    fail(e, "the kernel launch failed");
    return out;
  }
  if (cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess) {
    fail(e, "the kernel failed while running");
    if (!out.context_lost) cudaGetLastError();
  }
#if defined(CUDALAB_CPU_MODE) && CUDALAB_CPU_MODE
  diagnosis::barrier_skipped(what, simt::take_barrier_skip());
  last_described_launch() = simt::take_last_launch();
#else
  if (!launches_seen().empty()) last_described_launch() = describe_launch(launches_seen().back());
#endif
  diagnosis::launched(what, last_described_launch());
  note_launch_for_table(what, last_described_launch());  // the reference's run: for the students' diagnoses
  return out;
}

Run::Run(std::string launcher, std::string shape)
    : launcher_(std::move(launcher)), shape_(std::move(shape)) {}

float* Run::input(const std::string& name, const std::vector<float>& data) {
  buffers_.emplace_back(name, data.size(), sizeof(float));
  buffers_.back().upload(data.data());
  originals_.push_back(data);
  // A NaN in a result means a read past the end of an input only where the
  // inputs hold none.
  bool holds_nan = false;
  for (char part :
       map_chunks<char>(data.size(), std::size_t{1} << 20, [&](std::size_t begin, std::size_t end) {
         return std::any_of(data.begin() + begin, data.begin() + end,
                            [](float v) { return !std::isfinite(v); });
       }))
    holds_nan = holds_nan || part;
  diagnosis::input(fmt::format("{}({})", launcher_, shape_), name, holds_nan ? 1 : 0);
  return static_cast<float*>(buffers_.back().data());
}

float* Run::output(const std::string& name, std::size_t count) {
  buffers_.emplace_back(name, count, sizeof(float));
  buffers_.back().poison();
  originals_.emplace_back();
  return static_cast<float*>(buffers_.back().data());
}

LaunchOutcome Run::launch(const std::function<void()>& launcher) {
  // Poison again right before the launch: a value left by an earlier kernel
  // must never pass as this one's output.
  for (std::size_t i = 0; i < buffers_.size(); ++i)
    if (originals_[i].empty()) buffers_[i].poison();
  const std::string what = fmt::format("{}({})", launcher_, shape_);
  evidence::set_label(what);  // the outputs compared next belong to this launch
  // A memory check in the grader's runs (cudalab/replay.h): the student's
  // process writes down this call's launches; the reference build replays
  // them here in place of its own launcher, on this Run's guarded buffers.
  std::function<void()> call = launcher;
  const bool graded_memory =
      replay::mode() != replay::Mode::off && evidence::enabled() && replay::launcher_hook();
  if (graded_memory) {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> allocations;
    for (const auto& b : buffers_) allocations.push_back(b.allocation());
    replay::launcher_hook()(allocations, call);
  }
  // A rerun (a race, C +=) runs the launcher untraced; the replay's reruns
  // replay the same launches again.
  last_launcher_ = replay::mode() == replay::Mode::replay && graded_memory ? call : launcher;
  // A memory check's inputs are read after each launch too (small shapes).
  watch_inputs_ = judging_memory();
  changed_seen_.clear();
  // Its guard zones read after each of its launches (observe_launch).
  struct Observe {
    explicit Observe(Run* run) { observed_run() = run; }
    ~Observe() { observed_run() = nullptr; }
  } observe(this);
#if defined(CUDALAB_CPU_MODE) && CUDALAB_CPU_MODE
  simt::set_after_launch(observe_launch);
#endif
  LaunchOutcome out = run_launcher(what, call);
  if (out.ok && !traffic_of().empty() && !last_described_launch().empty())
    note(kCountedLaunch + what + ": " + last_described_launch());
  return out;
}

long long Run::rerun_changed(const std::string& name) {
  if (!last_launcher_ || context_lost() || diagnosis::rerun_done()) return -1;
  const std::vector<float> first = result(name);
  // The same inputs as the first run (the kernel may have changed them).
  for (std::size_t i = 0; i < buffers_.size(); ++i)
    if (!originals_[i].empty()) buffers_[i].upload(originals_[i].data());
  for (std::size_t i = 0; i < buffers_.size(); ++i)
    if (originals_[i].empty()) buffers_[i].poison();
  const std::string what = fmt::format("{}({})", launcher_, shape_);
  // Not a graded launch: its outputs are compared with the first run's only.
  const bool evidence_on = evidence::enabled();
  evidence::set_enabled(false);
  diagnosis::pause(true);
#if defined(CUDALAB_CPU_MODE) && CUDALAB_CPU_MODE
  // CPU mode runs the threads of a block in one fixed order, so a race gives
  // the same wrong result twice; the rerun runs them last thread first.
  const std::string schedule = simt::schedule();
  simt::set_schedule("reverse");
#endif
  const LaunchOutcome again = run_launcher(what, last_launcher_);
#if defined(CUDALAB_CPU_MODE) && CUDALAB_CPU_MODE
  simt::set_schedule(schedule);
#endif
  diagnosis::pause(false);
  evidence::set_enabled(evidence_on);
  if (!again.ok) return -1;
  const std::vector<float> second = result(name);
  long long changed = 0;
  for (std::size_t k = 0; k < first.size() && k < second.size(); ++k)
    changed += std::memcmp(&first[k], &second[k], sizeof(float)) != 0;
  diagnosis::rerun(what, changed, cudalab_cpu_build);
  return changed;
}

void Run::note_reference_launch(const Comparison& c, const std::function<void(float* out)>& reference) {
  if (!reference || c.ok() || !c.unwritten_trailing || context_lost()) return;
  if (!reference_linked()) {  // a grader's build of a submission: the reference's own run said it
    const std::string what = fmt::format("{}({})", launcher_, shape_);
    if (const std::string launch = reference_launch(what); !launch.empty())
      diagnosis::reference_launched(what, launch);
    return;
  }
  const GuardedBuffer& out = find(c.name);
  GuardedBuffer scratch(c.name + " (reference)", out.count(), sizeof(float));
  const std::string what = fmt::format("{}({})", launcher_, shape_);
  // Not a graded launch, nor a shape of its own.
  const bool evidence_on = evidence::enabled();
  evidence::set_enabled(false);
  diagnosis::pause(true);
  const LaunchOutcome r = run_launcher("the reference solution at " + shape_,
                                       [&] { reference(static_cast<float*>(scratch.data())); });
  const std::string launch = last_described_launch();
  diagnosis::pause(false);
  evidence::set_enabled(evidence_on);
  if (r.ok) diagnosis::reference_launched(what, launch);
}

bool Run::check_accumulates(const Comparison& c, const std::vector<double>& expected,
                            const Tolerance& tolerance) {
  const std::size_t n = c.rows * c.cols;
  if (c.ok() || n == 0 || c.unwritten + c.non_finite != n || !last_launcher_ || context_lost()) return false;
  if (diagnosis::accumulation_probe_done()) return diagnosis::accumulation_found();
  GuardedBuffer* out = nullptr;
  for (auto& b : buffers_)
    if (b.name() == c.name) out = &b;
  if (!out || out->count() != expected.size()) return false;
  for (std::size_t i = 0; i < buffers_.size(); ++i)
    if (!originals_[i].empty()) buffers_[i].upload(originals_[i].data());
  for (std::size_t i = 0; i < buffers_.size(); ++i)
    if (originals_[i].empty()) buffers_[i].poison();
  const std::vector<float> zeros(out->count(), 0.0f);
  out->upload(zeros.data());
  const std::string what = fmt::format("{}({})", launcher_, shape_);
  const bool evidence_on = evidence::enabled();
  evidence::set_enabled(false);
  diagnosis::pause(true);
  const LaunchOutcome again = run_launcher(what, last_launcher_);
  diagnosis::pause(false);
  evidence::set_enabled(evidence_on);
  if (!again.ok) return false;
  const std::vector<float> got = result(c.name);
  bool right = true;
  for (std::size_t i = 0; i < n && right; ++i) right = tolerance.accepts(got[i], expected[i]);
  diagnosis::accumulation_probed(what, right);
  return right;
}

void Run::keep_guard_damage() noexcept {
  for (auto& b : buffers_) b.keep_guard_damage();
  if (!watch_inputs_) return;
  changed_seen_.resize(buffers_.size());
  try {
    for (std::size_t i = 0; i < buffers_.size(); ++i) {
      if (originals_[i].empty() || !changed_seen_[i].empty()) continue;  // the first change seen stays
      std::vector<float> now(buffers_[i].count());
      buffers_[i].download(now.data());
      if (std::memcmp(now.data(), originals_[i].data(), now.size() * sizeof(float)) != 0)
        changed_seen_[i] = std::move(now);
    }
  } catch (...) {
    // A failed read keeps nothing: the inputs are read again after the launcher.
  }
}

const GuardedBuffer& Run::find(const std::string& name) const {
  for (const auto& b : buffers_)
    if (b.name() == name) return b;
  throw std::logic_error("cudalab::Run: no buffer named " + name);
}

std::vector<float> Run::result(const std::string& name) const {
  const GuardedBuffer& b = find(name);
  std::vector<float> host(b.count());
  b.download(host.data());
  return host;
}

std::vector<std::string> Run::memory_problems() const {
  std::vector<std::string> problems;
  if (context_lost()) return {"guard zones and inputs not checked: the GPU context was lost"};
  std::vector<evidence::BufferState> states;
  for (std::size_t i = 0; i < buffers_.size(); ++i) {
    const GuardedBuffer& b = buffers_[i];
    evidence::BufferState st;
    st.name = b.name();
    st.input = !originals_[i].empty();
    st.count = b.count();
    st.elem_size = sizeof(float);
    b.guard_zones(st.guard_before, st.guard_after);
    for (auto& m : describe_guard_damage(b.name(), sizeof(float), b.count(), st.guard_before, st.guard_after))
      problems.push_back(m);
    if (originals_[i].empty()) {
      states.push_back(std::move(st));
      continue;
    }
    std::vector<float> now(b.count());
    b.download(now.data());
    // Changed by a launch and written back since: judged as the launch left it.
    if (i < changed_seen_.size() && !changed_seen_[i].empty() &&
        std::memcmp(now.data(), originals_[i].data(), now.size() * sizeof(float)) == 0)
      now = changed_seen_[i];
    // For the judge only: a run without evidence (./cudalab test) has no use for it.
    if (evidence::enabled()) st.content_hash = evidence::hash_bytes(now.data(), now.size() * sizeof(float));
    states.push_back(std::move(st));
    // Per chunk: how many elements differ, bit for bit, and the first of them.
    struct Changed {
      std::size_t count = 0, first = 0;
    };
    const std::vector<float>& before = originals_[i];
    std::size_t changed = 0, first = 0;
    for (const Changed& part :
         map_chunks<Changed>(now.size(), std::size_t{1} << 20, [&](std::size_t begin, std::size_t end) {
           Changed c;
           for (std::size_t k = begin; k < end; ++k)
             if (std::memcmp(&now[k], &before[k], sizeof(float)) != 0 && c.count++ == 0) c.first = k;
           return c;
         })) {
      if (part.count > 0 && changed == 0) first = part.first;
      changed += part.count;
    }
    if (changed > 0) {
      problems.push_back(
          fmt::format("the kernel changed the input {}: {} of {} elements differ (first at {}[{}]: {} became "
                      "{}); inputs must stay read-only",
                      b.name(), changed, now.size(), b.name(), first, originals_[i][first], now[first]));
    }
  }
  evidence::set_label(fmt::format("{}({})", launcher_, shape_));
  evidence::record_memory(states);
  diagnosis::memory(fmt::format("{}({})", launcher_, shape_), problems);
  return problems;
}

}  // namespace cudalab
