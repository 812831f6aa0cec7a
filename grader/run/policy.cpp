#include "run/policy.h"

#include <cxxabi.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <utility>

#include "core/time_limits.h"
#include "cudalab/elf.h"
#include "run/process.h"

namespace cudalab {

std::string demangle(const std::string& symbol) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status),
                                             std::free);
  return status == 0 && out ? std::string(out.get()) : symbol;
}

std::string readable_name(std::string name) {
  // As a student writes them: the demangler spells out std::string's template
  // arguments and the ABI's inline namespace.
  static const std::pair<const char*, const char*> kShort[] = {
      {"std::__cxx11::", "std::"},
      {"std::basic_string<char, std::char_traits<char>, std::allocator<char> >", "std::string"},
      {"std::basic_string<char, std::char_traits<char>, std::allocator<char>>", "std::string"},
      {"std::basic_ostringstream<char, std::char_traits<char>, std::allocator<char> >", "std::ostringstream"},
      {"std::basic_istringstream<char, std::char_traits<char>, std::allocator<char> >", "std::istringstream"},
      {"std::basic_stringstream<char, std::char_traits<char>, std::allocator<char> >", "std::stringstream"},
      {"std::basic_stringbuf<char, std::char_traits<char>, std::allocator<char> >", "std::stringbuf"},
      {"std::basic_ostream<char, std::char_traits<char> >", "std::ostream"},
      {"std::basic_istream<char, std::char_traits<char> >", "std::istream"},
  };
  for (const auto& [from, to] : kShort)
    for (auto at = name.find(from); at != std::string::npos; at = name.find(from, at + std::strlen(to)))
      name.replace(at, std::strlen(from), to);
  return name;
}

std::string Violation::describe(const std::string& file) const {
  const std::string name = readable_name(symbol);
  switch (kind) {
    case Kind::defines:
      return fmt::format("{} defines {}, {}", file, name, why);
    case Kind::contains:
      return fmt::format("{} contains {} {}", file, name, why);
    case Kind::uses:
      break;
  }
  return fmt::format("{} uses {}: {}", file, name, why);
}

