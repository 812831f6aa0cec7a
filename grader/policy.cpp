#include "policy.h"

#include <cxxabi.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <set>
#include <sstream>

#include "process.h"

namespace cudalab {

std::string demangle(const std::string& symbol) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status),
                                             std::free);
  return status == 0 && out ? std::string(out.get()) : symbol;
}

namespace {

bool starts(const std::string& s, const char* prefix) {
  return s.rfind(prefix, 0) == 0;
}

// C library functions a kernel launcher may reasonably use.
const std::set<std::string> kAllowedC = {"printf",
                                         "fprintf",
                                         "vprintf",
                                         "vfprintf",
                                         "puts",
                                         "putchar",
                                         "fputs",
                                         "fputc",
                                         "fflush",
                                         "fwrite",
                                         "stdout",
                                         "stderr",
                                         "snprintf",
                                         "sprintf",
                                         "vsnprintf",
                                         "__printf_chk",
                                         "__fprintf_chk",
                                         "__sprintf_chk",
                                         "__snprintf_chk",
                                         "__vsnprintf_chk",
                                         "__vfprintf_chk",
                                         "memcpy",
                                         "memmove",
                                         "memset",
                                         "memcmp",
                                         "strlen",
                                         "strcmp",
                                         "strncmp",
                                         "strchr",
                                         "strstr",
                                         "__memcpy_chk",
                                         "__memset_chk",
                                         "__memmove_chk",
                                         "malloc",
                                         "calloc",
                                         "realloc",
                                         "free",
                                         "abort",
                                         "__assert_fail",
                                         "__stack_chk_fail",
                                         "__cxa_atexit",
                                         "__dso_handle",
                                         "atexit",
                                         "sqrt",
                                         "sqrtf",
                                         "exp",
                                         "expf",
                                         "exp2f",
                                         "log",
                                         "logf",
                                         "log2f",
                                         "pow",
                                         "powf",
                                         "fabs",
                                         "fabsf",
                                         "floor",
                                         "floorf",
                                         "ceil",
                                         "ceilf",
                                         "fmin",
                                         "fminf",
                                         "fmax",
                                         "fmaxf",
                                         "sin",
                                         "sinf",
                                         "cos",
                                         "cosf",
                                         "tanh",
                                         "tanhf",
                                         "round",
                                         "roundf",
                                         "lround",
                                         "rint",
                                         "fma",
                                         "fmaf",
                                         "frexp",
                                         "ldexp",
                                         "_GLOBAL_OFFSET_TABLE_",
                                         "__gmon_start__",
                                         "_ITM_registerTMCloneTable",
                                         "_ITM_deregisterTMCloneTable",
                                         "_Unwind_Resume",
                                         "__gxx_personality_v0",
                                         "__tls_get_addr"};

// CUDA runtime calls that would break the harness or the other checks.
const std::set<std::string> kDeniedCuda = {
    "cudaDeviceReset",      "cudaSetDevice",       "cudaDeviceSetLimit", "cudaSetDeviceFlags",
    "cudaIpcOpenMemHandle", "cudaIpcGetMemHandle", "cudaProfilerStart",  "cudaProfilerStop"};

const char* kSystemWhy =
    "file, process and network calls are not allowed in a lab submission (the checks give the "
    "kernel everything it needs)";

std::string why_denied(const std::string& sym, const std::string& nice) {
  if (starts(sym, "_ZN3ref") || starts(sym, "_ZNK3ref") || nice.rfind("ref::", 0) == 0)
    return "the reference solution may not be called: the checks compare your kernel with it";
  if (starts(sym, "cublas")) return "cuBLAS may not be used: the lab asks you to write the kernel yourself";
  if (starts(sym, "cudnn")) return "cuDNN may not be used: the lab asks you to write the kernel yourself";
  if (starts(sym, "cusparse") || starts(sym, "cufft") || starts(sym, "curand") || starts(sym, "cusolver"))
    return "CUDA libraries may not be used: the lab asks you to write the kernel yourself";
  if (nice.find("thrust::") != std::string::npos || nice.find("cub::") != std::string::npos)
    return "Thrust and CUB may not be used: the lab asks you to write the kernel yourself";
  if (kDeniedCuda.count(sym)) return "it would reset or reconfigure the GPU under the harness";
  return kSystemWhy;
}

bool allowed(const std::string& sym, const std::string& nice) {
  if (starts(sym, "_ZN3ref") || starts(sym, "_ZNK3ref")) return false;
  if (starts(sym, "cuda")) return !kDeniedCuda.count(sym);
  if (starts(sym, "__cuda")) return true;       // launch and registration stubs
  if (starts(sym, "_ZN7cudalab")) return true;  // CUDA_CHECK, CUDALAB_TODO
  if (starts(sym, "__cxa_") || starts(sym, "_Unwind_")) return true;
  if (starts(sym, "_Znw") || starts(sym, "_Zna") || starts(sym, "_Zdl") || starts(sym, "_Zda")) return true;
  if (starts(sym, "_ZNSt") || starts(sym, "_ZSt") || starts(sym, "_ZNKSt") || starts(sym, "_ZTI") ||
      starts(sym, "_ZTV") || starts(sym, "_ZTS") || starts(sym, "_ZGV") || starts(sym, "_ZNSo") ||
      starts(sym, "_ZNSi") || starts(sym, "_ZNSa") || starts(sym, "_ZNKSa")) {
    // The standard library, but not its files or threads.
    for (const char* bad : {"fstream", "filebuf", "std::thread", "std::filesystem", "std::system"})
      if (nice.find(bad) != std::string::npos) return false;
    return nice.find("thrust::") == std::string::npos;
  }
  const std::string base = sym.substr(0, sym.find('@'));  // printf@GLIBC_2.2.5
  return kAllowedC.count(base) > 0;
}

}  // namespace

