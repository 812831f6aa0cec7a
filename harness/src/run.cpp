#include "cudalab/run.h"

#include <fmt/format.h>

#include <cstring>
#include <exception>

#include "cudalab/check.h"
#include "cudalab/evidence.h"
#include "cudalab/lab.cuh"

namespace cudalab {

namespace {

std::string& lost_reason() {
  static std::string reason;
  return reason;
}

std::string error_label(cudaError_t e) {
  return fmt::format("{} ({})", cudaGetErrorString(e), cudaGetErrorName(e));
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
             "-Dcuda_arch=auto on this machine";
    case cudaErrorMemoryAllocation:
      return "the GPU is out of memory: was a size in bytes mixed up with a count of elements?";
    default:
      return "see the CUDA documentation for this error";
  }
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
    out.message = fmt::format("{}: {}: {}. Likely cause: {}.", what, when, error_label(e), advice_for(e));
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
  try {
    launcher();
  } catch (const NotImplemented& e) {
    out.ok = false;
    out.not_implemented = true;
    out.message = fmt::format("{}: {}", what, e.what());
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
  return out;
}

Run::Run(std::string launcher, std::string shape)
    : launcher_(std::move(launcher)), shape_(std::move(shape)) {}

float* Run::input(const std::string& name, const std::vector<float>& data) {
  buffers_.emplace_back(name, data.size(), sizeof(float));
  buffers_.back().upload(data.data());
  originals_.push_back(data);
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
  return run_launcher(what, launcher);
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
    st.content_hash = evidence::hash_bytes(now.data(), now.size() * sizeof(float));
    states.push_back(std::move(st));
    std::size_t changed = 0, first = 0;
    for (std::size_t k = 0; k < now.size(); ++k) {
      if (std::memcmp(&now[k], &originals_[i][k], sizeof(float)) != 0) {
        if (changed++ == 0) first = k;
      }
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
  return problems;
}

}  // namespace cudalab