namespace {

bool starts(const std::string& s, const char* prefix) {
  return s.rfind(prefix, 0) == 0;
}

bool starts_any(const std::string& s, std::initializer_list<const char*> prefixes) {
  for (const char* p : prefixes)
    if (starts(s, p)) return true;
  return false;
}

// "_ZSt<digits><name>...": a function of namespace std whose name begins with `name`.
bool std_function(const std::string& sym, const char* name) {
  if (!starts(sym, "_ZSt")) return false;
  std::size_t i = 4;
  while (i < sym.size() && sym[i] >= '0' && sym[i] <= '9') ++i;
  return i > 4 && sym.compare(i, std::strlen(name), name) == 0;
}

// The demangled name without its parameters: "vector_add(float const*)" -> "vector_add".
std::string base_name(const std::string& nice) {
  return nice.substr(0, nice.find('('));
}

// --- what a student object may call -----------------------------------------

// C library functions a kernel launcher may reasonably use: output to stdout
// and stderr (no function that opens a FILE is allowed, so these two are the
// only streams within reach), strings, memory, numbers, math.
const std::set<std::string> kAllowedC = {"printf",
                                         "fprintf",
                                         "vprintf",
                                         "vfprintf",
                                         "puts",
                                         "putchar",
                                         "fputs",
                                         "fputc",
                                         "putc",
                                         "fflush",
                                         "fwrite",
                                         "stdout",
                                         "stderr",
                                         "snprintf",
                                         "sprintf",
                                         "vsnprintf",
                                         "vsprintf",
                                         "__printf_chk",
                                         "__fprintf_chk",
                                         "__sprintf_chk",
                                         "__snprintf_chk",
                                         "__vsnprintf_chk",
                                         "__vfprintf_chk",
                                         "__vprintf_chk",
                                         "__vsprintf_chk",
                                         "memcpy",
                                         "memmove",
                                         "memset",
                                         "memcmp",
                                         "memchr",
                                         "strlen",
                                         "strnlen",
                                         "strcmp",
                                         "strncmp",
                                         "strchr",
                                         "strrchr",
                                         "strstr",
                                         "strcpy",
                                         "strncpy",
                                         "strcat",
                                         "strncat",
                                         "__memcpy_chk",
                                         "__memset_chk",
                                         "__memmove_chk",
                                         "__strcpy_chk",
                                         "__strcat_chk",
                                         "__strncpy_chk",
                                         "strtol",
                                         "strtoul",
                                         "strtoll",
                                         "strtoull",
                                         "strtof",
                                         "strtod",
                                         "atoi",
                                         "atol",
                                         "atof",
                                         "__isoc23_strtol",
                                         "__isoc23_strtoul",
                                         "__isoc23_strtoll",
                                         "__isoc23_strtoull",
                                         "__errno_location",
                                         "abs",
                                         "labs",
                                         "qsort",
                                         "bsearch",
                                         "rand",
                                         "srand",
                                         "malloc",
                                         "calloc",
                                         "realloc",
                                         "free",
                                         "aligned_alloc",
                                         "posix_memalign",
                                         "abort",
                                         "__assert_fail",
                                         "__stack_chk_fail",
                                         "__cxa_atexit",
                                         "__dso_handle",
                                         "atexit",
                                         "sqrt",
                                         "sqrtf",
                                         "cbrt",
                                         "cbrtf",
                                         "exp",
                                         "expf",
                                         "exp2",
                                         "exp2f",
                                         "expm1f",
                                         "log",
                                         "logf",
                                         "log2",
                                         "log2f",
                                         "log10",
                                         "log10f",
                                         "log1pf",
                                         "pow",
                                         "powf",
                                         "fabs",
                                         "fabsf",
                                         "floor",
                                         "floorf",
                                         "ceil",
                                         "ceilf",
                                         "trunc",
                                         "truncf",
                                         "fmod",
                                         "fmodf",
                                         "fmin",
                                         "fminf",
                                         "fmax",
                                         "fmaxf",
                                         "sin",
                                         "sinf",
                                         "cos",
                                         "cosf",
                                         "tan",
                                         "tanf",
                                         "asin",
                                         "asinf",
                                         "acos",
                                         "acosf",
                                         "atan",
                                         "atanf",
                                         "atan2",
                                         "atan2f",
                                         "sinh",
                                         "cosh",
                                         "tanh",
                                         "tanhf",
                                         "hypot",
                                         "hypotf",
                                         "erf",
                                         "erff",
                                         "round",
                                         "roundf",
                                         "lround",
                                         "lroundf",
                                         "llround",
                                         "rint",
                                         "rintf",
                                         "lrint",
                                         "lrintf",
                                         "nearbyint",
                                         "fma",
                                         "fmaf",
                                         "frexp",
                                         "frexpf",
                                         "ldexp",
                                         "ldexpf",
                                         "modf",
                                         "modff",
                                         "_GLOBAL_OFFSET_TABLE_",
                                         "__gmon_start__",
                                         "_ITM_registerTMCloneTable",
                                         "_ITM_deregisterTMCloneTable",
                                         "_Unwind_Resume",
                                         "__gxx_personality_v0",
                                         "__tls_get_addr"};

// The C++ ABI's runtime calls that compiled C++ makes by itself.
const std::set<std::string> kAllowedCxa = {"__cxa_atexit",
                                           "__cxa_begin_catch",
                                           "__cxa_end_catch",
                                           "__cxa_rethrow",
                                           "__cxa_throw",
                                           "__cxa_allocate_exception",
                                           "__cxa_free_exception",
                                           "__cxa_guard_acquire",
                                           "__cxa_guard_release",
                                           "__cxa_guard_abort",
                                           "__cxa_pure_virtual",
                                           "__cxa_deleted_virtual",
                                           "__cxa_throw_bad_array_new_length",
                                           "__cxa_bad_cast",
                                           "__cxa_bad_typeid",
                                           "__cxa_call_unexpected",
                                           "__cxa_call_terminate",
                                           "__cxa_get_exception_ptr",
                                           "__cxa_thread_atexit",
                                           "__cxa_thread_atexit_impl"};

// What nvcc's generated host code calls to register and launch kernels.
const std::set<std::string> kCudaInternal = {"__cudaPushCallConfiguration",
                                             "__cudaPopCallConfiguration",
                                             "__cudaLaunchKernel",
                                             "__cudaLaunchKernel_ptsz",
                                             "__cudaGetKernel",
                                             "__cudaInitModule",
                                             "__cudaRegisterFatBinary",
                                             "__cudaRegisterFatBinaryEnd",
                                             "__cudaUnregisterFatBinary",
                                             "__cudaRegisterFunction",
                                             "__cudaRegisterVar",
                                             "__cudaRegisterManagedVar",
                                             "__cudaRegisterHostVar",
                                             "__cudaRegisterTexture",
                                             "__cudaRegisterSurface",
                                             "__cudaRegisterLinkedBinary"};

// From the harness, exactly what lab.cuh and check.h offer a student file.
const std::set<std::string> kAllowedCudalab = {
    "_ZN7cudalab15not_implementedEPKcS1_i",             // CUDALAB_TODO
    "_ZN7cudalab16throw_cuda_errorE9cudaErrorPKcS2_i",  // CUDA_CHECK
    "_ZN7cudalab9CudaErrorC1E9cudaErrorPKcS3_i",        // throw cudalab::CudaError(...)
    "_ZN7cudalab9CudaErrorC2E9cudaErrorPKcS3_i",
    "_ZTIN7cudalab9CudaErrorE",  // catch (const cudalab::CudaError&)
    "_ZTSN7cudalab9CudaErrorE",
    "_ZTIN7cudalab14NotImplementedE",
    "_ZTSN7cudalab14NotImplementedE"};

// CUDA runtime calls that would break the harness or the other checks, or
// reach the driver behind the runtime's back.
const std::set<std::string> kDeniedCuda = {"cudaDeviceReset",         "cudaThreadExit",
                                           "cudaSetDevice",           "cudaInitDevice",
                                           "cudaDeviceSetLimit",      "cudaThreadSetLimit",
                                           "cudaSetDeviceFlags",      "cudaSetValidDevices",
                                           "cudaIpcOpenMemHandle",    "cudaIpcGetMemHandle",
                                           "cudaIpcOpenEventHandle",  "cudaIpcGetEventHandle",
                                           "cudaProfilerStart",       "cudaProfilerStop",
                                           "cudaGetDriverEntryPoint", "cudaGetDriverEntryPointByVersion",
                                           "cudaGetExportTable",      "cudaGetFuncBySymbol"};

// CPU mode: the out-of-line functions and variables of simt's headers that
// the translated student file may reach (simt/include). Demangled, without
// parameters.
const std::set<std::string> kAllowedSimt = {"simt::launch_erased",
                                            "simt::shared_storage",
                                            "simt::dynamic_shared_memory",
                                            "simt::copy_symbol",
                                            "__syncthreads",
                                            "__syncthreads_count",
                                            "__syncthreads_and",
                                            "__syncthreads_or",
                                            "__trap",
                                            "clock64",
                                            "simt_threadIdx",
                                            "simt_blockIdx",
                                            "simt_blockDim",
                                            "simt_gridDim"};

// The standard library a launcher reasonably needs, by mangled prefix: new and
// delete, exceptions, strings and string streams, output to cout and cerr,
// clocks, the out-of-line helpers of the containers. No files, threads,
// processes, locales by name or file system.
const char* const kAllowedCxxPrefixes[] = {
    // operator new and delete, std::nothrow
    "_Znwm", "_Znam", "_ZdlPv", "_ZdaPv", "_ZSt7nothrow",
    // output streams: std::ostream, std::basic_ios<char>, std::ios_base (Init too)
    "_ZNSo", "_ZNKSo", "_ZNSt9basic_iosIcSt11char_traitsIcEE", "_ZNKSt9basic_iosIcSt11char_traitsIcEE",
    "_ZTVSt9basic_iosIcSt11char_traitsIcEE", "_ZNSt8ios_base", "_ZNKSt8ios_base", "_ZTVSt8ios_base",
    "_ZSt16__ostream_insertIcSt11char_traitsIcEE", "_ZStlsISt11char_traitsIcEE", "_ZStlsIcSt11char_traitsIcE",
    "_ZSt4endlIcSt11char_traitsIcEE", "_ZSt5flushIcSt11char_traitsIcEE", "_ZSt4endsIcSt11char_traitsIcEE",
    "_ZNKSt5ctypeIcE", "_ZSt9use_facetISt5ctypeIcEE", "_ZNSt15basic_streambufIcSt11char_traitsIcEE",
    "_ZNKSt15basic_streambufIcSt11char_traitsIcEE", "_ZTVSt15basic_streambufIcSt11char_traitsIcEE",
    // std::string and string streams (in memory)
    "_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE",
    "_ZNKSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE", "_ZStplIcSt11char_traitsIcESaIcEE",
    "_ZNSt7__cxx119to_string", "_ZNSt7__cxx1115basic_stringbufIcSt11char_traitsIcESaIcEE",
    "_ZNKSt7__cxx1115basic_stringbufIcSt11char_traitsIcESaIcEE",
    "_ZTVNSt7__cxx1115basic_stringbufIcSt11char_traitsIcESaIcEE",
    "_ZNSt7__cxx1119basic_ostringstreamIcSt11char_traitsIcESaIcEE",
    "_ZNKSt7__cxx1119basic_ostringstreamIcSt11char_traitsIcESaIcEE",
    "_ZTVNSt7__cxx1119basic_ostringstreamIcSt11char_traitsIcESaIcEE",
    "_ZTTNSt7__cxx1119basic_ostringstreamIcSt11char_traitsIcESaIcEE",
    "_ZNSt7__cxx1118basic_stringstreamIcSt11char_traitsIcESaIcEE",
    "_ZNKSt7__cxx1118basic_stringstreamIcSt11char_traitsIcESaIcEE",
    "_ZTVNSt7__cxx1118basic_stringstreamIcSt11char_traitsIcESaIcEE",
    "_ZTTNSt7__cxx1118basic_stringstreamIcSt11char_traitsIcESaIcEE",
    // the default and classic locale only (a named one loads files)
    "_ZNSt6localeC1Ev", "_ZNSt6localeC2Ev", "_ZNSt6localeD1Ev", "_ZNSt6localeD2Ev", "_ZNSt6localeC1ERKS_",
    "_ZNSt6localeaSERKS_", "_ZNSt6locale7classicEv",
    // clocks
    "_ZNSt6chrono3_V212steady_clock3nowEv", "_ZNSt6chrono3_V212system_clock3nowEv",
    // the containers: std::vector's members (when another object instantiates
    // them) and the out-of-line helpers of the others
    "_ZNSt6vector", "_ZNKSt6vector", "_ZSt11_Hash_bytes", "_ZNKSt8__detail20_Prime_rehash_policy",
    "_ZNSt8__detail15_List_node_base", "_ZSt9terminatev", "_ZSt21__glibcxx_assert_fail",
    "_ZNSt15__exception_ptr13exception_ptr", "_ZSt17rethrow_exceptionNSt15__exception_ptr13exception_ptrE",
    "_ZSt17current_exceptionv",
    // the C++ ABI's type information
    "_ZTVN10__cxxabiv1"};

// Exception classes: their members, type information and vtables.
const char* const kStdExceptions[] = {
    "9exception",       "13runtime_error",   "11logic_error",       "16invalid_argument",
    "12out_of_range",   "12length_error",    "12domain_error",      "11range_error",
    "14overflow_error", "15underflow_error", "9bad_alloc",          "20bad_array_new_length",
    "8bad_cast",        "10bad_typeid",      "17bad_function_call", "13bad_exception"};

bool allowed_cxx(const std::string& sym) {
  for (const char* p : kAllowedCxxPrefixes)
    if (starts(sym, p)) return true;
  if (std_function(sym, "__throw_") || std_function(sym, "_Rb_tree_")) return true;
  if (sym == "_ZSt4cout" || sym == "_ZSt4cerr" || sym == "_ZSt4clog") return true;
  for (const char* e : kStdExceptions)
    for (const char* pre : {"_ZNSt", "_ZNKSt", "_ZTISt", "_ZTVSt", "_ZTSSt"})
      if (sym.compare(0, std::strlen(pre), pre) == 0 && sym.compare(std::strlen(pre), std::strlen(e), e) == 0)
        return true;
  // typeinfo of fundamental types and pointers to them (throw 1; catch (const char*))
  if (starts(sym, "_ZTI")) {
    std::size_t i = 4;
    while (i < sym.size() && (sym[i] == 'P' || sym[i] == 'K')) ++i;
    if (i + 1 == sym.size() && sym[i] >= 'a' && sym[i] <= 'z') return true;
  }
  return false;
}

bool is_cudalab(const std::string& nice) {
  return nice.find("cudalab::") != std::string::npos;
}

bool is_reference(const std::string& sym, const std::string& nice) {
  return starts(sym, "_ZN3ref") || starts(sym, "_ZNK3ref") || starts(nice, "ref::");
}

const char* kSystemWhy =
    "file, process and network calls are not allowed in a lab submission (the checks give the "
    "kernel everything it needs)";
const char* kHarnessWhy =
    "it is not part of lab.cuh; a submission may use only CUDA_CHECK, cudalab::ceil_div and CUDALAB_TODO "
    "from the harness";

std::string why_denied(const std::string& sym, const std::string& nice) {
  if (is_reference(sym, nice))
    return "the reference solution may not be called: the checks compare your kernel with it";
  if (starts(sym, "cublas")) return "cuBLAS may not be used: the lab asks you to write the kernel yourself";
  if (starts(sym, "cudnn")) return "cuDNN may not be used: the lab asks you to write the kernel yourself";
  if (starts(sym, "cusparse") || starts(sym, "cufft") || starts(sym, "curand") || starts(sym, "cusolver"))
    return "CUDA libraries may not be used: the lab asks you to write the kernel yourself";
  if (nice.find("thrust::") != std::string::npos || nice.find("cub::") != std::string::npos)
    return "Thrust and CUB may not be used: the lab asks you to write the kernel yourself";
  if (kDeniedCuda.count(sym) || kDeniedCuda.count(base_name(nice)))
    return "it would reset or reconfigure the GPU under the harness";
  if (is_cudalab(nice)) return kHarnessWhy;
  return kSystemWhy;
}

bool allowed_undefined(const std::string& full, const std::string& nice, bool cpu_mode) {
  const std::string sym = full.substr(0, full.find('@'));  // printf@GLIBC_2.2.5
  if (kAllowedCudalab.count(sym)) return true;
  if (is_cudalab(nice) || is_reference(sym, nice)) return false;
  if (nice.find("thrust::") != std::string::npos || nice.find("cub::") != std::string::npos) return false;
  if (starts(sym, "cuda")) return !kDeniedCuda.count(sym);  // the runtime's C API
  if (kCudaInternal.count(sym)) return true;                // launch and registration stubs
  if (cpu_mode) {
    // simt declares the runtime's calls as C++ functions: cudaMalloc(void**, unsigned long)
    const std::string base = base_name(nice);
    if (starts(base, "cuda") && base.find("::") == std::string::npos && base.find(' ') == std::string::npos)
      return !kDeniedCuda.count(base);
    if (kAllowedSimt.count(base)) return true;
  }
  if (kAllowedCxa.count(sym)) return true;
  if (allowed_cxx(sym)) return true;
  return kAllowedC.count(sym) > 0;
}

// The order in which reasons are shown: the most telling first.
int rank(const Violation& v) {
  if (v.kind == Violation::Kind::uses && v.why != kSystemWhy && v.why != kHarnessWhy) return 0;  // libraries
  if (v.kind == Violation::Kind::contains) return 1;
  if (v.kind == Violation::Kind::defines && v.why.find("lab does not ask for") == std::string::npos) return 2;
  if (v.kind == Violation::Kind::uses && v.why == kHarnessWhy) return 3;
  if (v.kind == Violation::Kind::uses) return 4;
  return 5;
}

void order(std::vector<Violation>& v) {
  std::stable_sort(v.begin(), v.end(),
                   [](const Violation& a, const Violation& b) { return rank(a) < rank(b); });
}

}  // namespace