std::vector<Violation> check_symbols(const std::vector<std::string>& undefined,
                                     const std::vector<std::string>& defined) {
  std::vector<Violation> out;
  std::set<std::string> seen;
  for (const auto& sym : undefined) {
    const std::string nice = demangle(sym);
    if (allowed(sym, nice) || !seen.insert(nice).second) continue;
    out.push_back({nice, why_denied(sym, nice)});
  }
  // Thrust and CUB are header libraries: their code is in the object itself,
  // and it calls much else (dlopen, cudaSetDevice...): say only that.
  for (const auto& sym : defined) {
    const std::string nice = demangle(sym);
    if (nice.find("thrust::") != std::string::npos || nice.find("cub::") != std::string::npos)
      return {{"Thrust", why_denied(sym, nice)}};
  }
  // A library's or the reference's reason first: it says the most.
  std::stable_sort(out.begin(), out.end(), [](const Violation& a, const Violation& b) {
    return (a.why != kSystemWhy) > (b.why != kSystemWhy);
  });
  return out;
}

namespace {

std::vector<std::string> nm_symbols(const std::filesystem::path& object, const char* which,
                                    std::string& error) {
  ProcessOptions opt;
  opt.argv = {"nm", which, "--format=posix", object.string()};
  opt.timeout_s = 60;
  opt.output_cap = 16 << 20;
  const ProcessResult p = run_process(opt);
  std::vector<std::string> out;
  if (!p.ok()) {
    error = fmt::format("nm could not read {}: {}", object.filename().string(), p.describe());
    return out;
  }
  std::istringstream in(p.output);
  for (std::string line; std::getline(in, line);) {
    const auto sp = line.find(' ');
    if (sp != std::string::npos && sp > 0) out.push_back(line.substr(0, sp));
  }
  return out;
}

}  // namespace

std::vector<Violation> check_object(const std::filesystem::path& object, std::string& error) {
  const auto undefined = nm_symbols(object, "--undefined-only", error);
  if (!error.empty()) return {};
  const auto defined = nm_symbols(object, "--defined-only", error);
  if (!error.empty()) return {};
  return check_symbols(undefined, defined);
}

std::vector<std::string> forbidden_includes(const std::vector<std::string>& dependencies,
                                            const std::filesystem::path& source_root,
                                            const std::filesystem::path& student_dir) {
  namespace fs = std::filesystem;
  const std::string root = fs::weakly_canonical(source_root).string() + "/";
  const std::string harness = root + "harness/include/";
  const std::string own = fs::weakly_canonical(student_dir).string() + "/";
  std::vector<std::string> out;
  for (const auto& d : dependencies) {
    const std::string p = fs::weakly_canonical(fs::path(d)).string();
    if (starts(p, harness.c_str()) || starts(p, own.c_str())) continue;
    if (starts(p, root.c_str()) || p.find("/solutions/") != std::string::npos)
      out.push_back(p.substr(starts(p, root.c_str()) ? root.size() : 0));
  }
  return out;
}

}  // namespace cudalab
