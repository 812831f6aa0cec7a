// The GPU side of cudalab/replay.h: writing down the launches of one call of
// the student's launcher (the student's process), and replaying them on the
// timing's own buffers (the grader's process, the reference build). Linked
// into every GPU lab binary through launch_wrap.cpp, which reports launches
// here while a trace is being taken.
#include <cuda_runtime_api.h>
#include <cxxabi.h>
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cudalab/record.h"
#include "cudalab/replay.h"
#include "cudalab/timing.h"

namespace cudalab::replay {

namespace {

bool g_recording = false;
std::vector<Launch>& recorded() {
  static std::vector<Launch> launches;
  return launches;
}
bool g_too_many = false;

std::string demangle(const std::string& mangled) {
  int status = 0;
  char* nice = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
  std::string name = status == 0 && nice ? nice : mangled;
  std::free(nice);
  if (const auto paren = name.find('('); paren != std::string::npos) name.erase(paren);
  return name;
}

// The parameter sizes of a kernel (a host stub or a cudaKernel_t).
bool param_sizes(const void* func, std::vector<std::size_t>& sizes) {
  sizes.clear();
  for (std::size_t i = 0; i <= kMaxParams; ++i) {
    std::size_t offset = 0, size = 0;
    if (cudaFuncGetParamInfo(func, i, &offset, &size) != cudaSuccess) {
      cudaGetLastError();  // the end of the list
      return true;
    }
    sizes.push_back(size);
  }
  return false;
}

// The timing's buffers as the trace numbers them: inputs, then outputs.
std::vector<std::pair<std::uint64_t, std::uint64_t>> buffers_of(const Timed& timed) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
  for (const auto& in : timed.inputs)
    out.push_back({reinterpret_cast<std::uint64_t>(in.data), in.count * sizeof(float)});
  for (const auto& o : timed.outputs)
    out.push_back({reinterpret_cast<std::uint64_t>(o.student), o.rows * o.cols * sizeof(float)});
  return out;
}

// The launches recorded since the last clear, with their pointers into
// `buffers` found.
Trace recorded_trace(const std::vector<std::pair<std::uint64_t, std::uint64_t>>& buffers) {
  Trace trace;
  for (const auto& b : buffers) trace.buffer_bytes.push_back(b.second);
  trace.launches = recorded();
  for (auto& l : trace.launches)
    for (std::size_t p = 0; p < l.params.size(); ++p)
      for (const auto& r : find_pointers(l.params[p], p, buffers)) l.relocations.push_back(r);
  return trace;
}

// The student's process: one call of the launcher, traced; the check ends here.
[[noreturn]] void take_trace(const Timed& timed, const std::function<void()>& student) {
  const auto buffers = buffers_of(timed);
  std::string problem;
  cudaDeviceSynchronize();
  recorded().clear();
  g_recording = true;
  try {
    student();
  } catch (const std::exception& e) {
    problem = e.what();
  } catch (...) {
    problem = "the launcher threw an exception";
  }
  const cudaError_t err = cudaDeviceSynchronize();
  g_recording = false;
  if (problem.empty() && err != cudaSuccess) problem = cudaGetErrorString(err);
  if (problem.empty() && g_too_many)
    problem = fmt::format("the launcher made more than {} kernel launches in one call", kMaxLaunches);
  const Trace trace = recorded_trace(buffers);
  if (problem.empty() && !write_fd(trace_fd(), to_json(trace))) problem = "the trace could not be written";
  if (!problem.empty())
    add_failure("speed not measured: " + problem);
  else
    note(fmt::format("traced {} kernel launch{} of {}: the grader times them in a process of its own",
                     trace.launches.size(), trace.launches.size() == 1 ? "" : "es",
                     timed.what.empty() ? "the launcher" : timed.what));
  end_check(problem.empty() && failures_so_far() == 0, 0);
  std::fflush(nullptr);
  std::_Exit(problem.empty() ? 0 : 1);
}

// The grader's process: the student's kernels, loaded once, and the trace:
// one call of the launcher (a speed check) or each call (a memory check).
struct Loaded {
  bool tried = false;
  std::string error;
  std::vector<cudaLibrary_t> libraries;
  std::vector<Trace> calls;
};
Loaded& loaded() {
  static Loaded l;
  if (l.tried) return l;
  l.tried = true;
  std::string text, code;
  std::vector<std::string> pieces;
  bool parsed = read_fd(replay_trace_fd(), text);
  if (parsed && text.find("\"cudalab-calls/1\"") != std::string::npos) {
    parsed = calls_from_json(text, l.calls, l.error);
  } else if (parsed) {
    l.calls.resize(1);
    parsed = from_json(text, l.calls[0], l.error);
  }
  if (!parsed) {
    if (l.error.empty()) l.error = "the trace could not be read";
    l.error = "the launches of your launcher could not be replayed: " + l.error;
    return l;
  }
  if (!read_fd(replay_code_fd(), code) || !unpack(code, pieces, l.error) || pieces.empty()) {
    l.error = "the grader has none of your files' compiled kernels" + (l.error.empty() ? "" : ": " + l.error);
    return l;
  }
  for (const auto& piece : pieces) {
    cudaLibrary_t lib = nullptr;
    const cudaError_t e = cudaLibraryLoadData(&lib, piece.data(), nullptr, nullptr, 0, nullptr, nullptr, 0);
    if (e != cudaSuccess) {
      cudaGetLastError();
      l.error =
          fmt::format("your compiled kernels could not be loaded for the replay: {}", cudaGetErrorString(e));
      return l;
    }
    l.libraries.push_back(lib);
  }
  return l;
}

struct Prepared {
  cudaKernel_t kernel = nullptr;
  dim3 grid, block;
  std::size_t shared_bytes = 0;
  std::vector<std::string> params;
  std::string name;
};

// Call `call`'s launches, their pointers moved into `buffers` (this
// process's own, in the trace's order).
bool prepare(std::size_t call, const std::vector<std::pair<std::uint64_t, std::uint64_t>>& buffers,
             std::vector<Prepared>& out, std::string& error) {
  const Loaded& l = loaded();
  if (!l.error.empty()) {
    error = l.error;
    return false;
  }
  if (call >= l.calls.size()) {
    error = fmt::format(
        "your launcher's run ended after {} call{}, before this one: there is nothing of it to replay",
        l.calls.size(), l.calls.size() == 1 ? "" : "s");
    return false;
  }
  const Trace& trace = l.calls[call];
  bool same = trace.buffer_bytes.size() == buffers.size();
  for (std::size_t b = 0; same && b < buffers.size(); ++b) same = trace.buffer_bytes[b] == buffers[b].second;
  if (!same) {
    error = "the launches were traced on buffers of other sizes than this check's";
    return false;
  }
  for (const Launch& launch : trace.launches) {
    Prepared p;
    p.name = demangle(launch.kernel);
    for (cudaLibrary_t lib : l.libraries)
      if (cudaLibraryGetKernel(&p.kernel, lib, launch.kernel.c_str()) == cudaSuccess)
        break;
      else
        p.kernel = nullptr;
    cudaGetLastError();
    if (!p.kernel) {
      error = fmt::format(
          "your launcher launched {}, which is not a kernel of your own files: only your files' kernels are "
          "replayed",
          p.name);
      return false;
    }
    std::vector<std::size_t> sizes;
    bool match =
        param_sizes(reinterpret_cast<const void*>(p.kernel), sizes) && sizes.size() == launch.params.size();
    for (std::size_t i = 0; match && i < sizes.size(); ++i) match = sizes[i] == launch.params[i].size();
    if (!match) {
      error = fmt::format("the traced launch of {} does not match the kernel's parameters", p.name);
      return false;
    }
    p.params = launch.params;
    for (const Relocation& r : launch.relocations) {
      const std::uint64_t v = buffers[r.buffer].first + r.delta;
      std::memcpy(p.params[r.param].data() + r.offset, &v, 8);
    }
    p.grid = dim3(launch.grid[0], launch.grid[1], launch.grid[2]);
    p.block = dim3(launch.block[0], launch.block[1], launch.block[2]);
    p.shared_bytes = launch.shared_bytes;
    // A launcher that asked for more than the default 48 KiB did so with
    // cudaFuncSetAttribute on its own kernel; the replay asks the same.
    if (p.shared_bytes > 48 * 1024) {
      cudaFuncSetAttribute(reinterpret_cast<const void*>(p.kernel),
                           cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(p.shared_bytes));
      cudaGetLastError();
    }
    out.push_back(std::move(p));
  }
  return true;
}

void launch_all(std::vector<Prepared>& launches) {
  for (Prepared& p : launches) {
    std::vector<void*> args;
    for (auto& bytes : p.params) args.push_back(bytes.data());
    const cudaError_t e = cudaLaunchKernel(reinterpret_cast<const void*>(p.kernel), p.grid, p.block,
                                           args.empty() ? nullptr : args.data(), p.shared_bytes, 0);
    if (e != cudaSuccess)
      throw std::runtime_error(fmt::format(
          "replaying your launch {}<<<grid ({}, {}, {}), block ({}, {}, {}), {} bytes of shared memory>>> "
          "failed: {}",
          p.name, p.grid.x, p.grid.y, p.grid.z, p.block.x, p.block.y, p.block.z, p.shared_bytes,
          cudaGetErrorString(e)));
  }
}

bool student_hook(const Timed& timed, const std::function<void()>& student,
                  std::function<void()>& timed_student, std::string& invalid) {
  if (mode() == Mode::trace) take_trace(timed, student);
  if (mode() != Mode::replay) return true;
  auto launches = std::make_shared<std::vector<Prepared>>();
  if (!prepare(0, buffers_of(timed), *launches, invalid)) return false;
  // The replay runs no student host code, but the student's kernels: where
  // they can read and write pageable host memory (HMM, ATS), they could
  // reach this process's own. Said in the record, for the course staff.
  int device = 0, pageable = 0;
  if (cudaGetDevice(&device) == cudaSuccess &&
      cudaDeviceGetAttribute(&pageable, cudaDevAttrPageableMemoryAccess, device) == cudaSuccess && pageable)
    note(
        "this GPU lets kernels access pageable host memory (pageableMemoryAccess): the grader's replay "
        "process is not out of the timed kernels' reach");
  cudaGetLastError();
  timed_student = [launches] { launch_all(*launches); };
  return true;
}

// A memory check's calls of the launcher (cudalab/run.h Run::launch).
std::vector<Trace>& traced_calls() {
  static std::vector<Trace> calls;
  return calls;
}
std::size_t g_next_call = 0;

// The student's process: the call's launches, written down with the trace
// of every earlier call (the whole file again: a run that dies later leaves
// the calls it made).
void end_call(const std::vector<std::pair<std::uint64_t, std::uint64_t>>& buffers) {
  g_recording = false;
  if (g_too_many)
    throw std::runtime_error(
        fmt::format("the launcher made more than {} kernel launches in one call", kMaxLaunches));
  if (traced_calls().size() >= kMaxCalls)
    throw std::runtime_error(
        fmt::format("the launcher was called more than {} times in one check", kMaxCalls));
  traced_calls().push_back(recorded_trace(buffers));
  if (!write_fd(trace_fd(), calls_to_json(traced_calls())))
    throw std::runtime_error("the grader's trace of your launches could not be written");
}

void launcher_hook_gpu(const std::vector<std::pair<std::uint64_t, std::uint64_t>>& buffers,
                       std::function<void()>& launcher) {
  if (mode() == Mode::trace) {
    launcher = [inner = launcher, buffers] {
      recorded().clear();
      g_too_many = false;
      g_recording = true;
      try {
        inner();
      } catch (...) {
        g_recording = false;
        throw;
      }
      end_call(buffers);
    };
  } else if (mode() == Mode::replay) {
    auto launches = std::make_shared<std::vector<Prepared>>();
    std::string error;
    if (!prepare(g_next_call++, buffers, *launches, error))
      launcher = [error] { throw std::runtime_error(error); };
    else
      launcher = [launches] { launch_all(*launches); };
  }
}

const bool kHooked = [] {
  timing::student_hook() = student_hook;
  launcher_hook() = launcher_hook_gpu;
  return true;
}();

}  // namespace

void record_launch(const void* func, const unsigned grid[3], const unsigned block[3],
                   std::size_t shared_bytes, void** args) {
  if (!g_recording) return;
  if (recorded().size() >= kMaxLaunches) {
    g_too_many = true;
    return;
  }
  Launch l;
  const char* mangled = nullptr;
  if (cudaFuncGetName(&mangled, func) == cudaSuccess && mangled) l.kernel = mangled;
  cudaGetLastError();
  for (int d = 0; d < 3; ++d) l.grid[d] = grid[d], l.block[d] = block[d];
  l.shared_bytes = shared_bytes;
  std::vector<std::size_t> sizes;
  param_sizes(func, sizes);
  for (std::size_t i = 0; i < sizes.size() && args; ++i)
    l.params.emplace_back(static_cast<const char*>(args[i]), sizes[i]);
  recorded().push_back(std::move(l));
}

}  // namespace cudalab::replay