std::vector<Violation> check_symbols(const std::vector<std::string>& undefined,
                                     const std::vector<std::string>& defined, bool cpu_mode) {
  std::vector<Violation> out;
  std::set<std::string> seen;
  for (const auto& sym : undefined) {
    const std::string nice = demangle(sym.substr(0, sym.find('@')));
    if (allowed_undefined(sym, nice, cpu_mode) || !seen.insert(nice).second) continue;
    out.push_back({nice, why_denied(sym, nice)});
  }
  // Thrust and CUB are header libraries: their code is in the object itself,
  // and it calls much else (dlopen, cudaSetDevice...): say only that.
  for (const auto& sym : defined) {
    const std::string nice = demangle(sym);
    if (nice.find("thrust::") != std::string::npos || nice.find("cub::") != std::string::npos)
      return {{"Thrust", why_denied(sym, nice)}};
  }
  order(out);
  return out;
}

// --- what a student object may define ----------------------------------------

void Owners::add(const std::string& who, std::shared_ptr<const NameMap> names) {
  if (names) sources_.emplace_back(who, std::move(names));
}

const std::string* Owners::owner(const std::string& mangled, std::string* object) const {
  for (const auto& [who, names] : sources_)
    if (auto it = names->find(mangled); it != names->end()) {
      if (object) *object = it->second;
      return &who;
    }
  return nullptr;
}

std::set<std::string> kernels_of(const std::vector<Symbol>& defined) {
  std::set<std::string> names, out;
  for (const auto& s : defined) names.insert(s.name);
  for (const auto& s : defined) {
    // _Z44__device_stub__Z17vector_add_kernelPKfS0_PfiPKfS0_Pfi demangles to
    // __device_stub__Z17vector_add_kernelPKfS0_Pfi(float const*, ...): the
    // stub of _Z17vector_add_kernelPKfS0_Pfi.
    const std::string nice = demangle(s.name);
    if (!starts(nice, "__device_stub_")) continue;
    const std::string kernel = nice.substr(14, nice.find('(') - 14);
    if (names.count(kernel)) out.insert(kernel);
  }
  return out;
}

namespace {

bool weak(char type) {
  return type == 'W' || type == 'V' || type == 'u';
}

bool function_type(char type) {
  return type == 'T' || type == 'W' || type == 't' || type == 'i';
}

// Instantiations of the standard library's templates and inline functions.
bool standard_library_name(const std::string& sym) {
  return starts_any(sym, {"_ZNSt",
                          "_ZNKSt",
                          "_ZSt",
                          "_ZN9__gnu_cxx",
                          "_ZNK9__gnu_cxx",
                          "_ZTVSt",
                          "_ZTISt",
                          "_ZTSSt",
                          "_ZTVNSt",
                          "_ZTINSt",
                          "_ZTSNSt",
                          "_ZTVN9__gnu_cxx",
                          "_ZTIN9__gnu_cxx",
                          "_ZTSN9__gnu_cxx",
                          "_ZZNSt",
                          "_ZZNKSt",
                          "_ZZSt",
                          "_ZGVZNSt",
                          "_ZGVZNKSt",
                          "_ZGVZSt",
                          "_ZNSo",
                          "_ZNKSo",
                          "_ZNSi",
                          "_ZNKSi",
                          "_ZNSd"});
}

// CPU mode: instantiations of simt's inline functions and templates
// (cudaMalloc<float>, atomicAdd, min, simt::launch<...>) when g++ did not inline them.
bool simt_inline_name(const std::string& sym, const std::string& nice) {
  if (starts(sym, "_ZN4simt") || starts(sym, "_ZNK4simt") || starts(sym, "_ZZN4simt")) return true;
  std::string base = base_name(nice);
  if (const auto sp = base.rfind(' '); sp != std::string::npos) base = base.substr(sp + 1);  // return type
  base = base.substr(0, base.find('<'));
  return base.find("::") == std::string::npos && (starts(base, "cuda") || starts(base, "atomic") ||
                                                  starts(base, "__") || base == "min" || base == "max");
}

// Header-inline members that libstdc++.so exports too and that allowed use
// instantiates (std::endl widens '\n'): their code is fixed by the header.
const std::set<std::string> kHeaderInlineExported = {"_ZNKSt5ctypeIcE8do_widenEc"};

// Weak definitions the harness also has, but that a student file makes by
// catching the harness's exceptions: type information (data, not code).
bool harness_type_info(const std::string& sym) {
  return sym == "_ZTIN7cudalab9CudaErrorE" || sym == "_ZTSN7cudalab9CudaErrorE" ||
         sym == "_ZTIN7cudalab14NotImplementedE" || sym == "_ZTSN7cudalab14NotImplementedE";
}

std::string consequence(const std::string& who) {
  if (who == "the harness" || who == "Catch2, the harness's test framework")
    return "a submission may not replace the harness's code";
  if (who == "the lab's tests" || who == "the reference solution")
    return "a submission may not replace the course's code";
  if (who == "the CUDA runtime" || who == "simt, CPU mode's CUDA runtime")
    return "a submission may not replace the CUDA runtime (the harness launches, times and checks "
           "through it)";
  return "a submission may not replace the C and C++ runtime (the harness uses it too)";
}

}  // namespace

std::vector<Violation> check_definitions(const std::vector<Symbol>& defined, const ObjectRules& rules,
                                         const std::filesystem::path& object) {
  std::set<std::string> kernels = rules.kernels;
  if (!rules.cpu_mode) kernels.merge(kernels_of(defined));
  std::string launchers;
  for (const auto& l : rules.launchers) launchers += (launchers.empty() ? "" : " and ") + l;
  std::vector<Violation> out;
  std::set<std::string> seen;
  for (const auto& s : defined) {
    const std::string& sym = s.name;
    const std::string nice = demangle(sym);
    const char* what = function_type(s.type) ? "function" : "variable";
    auto reject = [&](std::string why) {
      if (seen.insert(nice).second) out.push_back({nice, std::move(why), Violation::Kind::defines});
    };
    // Generated beside every function with exception handling: a pointer to
    // the personality routine or a caught type (verified in the object's
    // relocations by check_object).
    if (starts(sym, "DW.ref.") && weak(s.type)) continue;
    if (harness_type_info(sym) && weak(s.type)) continue;
    if (kHeaderInlineExported.count(sym) && weak(s.type)) continue;
    // Who else defines it: the linker keeps one definition (the student
    // file's, which comes first), or the student's would interpose on the
    // shared library's.
    std::string theirs;
    const std::string* who = rules.owners ? rules.owners->owner(sym, &theirs) : nullptr;
    std::string catch2 = "Catch2, the harness's test framework";
    if (!who && starts(nice, "Catch::")) who = &catch2;
    if (who) {
      // The same instantiation as the harness's (std::vector<std::string>,
      // std::mt19937_64): the linker may keep either copy.
      if (weak(s.type) && standard_library_name(sym) && !object.empty() && !theirs.empty() &&
          same_definition(object, theirs, sym))
        continue;
      // Theirs comes first in the link, so theirs is the copy the whole
      // binary uses (nvcc's std::vector<float> next to g++'s in the harness).
      if (weak(s.type) && standard_library_name(sym) && rules.owners &&
          rules.owners->linked_first.count(*who))
        continue;
      if (weak(s.type) && standard_library_name(sym))
        reject(
            fmt::format("an instantiation of a standard template that {} defines too: the linker keeps "
                        "one copy for the whole test binary, so a submission may not supply it (use the "
                        "standard library differently in your launcher, or not at all)",
                        *who));
      else
        reject(fmt::format("a {} of {}: {}", what, *who, consequence(*who)));
      continue;
    }
    // The lab's launchers, in the global namespace, any signature.
    const std::string base = base_name(nice);
    if (function_type(s.type) &&
        std::find(rules.launchers.begin(), rules.launchers.end(), base) != rules.launchers.end())
      continue;
    // Kernels (global even in an anonymous namespace: nvcc renames it) and
    // their host stubs.
    if (kernels.count(sym)) continue;
    if (starts(nice, "__device_stub_") && kernels.count(nice.substr(14, nice.find('(') - 14))) continue;
    // The reference solution's foils (a submission that is the solution).
    if (function_type(s.type) && rules.owners && rules.owners->foils.count(nice)) continue;
    // nvcc gives anonymous namespaces a name unique to the file, and global
    // linkage: nothing else can define these.
    if (starts(nice, "(anonymous namespace)::") && sym.find("_GLOBAL__N_") != std::string::npos) continue;
    if (weak(s.type) && standard_library_name(sym)) continue;
    if (weak(s.type) && sym == "_ZN7cudalab8ceil_divEii") continue;  // lab.cuh's, not inlined
    if (rules.cpu_mode && weak(s.type) && simt_inline_name(sym, nice)) continue;
    if (is_cudalab(nice)) {
      reject(fmt::format("a {} in the harness's namespace: {}", what,
                         "a submission may not add to or replace the harness's code"));
      continue;
    }
    reject(fmt::format(
        "a global {} that the lab does not ask for: {}; make helper {} `static` (or put them in an anonymous "
        "namespace), so that no global name of a submission can replace code of the harness or the runtime",
        what,
        launchers.empty() ? std::string("a submission may define only its kernels and launchers")
                          : fmt::format("the tests call only {}", launchers),
        function_type(s.type) ? "functions" : "variables"));
  }
  return out;
}

// --- the object file itself -------------------------------------------------

namespace {

// An object file read whole, and the ELF reader over its bytes (which it
// points into: neither copied nor moved).
struct Object {
  explicit Object(const std::filesystem::path& path) : bytes(read_bytes(path)), elf(bytes) {}
  Object(const Object&) = delete;
  Object& operator=(const Object&) = delete;

  static std::string read_bytes(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return in ? ss.str() : std::string();
  }
  // "" where its header and section table can be read, else why not.
  std::string problem(const std::filesystem::path& path) const {
    if (!elf.is_elf64()) return fmt::format("{} is not a 64-bit ELF object", path.filename().string());
    if (!elf.has_section_table())
      return fmt::format("{}: its section headers could not be read", path.filename().string());
    return {};
  }

  std::string bytes;
  elf::File elf;
};

// The function of `section` that holds `offset`, demangled, or "".
std::string function_at(const elf::File& elf, std::size_t section, std::uint64_t offset) {
  const auto table = elf.symbols();
  std::string best;
  for (std::size_t i = 0; i < table.count; ++i) {
    const Elf64_Sym s = elf.symbol(table, i);
    if (s.st_shndx != section || ELF64_ST_TYPE(s.st_info) != STT_FUNC) continue;
    if (s.st_value <= offset && offset < s.st_value + std::max<std::uint64_t>(s.st_size, 1))
      best = demangle(std::string(elf.symbol_name(table, s)));
  }
  return best;
}

bool pc_relative(std::uint32_t type) {
  return type == R_X86_64_PC32 || type == R_X86_64_PLT32 || type == R_X86_64_GOTPCREL ||
         type == R_X86_64_GOTPCRELX || type == R_X86_64_REX_GOTPCRELX || type == R_X86_64_PC64;
}

// A relocation's target, as something two objects can compare: a global
// name, or for a local target what it points to (a string's text, else the
// section's kind and 16 bytes).
std::string target_of(const elf::File& elf, const elf::File::Symbols& table, const Elf64_Rela& r) {
  const std::size_t si = ELF64_R_SYM(r.r_info);
  if (si >= table.count) return "?";
  const Elf64_Sym t = elf.symbol(table, si);
  const std::string name(elf.symbol_name(table, t));
  if (ELF64_ST_BIND(t.st_info) != STB_LOCAL && !name.empty()) return fmt::format("{}{:+}", name, r.r_addend);
  if (t.st_shndx == SHN_UNDEF || t.st_shndx >= elf.section_count()) return "?local";
  const Elf64_Shdr ts = elf.section(t.st_shndx);
  if (ts.sh_flags & SHF_EXECINSTR) return "?code";  // a local function: not the library's
  const std::int64_t at =
      std::int64_t(t.st_value) + r.r_addend + (pc_relative(ELF64_R_TYPE(r.r_info)) ? 4 : 0);
  const auto contents = elf.contents(t.st_shndx);
  if (at < 0 || !contents || std::uint64_t(at) >= contents->size())
    return fmt::format("{}@{}", std::string(elf.section_name(t.st_shndx)).substr(0, 7), at);
  const std::string_view rest = contents->substr(std::uint64_t(at));
  if (ts.sh_flags & SHF_STRINGS) return "str:" + std::string(rest.substr(0, rest.find('\0')));
  if (ts.sh_flags & SHF_WRITE) return "?data";  // writable: its contents decide nothing here
  return "bytes:" + std::string(rest.substr(0, 16));
}

// A defined symbol's code: its bytes and its relocations, comparable.
bool definition(const std::filesystem::path& file, const std::string& symbol, std::string& bytes,
                std::vector<std::string>& relocs) {
  const Object object(file);
  const elf::File& elf = object.elf;
  if (!object.problem(file).empty()) return false;
  const auto table = elf.symbols();
  for (std::size_t i = 0; i < table.count; ++i) {
    const Elf64_Sym s = elf.symbol(table, i);
    if (ELF64_ST_BIND(s.st_info) == STB_LOCAL || s.st_shndx == SHN_UNDEF ||
        s.st_shndx >= elf.section_count() || elf.symbol_name(table, s) != symbol)
      continue;
    const auto contents = elf.contents(s.st_shndx);
    if (!contents || s.st_value > contents->size() || s.st_size > contents->size() - s.st_value) return false;
    bytes.assign(contents->substr(s.st_value, s.st_size));
    const auto relocations = elf.relocations(s.st_shndx);
    if (!relocations) return false;
    for (const Elf64_Rela& r : *relocations)
      if (r.r_offset >= s.st_value && r.r_offset < s.st_value + s.st_size)
        relocs.push_back(fmt::format("{} {} {}", r.r_offset - s.st_value, ELF64_R_TYPE(r.r_info),
                                     target_of(elf, table, r)));
    std::sort(relocs.begin(), relocs.end());
    return true;
  }
  return false;
}

}  // namespace

bool same_definition(const std::filesystem::path& a, const std::filesystem::path& b,
                     const std::string& symbol) {
  std::string bytes_a, bytes_b;
  std::vector<std::string> relocs_a, relocs_b;
  if (!definition(a, symbol, bytes_a, relocs_a) || !definition(b, symbol, bytes_b, relocs_b)) return false;
  for (const auto* r : {&relocs_a, &relocs_b})
    for (const auto& x : *r)
      if (x.find(" ?") != std::string::npos) return false;  // a local target that cannot be compared
  return bytes_a == bytes_b && relocs_a == relocs_b;
}

std::vector<Violation> system_call_instructions(const std::filesystem::path& path, std::string& error) {
  const Object object(path);
  const elf::File& elf = object.elf;
  if (std::string why = object.problem(path); !why.empty()) {
    error = why;
    return {};
  }
  std::vector<Violation> out;
  std::set<std::string> seen;
  bool stack_note = false;
  for (std::size_t i = 0; i < elf.section_count(); ++i) {
    const Elf64_Shdr sh = elf.section(i);
    const std::string name(elf.section_name(i));
    if (name == ".note.GNU-stack") {
      stack_note = true;
      if (sh.sh_flags & SHF_EXECINSTR)
        out.push_back(
            {"a request for an executable stack",
             "(section .note.GNU-stack): " +
                 std::string("code written at run time could then run; a submission may not ask for it"),
             Violation::Kind::contains});
      continue;
    }
    if (!(sh.sh_flags & SHF_EXECINSTR)) continue;
    if (sh.sh_flags & SHF_WRITE)
      out.push_back({fmt::format("a section that is both writable and executable ({})", name),
                     "in its host code: code written at run time could run from it; a submission may not "
                     "have one",
                     Violation::Kind::contains});
    if (sh.sh_type == SHT_NOBITS) continue;
    const auto contents = elf.contents(i);
    if (!contents) {
      error = fmt::format("{}: section {} could not be read", path.filename().string(), name);
      return {};
    }
    const auto* code = reinterpret_cast<const unsigned char*>(contents->data());
    // Byte by byte, not instruction by instruction: a jump into the middle of
    // an instruction, or bytes emitted as data, run just the same.
    for (std::uint64_t k = 0; k + 1 < contents->size(); ++k) {
      const char* insn = code[k] == 0x0f && code[k + 1] == 0x05   ? "syscall"
                         : code[k] == 0x0f && code[k + 1] == 0x34 ? "sysenter"
                         : code[k] == 0xcd && code[k + 1] == 0x80 ? "int 0x80"
                                                                  : nullptr;
      if (!insn) continue;
      const std::string fn = function_at(elf, i, k);
      if (!seen.insert(fmt::format("{}|{}|{}", insn, name, fn)).second) continue;
      out.push_back({fmt::format("a system call instruction ({})", insn),
                     fmt::format("in its host code (section {}{}, offset {:#x}): a submission may reach the "
                                 "operating system only through the CUDA runtime",
                                 name, fn.empty() ? "" : ", function " + fn, k),
                     Violation::Kind::contains});
    }
  }
  if (!stack_note)
    out.push_back({"no .note.GNU-stack section",
                   "(without it the linker makes the stack executable): compile it with the course's build",
                   Violation::Kind::contains});
  return out;
}

namespace {

// Each DW.ref.X the object defines must be a pointer to X, as the compiler
// makes it: the linker keeps the first one, the student file's, for the whole
// binary, so another target would redirect the harness's exception handling.
std::vector<Violation> forged_dw_refs(const std::filesystem::path& path, std::string& error) {
  const Object object(path);
  const elf::File& elf = object.elf;
  if (std::string why = object.problem(path); !why.empty()) {
    error = why;
    return {};
  }
  const auto table = elf.symbols();
  std::vector<Violation> out;
  for (std::size_t i = 0; i < table.count; ++i) {
    const Elf64_Sym s = elf.symbol(table, i);
    const std::string name(elf.symbol_name(table, s));
    if (!starts(name, "DW.ref.") || ELF64_ST_BIND(s.st_info) == STB_LOCAL) continue;
    const std::string target = name.substr(7);
    int good = 0, relocs = 0;
    // Unreadable relocations: none point to the target, and the check fails.
    for (const Elf64_Rela& r : elf.relocations(s.st_shndx).value_or(std::vector<Elf64_Rela>{})) {
      if (r.r_offset < s.st_value || r.r_offset >= s.st_value + 8) continue;
      ++relocs;
      const std::size_t si = ELF64_R_SYM(r.r_info);
      if (r.r_offset == s.st_value && ELF64_R_TYPE(r.r_info) == R_X86_64_64 && r.r_addend == 0 &&
          si < table.count && elf.symbol_name(table, elf.symbol(table, si)) == target)
        ++good;
    }
    if (good != 1 || relocs != 1 || s.st_size != 8)
      out.push_back({name,
                     fmt::format("which does not point to {}: a submission may not redirect the C++ "
                                 "runtime's exception handling",
                                 demangle(target)),
                     Violation::Kind::defines});
  }
  return out;
}

std::vector<Symbol> nm_symbols(const std::filesystem::path& file, const std::vector<std::string>& flags,
                               std::string& error) {
  ProcessOptions opt;
  opt.argv = {"nm"};
  opt.argv.insert(opt.argv.end(), flags.begin(), flags.end());
  opt.argv.push_back("--format=posix");
  opt.argv.push_back(file.string());
  opt.timeout_s = kSymbolListLimit_s;
  opt.output_cap = std::size_t(256) << 20;
  const ProcessResult p = run_process(opt);
  std::vector<Symbol> out;
  if (!p.ok()) {
    error = fmt::format("nm could not read {}: {}", file.filename().string(), p.describe());
    return out;
  }
  // "name type value size"; an archive's member headers ("lib.a[x.o]:") have
  // no space (a thin archive names its members by path).
  std::istringstream in(p.output);
  std::string member;
  for (std::string line; std::getline(in, line);) {
    const auto sp = line.find(' ');
    if (sp == std::string::npos && line.size() > 2 && line.compare(line.size() - 2, 2, "]:") == 0) {
      const auto open = line.find('[');
      member = open == std::string::npos ? "" : line.substr(open + 1, line.size() - open - 3);
      continue;
    }
    if (sp == std::string::npos || sp == 0 || sp + 1 >= line.size()) continue;
    out.push_back({line.substr(0, sp), line[sp + 1], member});
  }
  return out;
}

std::vector<std::string> names(const std::vector<Symbol>& symbols) {
  std::vector<std::string> out;
  for (const auto& s : symbols) out.push_back(s.name);
  return out;
}

}  // namespace

std::vector<Violation> check_object(const std::filesystem::path& object, const ObjectRules& rules,
                                    std::string& error, std::set<std::string>* kernels) {
  const auto undefined = nm_symbols(object, {"--undefined-only"}, error);
  if (!error.empty()) return {};
  const auto defined = nm_symbols(object, {"--defined-only", "--extern-only"}, error);
  if (!error.empty()) return {};
  auto out = check_symbols(names(undefined), names(defined), rules.cpu_mode);
  // Thrust is named once, as such: its definitions say nothing more.
  if (out.size() == 1 && out[0].symbol == "Thrust") return out;
  for (auto& v : check_definitions(defined, rules, object)) out.push_back(std::move(v));
  for (auto& v : forged_dw_refs(object, error)) out.push_back(std::move(v));
  for (auto& v : system_call_instructions(object, error)) out.push_back(std::move(v));
  if (kernels) *kernels = kernels_of(defined);
  order(out);
  return out;
}

std::vector<Violation> check_object(const std::filesystem::path& object, std::string& error) {
  return check_object(object, ObjectRules{}, error);
}

std::set<std::string> object_kernels(const std::filesystem::path& object, std::string& error) {
  const auto defined = nm_symbols(object, {"--defined-only", "--extern-only"}, error);
  return error.empty() ? kernels_of(defined) : std::set<std::string>{};
}

// --- who owns the names of the link -----------------------------------------

std::shared_ptr<const NameMap> library_names(const std::filesystem::path& lib, bool shared,
                                             std::string& error, const std::filesystem::path& cache_dir) {
  static std::mutex mutex;
  static std::map<std::string, std::pair<std::string, std::shared_ptr<const NameMap>>> cache;
  std::error_code ec;
  const auto path = std::filesystem::canonical(lib, ec);
  if (ec) return nullptr;
  const std::string stamp = file_stamp(path);
  if (stamp.empty()) return nullptr;
  const std::string key = path.string() + (shared ? " -D" : "");
  std::lock_guard<std::mutex> lock(mutex);
  // Kept per cache folder too (a grader has one; a test compares two).
  const std::string kept = cache_dir.string() + "\n" + key;
  auto it = cache.find(kept);
  if (it != cache.end() && it->second.first == stamp) return it->second.second;
  if (!cache_dir.empty())
    if (auto names = read_saved_names(cache_dir, key, stamp)) {
      cache[kept] = {stamp, names};
      return names;
    }
  std::string err;
  const auto symbols = nm_symbols(path,
                                  shared ? std::vector<std::string>{"-D", "--defined-only"}
                                         : std::vector<std::string>{"--defined-only", "--extern-only"},
                                  err);
  if (!err.empty()) {
    error += (error.empty() ? "" : "; ") + err;
    return nullptr;
  }
  auto set = std::make_shared<NameMap>();
  for (const auto& s : symbols) {
    if (s.type == 'A' || s.type == 'U' || s.type == 'w' || s.type == 'v') continue;
    std::string where = shared ? "" : s.object.empty() ? path.string() : s.object;
    if (!where.empty() && !std::filesystem::is_regular_file(where, ec)) where.clear();
    set->emplace(s.name.substr(0, s.name.find('@')), where);
  }
  cache[kept] = {stamp, set};
  if (!cache_dir.empty()) save_names(cache_dir, key, stamp, *set);
  return set;
}

namespace {

// Where the compiler finds a library (`c++ -print-file-name=libc.so.6`).
std::filesystem::path compiler_file(const std::string& name) {
  // Asked once per process: every lab's policy asks for the same libraries.
  static std::mutex mutex;
  static std::map<std::string, std::filesystem::path> known;  // found ones only: a failure is asked again
  std::lock_guard<std::mutex> lock(mutex);
  if (const auto it = known.find(name); it != known.end()) return it->second;
  ProcessOptions opt;
  opt.argv = {"c++", "-print-file-name=" + name};
  opt.timeout_s = kCompilerQueryLimit_s;
  const ProcessResult p = run_process(opt);
  std::string out = p.output.substr(0, p.output.find('\n'));
  if (!p.ok() || out.empty() || out == name) return {};
  return known[name] = out;
}

}  // namespace

std::filesystem::path find_cudart_static(const std::string& nvcc) {
  namespace fs = std::filesystem;
  fs::path exe = nvcc;
  if (nvcc.find('/') == std::string::npos) {
    exe.clear();
    const char* path = std::getenv("PATH");
    std::istringstream dirs(path ? path : "");
    for (std::string d; std::getline(dirs, d, ':');)
      if (!d.empty() && fs::exists(fs::path(d) / nvcc)) {
        exe = fs::path(d) / nvcc;
        break;
      }
  }
  std::error_code ec;
  if (exe.empty()) return {};
  exe = fs::canonical(exe, ec);
  if (ec) return {};
  const fs::path root = exe.parent_path().parent_path();
  for (const char* dir : {"lib64", "targets/x86_64-linux/lib", "lib"})
    if (fs::exists(root / dir / "libcudart_static.a", ec)) return root / dir / "libcudart_static.a";
  return {};
}

Owners link_owners(const std::filesystem::path& build, const std::string& lab, bool cpu_mode,
                   const std::filesystem::path& cudart_static, std::string& error,
                   const std::filesystem::path& cache_dir) {
  namespace fs = std::filesystem;
  Owners o;
  const fs::path h = build / "harness";
  const char* suffix = cpu_mode ? "-cpu" : "";
  for (const fs::path& lib :
       {h / fmt::format("libcudalab-harness{}.a", suffix), h / "libcudalab-harness-host.a",
        h / fmt::format("libcudalab-main{}.a", suffix)})
    if (fs::exists(lib)) o.add("the harness", library_names(lib, false, error, cache_dir));
  o.linked_first = {"the harness", "the reference solution", "the lab's tests",
                    "simt, CPU mode's CUDA runtime"};
  // The lab's tests and references: the references' names are ref::..., and
  // their global functions are the foils a solution file defines too.
  const fs::path checks = build / "labs" / fmt::format("lib{}-checks{}.a", lab, suffix);
  if (fs::exists(checks))
    if (auto names = library_names(checks, false, error, cache_dir)) {
      auto refs = std::make_shared<NameMap>();
      auto tests = std::make_shared<NameMap>();
      for (const auto& [n, where] : *names) {
        if (starts(n, "_ZN3ref") || starts(n, "_ZNK3ref")) {
          refs->emplace(n, where);
          const std::string nice = demangle(n);
          if (starts(nice, "ref::")) o.foils.insert(nice.substr(5));
        } else {
          tests->emplace(n, where);
        }
      }
      o.add("the reference solution", refs);
      o.add("the lab's tests", tests);
    }
  if (cpu_mode && fs::exists(build / "simt" / "libcudalab-simt.a"))
    o.add("simt, CPU mode's CUDA runtime",
          library_names(build / "simt" / "libcudalab-simt.a", false, error, cache_dir));
  for (const auto& [file, who] : std::vector<std::pair<std::string, std::string>>{
           {"libc.so.6", "the C library"},
           {"libstdc++.so.6", "the C++ standard library"},
           {"libm.so.6", "the math library"},
           {"libgcc_s.so.1", "the C++ runtime's support library (libgcc_s)"},
           {"libpthread.so.0", "the C library"},
           {"libdl.so.2", "the C library"},
           {"librt.so.1", "the C library"}}) {
    const fs::path p = compiler_file(file);
    if (!p.empty() && fs::exists(p)) o.add(who, library_names(p, true, error, cache_dir));
  }
  if (!cpu_mode && !cudart_static.empty() && fs::exists(cudart_static))
    o.add("the CUDA runtime", library_names(cudart_static, false, error, cache_dir));
  return o;
}

std::vector<std::string> forbidden_includes(const std::vector<std::string>& dependencies,
                                            const std::filesystem::path& source_root,
                                            const std::filesystem::path& student_dir) {
  namespace fs = std::filesystem;
  const std::string root = fs::weakly_canonical(source_root).string() + "/";
  const std::string harness = root + "harness/include/";
  // CPU mode's compiles include simt's CUDA headers in place of the toolkit's.
  const std::string simt = root + "simt/include/";
  const std::string own = fs::weakly_canonical(student_dir).string() + "/";
  std::vector<std::string> out;
  for (const auto& d : dependencies) {
    const std::string p = fs::weakly_canonical(fs::path(d)).string();
    if (starts(p, harness.c_str()) || starts(p, simt.c_str()) || starts(p, own.c_str())) continue;
    if (starts(p, root.c_str()) || p.find("/solutions/") != std::string::npos)
      out.push_back(p.substr(starts(p, root.c_str()) ? root.size() : 0));
  }
  return out;
}

}  // namespace cudalab
