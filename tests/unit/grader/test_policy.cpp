// What a graded student object may call, define and contain, and which
// includes it may use.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "cudalab/catch.h"
#include "run/policy.h"
#include "run/process.h"

using namespace cudalab;

TEST_CASE("The calls a kernel launcher needs are allowed", "[policy][grader]") {
  const std::vector<std::string> ok = {
      "cudaLaunchKernel",
      "__cudaPushCallConfiguration",
      "__cudaRegisterFatBinary",
      "cudaGetLastError",
      "cudaFuncSetAttribute",
      "printf",
      "memset",
      "sqrtf",
      "_Znwm",
      "_ZdlPvm",
      "__cxa_throw",
      "_ZN7cudalab15not_implementedEPKcS1_i",
      "_ZNSt6vectorIfSaIfEE17_M_realloc_insertIJRKfEEEvN9__gnu_cxx17__normal_iteratorIPfS1_EEDpOT_"};
  CHECK(check_symbols(ok, {}).empty());
}

TEST_CASE("Calls into the reference, cuBLAS and the system are refused with the symbol named",
          "[policy][grader]") {
  const auto v =
      check_symbols({"fopen", "_ZN3ref12matmul_tiledEPKfS1_Pfiii", "cublasSgemm_v2", "cudaDeviceReset"}, {});
  REQUIRE(v.size() == 4);
  // The most telling reasons first.
  CHECK_THAT(v[0].symbol, Catch::Contains("ref::matmul_tiled"));
  CHECK_THAT(v[0].why, Catch::Contains("reference solution"));
  CHECK(v[1].symbol == "cublasSgemm_v2");
  CHECK_THAT(v[1].why, Catch::Contains("cuBLAS"));
  CHECK_THAT(v[2].why, Catch::Contains("reset or reconfigure the GPU"));
  CHECK(v[3].symbol == "fopen");
  CHECK_THAT(v[3].why, Catch::Contains("file, process and network calls are not allowed"));
}

TEST_CASE("Thrust is named as such, not by the many calls its headers make", "[policy][grader]") {
  const auto v =
      check_symbols({"dlopen", "cudaSetDevice", "getenv"}, {"_ZN6thrust6detail6vectorIfE6resizeEm"});
  REQUIRE(v.size() == 1);
  CHECK_THAT(v[0].why, Catch::Contains("Thrust"));
}

TEST_CASE("Including the course's own files is refused, its public headers are not", "[policy][grader]") {
  const auto bad = forbidden_includes(
      {"/course/labs/03_tiling/matmul_tiled.cu", "/usr/include/stdio.h",
       "/course/harness/include/cudalab/lab.cuh", "/course/solutions/03_tiling/matmul_tiled.cu",
       "/course/simt/include/cuda_runtime.h", "/course/simt/src/scheduler.cpp"},
      "/course", "/course/labs/03_tiling");
  // simt's CUDA headers are what CPU mode's compile of any file includes;
  // the rest of simt is no more a student's than the tests are.
  REQUIRE(bad.size() == 2);
  CHECK(bad[0] == "solutions/03_tiling/matmul_tiled.cu");
  CHECK(bad[1] == "simt/src/scheduler.cpp");
}

// --- Compiled objects: what a hostile submission defines, calls and contains.

namespace {

namespace fs = std::filesystem;

// A folder of small C++ objects compiled by the test (`c++ -c`).
struct Objects {
  fs::path dir;
  Objects() {
    dir = fs::temp_directory_path() / ("cudalab-policy-" + std::to_string(::getpid()));
    fs::create_directories(dir);
  }
  ~Objects() { fs::remove_all(dir); }

  fs::path compile(const std::string& name, const std::string& code) const {
    const fs::path src = dir / (name + ".cpp"), obj = dir / (name + ".o");
    std::ofstream(src) << code;
    ProcessOptions opt;
    opt.argv = {"c++", "-std=c++17", "-O2", "-c", src.string(), "-o", obj.string()};
    opt.timeout_s = 120;
    const ProcessResult p = run_process(opt);
    INFO(p.output);
    REQUIRE(p.ok());
    return obj;
  }
};

const Objects& objects() {
  static const Objects o;
  return o;
}

// The lab's pretend harness: a timing function and the check entry points.
const char* const kHarness = R"(
namespace cudalab {
double time_side_by_side(void (*student)(), void (*reference)(), int rounds) { return rounds; }
void begin_check(const char* name) { (void)name; }
}
namespace std {
__attribute__((noinline)) inline int cudalab_sample(int x) { return x * 3 + 1; }
}
int harness_sample(int x) { return std::cudalab_sample(x); }
)";

// Owners as the grader has them: the runtime's shared libraries (the real
// ones), the CUDA runtime and a harness object.
const Owners& owners() {
  static const Owners o = [] {
    std::string error;
    Owners own = link_owners(objects().dir / "no-build", "03_tiling", false, "", error);
    REQUIRE(error.empty());
    own.add("the harness", library_names(objects().compile("harness", kHarness), false, error));
    own.add("the CUDA runtime", std::make_shared<const NameMap>(NameMap{{"cudaEventElapsedTime", ""}}));
    REQUIRE(error.empty());
    return own;
  }();
  return o;
}

std::vector<Violation> check(const std::string& name, const std::string& code) {
  ObjectRules rules;
  rules.launchers = {"matmul_tiled"};
  rules.owners = &owners();
  std::string error;
  auto v = check_object(objects().compile(name, code), rules, error);
  REQUIRE(error.empty());
  return v;
}

std::string all(const std::vector<Violation>& v) {
  std::string out;
  for (const auto& x : v) out += x.describe("matmul_tiled.cu") + "\n";
  return out;
}

const char* const kLauncher =
    "void matmul_tiled(const float*, const float*, float* C, int M, int N, int K) { C[0] = M + N + K; }\n";

}  // namespace

TEST_CASE("A clean launcher passes: static helpers, std::vector, printf and std::cout", "[policy][grader]") {
  const auto v = check("clean", std::string(R"(
#include <cstdio>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>
static float helper(float x) { return x * 2; }
namespace { int other(int x) { return x + 1; } }
)") + R"(
void matmul_tiled(const float* A, const float* B, float* C, int M, int N, int K) {
  std::vector<float> h(M);
  for (int i = 0; i < M; ++i) h.push_back(helper(A[i] + B[i]));
  printf("%d %f\n", other(N), h.back());
  std::cout << "K = " << K << std::endl;
  std::cerr << std::string("done") + "\n";
  if (K < 0) throw std::runtime_error("negative K");
  C[0] = h[0];
}
)");
  INFO(all(v));
  CHECK(v.empty());
}

TEST_CASE("Defining a harness function, strong or weak, is refused naming the owner", "[policy][grader]") {
  for (const char* attr : {"", "__attribute__((weak))"}) {
    const auto v =
        check(std::string("forge") + (*attr ? "-weak" : ""),
              std::string("namespace cudalab {\n") + attr +
                  " double time_side_by_side(void (*)(), void (*)(), int) { return 2.0; }\n}\n" + kLauncher);
    INFO(all(v));
    REQUIRE(v.size() == 1);
    CHECK(v[0].kind == Violation::Kind::defines);
    CHECK_THAT(v[0].describe("matmul_tiled.cu"),
               Catch::StartsWith("matmul_tiled.cu defines cudalab::time_side_by_side(void (*)(), void (*)(), "
                                 "int), a function of the harness: a submission may not replace the "
                                 "harness's code"));
  }
}

TEST_CASE("Defining a CUDA runtime or C library function is refused naming the library", "[policy][grader]") {
  auto v = check("cudart", std::string(R"(extern "C" int cudaEventElapsedTime(float* ms, void*, void*) {
  *ms = 1e-3f; return 0; }
)") + kLauncher);
  REQUIRE(v.size() == 1);
  CHECK_THAT(v[0].describe("matmul_tiled.cu"),
             Catch::Contains("defines cudaEventElapsedTime, a function of the CUDA runtime"));
  v = check("libc", std::string(R"(#include <cstddef>
extern "C" void* memcpy(void* d, const void* s, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) static_cast<char*>(d)[i] = static_cast<const char*>(s)[i];
  return d; }
)") + kLauncher);
  REQUIRE(v.size() == 1);
  CHECK_THAT(v[0].describe("matmul_tiled.cu"),
             Catch::Contains("defines memcpy, a function of the C library: a submission may not replace the "
                             "C and C++ runtime"));
}

TEST_CASE("An unknown global helper is refused: helpers must be static", "[policy][grader]") {
  const auto v =
      check("helper", std::string("float scale(float x) { return 2 * x; }\nint counter = 3;\n") + kLauncher);
  INFO(all(v));
  REQUIRE(v.size() == 2);
  CHECK_THAT(all(v), Catch::Contains("defines scale(float), a global function that the lab does not ask for: "
                                     "the tests call only matmul_tiled; make helper functions `static`"));
  CHECK_THAT(all(v), Catch::Contains("defines counter, a global variable"));
}

TEST_CASE("Calling the harness beyond lab.cuh is refused, also from a static constructor",
          "[policy][grader]") {
  const auto v = check("calls", std::string(R"(
namespace cudalab { void begin_check(const char* name); }
static int forged = (cudalab::begin_check("square"), 1);
)") + kLauncher);
  REQUIRE(v.size() == 1);
  CHECK(v[0].describe("matmul_tiled.cu") ==
        "matmul_tiled.cu uses cudalab::begin_check(char const*): it is not part of lab.cuh; a submission may "
        "use only CUDA_CHECK, cudalab::ceil_div and CUDALAB_TODO from the harness");
}

TEST_CASE("System call instructions are found byte by byte, with section and function", "[policy][grader]") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"asm volatile(\"syscall\" : : \"a\"(39) : \"rcx\", \"r11\", \"memory\");", "(syscall)"},
      {"asm volatile(\"jmp 1f\\n.byte 0x0f, 0x05\\n1:\");", "(syscall)"},
      {"asm volatile(\"int $0x80\" : : \"a\"(20) : \"memory\");", "(int 0x80)"},
      {"asm volatile(\"sysenter\");", "(sysenter)"}};
  int n = 0;
  for (const auto& [code, insn] : cases) {
    const auto v = check("sys" + std::to_string(n++),
                         "void matmul_tiled(const float*, const float*, float* C, int, int, int) {\n  " +
                             code + "\n  C[0] = 1;\n}\n");
    INFO(all(v));
    REQUIRE(v.size() == 1);
    CHECK(v[0].kind == Violation::Kind::contains);
    CHECK_THAT(
        v[0].describe("matmul_tiled.cu"),
        Catch::StartsWith("matmul_tiled.cu contains a system call instruction " + insn +
                          " in its host code (section .text, function matmul_tiled(float const*, float "
                          "const*, float*, int, int, int), offset"));
    CHECK_THAT(v[0].why, Catch::EndsWith("a submission may reach the operating system only through the CUDA "
                                         "runtime"));
  }
}

TEST_CASE("A static constructor's system call is found in .text.startup", "[policy][grader]") {
  const auto v = check("ctor", std::string(R"(
static int pid() { long r; asm volatile("syscall" : "=a"(r) : "a"(39) : "rcx", "r11", "memory"); return r; }
static int forged = pid();
)") + kLauncher);
  REQUIRE(v.size() == 1);
  CHECK_THAT(v[0].describe("matmul_tiled.cu"),
             Catch::Contains("contains a system call instruction (syscall) in its host code (section "
                             ".text.startup"));
}

TEST_CASE("File streams and the library's file internals are refused by the allow-list", "[policy][grader]") {
  auto v = check("ofstream", std::string(R"(#include <fstream>
void matmul_tiled(const float*, const float*, float* C, int, int, int) {
  std::ofstream out("/tmp/forged.json"); out << "{\"verdict\": \"pass\"}"; C[0] = 1; }
)"));
  INFO(all(v));
  REQUIRE_FALSE(v.empty());
  CHECK_THAT(all(v),
             Catch::Contains("uses std::basic_filebuf<char, std::char_traits<char> >::open(char const*, "
                             "std::_Ios_Openmode)"));
  CHECK_THAT(all(v), Catch::Contains("file, process and network calls are not allowed"));
  v = check("basic_file", std::string(R"(#include <fstream>
void matmul_tiled(const float*, const float*, float* C, int, int, int) {
  std::__basic_file<char> f(nullptr); f.open("/tmp/forged.json", std::ios::out, 0644); C[0] = 1; }
)"));
  INFO(all(v));
  CHECK_THAT(all(v),
             Catch::Contains("uses std::__basic_file<char>::open(char const*, std::_Ios_Openmode, int): "
                             "file, process and network calls are not allowed"));
}

TEST_CASE("A standard instantiation the harness has too passes: the linker keeps the harness's copy",
          "[policy][grader]") {
  const std::string forged = R"(
namespace std { __attribute__((noinline)) inline int cudalab_sample(int x) { return x; } }
void matmul_tiled(const float*, const float*, float* C, int M, int, int) { C[0] = std::cudalab_sample(M); }
)";
  auto v = check("forged-std-first", forged);
  INFO(all(v));
  CHECK(v.empty());
  // What makes that safe: the lab binaries link the student's files after the
  // harness (labs/meson.build), and the linker keeps the first copy, so the
  // student's own copy is called by nobody, not even by the student's code.
  const fs::path harness = objects().compile("harness-first", kHarness);
  const fs::path student = objects().compile("student-last", forged);
  const fs::path main = objects().compile("main-first", R"(
#include <cstdio>
int harness_sample(int);
void matmul_tiled(const float*, const float*, float*, int, int, int);
int main() { float c = 0; matmul_tiled(nullptr, nullptr, &c, 5, 0, 0); std::printf("%d %g\n", harness_sample(5), c); }
)");
  const fs::path exe = objects().dir / "first-copy-wins";
  ProcessOptions link;
  link.argv = {"c++", main.string(), harness.string(), student.string(), "-o", exe.string()};
  link.timeout_s = 120;
  const ProcessResult linked = run_process(link);
  INFO(linked.output);
  REQUIRE(linked.ok());
  ProcessOptions run;
  run.argv = {exe.string()};
  run.timeout_s = 60;
  const ProcessResult ran = run_process(run);
  CHECK(ran.output == "16 16\n");
}

TEST_CASE(
    "A standard instantiation a library linked after the student's file has too passes only as the same "
    "code",
    "[policy][grader]") {
  // The CUDA runtime's archive comes after the student's files in the link.
  static const Owners later = [] {
    std::string error;
    Owners own;
    own.add("the CUDA runtime", library_names(objects().compile("runtime", kHarness), false, error));
    REQUIRE(error.empty());
    return own;
  }();
  auto check_later = [](const std::string& name, const std::string& code) {
    ObjectRules rules;
    rules.launchers = {"matmul_tiled"};
    rules.owners = &later;
    std::string error;
    auto v = check_object(objects().compile(name, code), rules, error);
    REQUIRE(error.empty());
    return v;
  };
  auto v = check_later("same-std", R"(
namespace std { __attribute__((noinline)) inline int cudalab_sample(int x) { return x * 3 + 1; } }
void matmul_tiled(const float*, const float*, float* C, int M, int, int) { C[0] = std::cudalab_sample(M); }
)");
  INFO(all(v));
  CHECK(v.empty());
  v = check_later("forged-std", R"(
namespace std { __attribute__((noinline)) inline int cudalab_sample(int x) { return x; } }
void matmul_tiled(const float*, const float*, float* C, int M, int, int) { C[0] = std::cudalab_sample(M); }
)");
  REQUIRE(v.size() == 1);
  CHECK_THAT(
      v[0].describe("matmul_tiled.cu"),
      Catch::StartsWith("matmul_tiled.cu defines std::cudalab_sample(int), an instantiation of a standard "
                        "template that the CUDA runtime defines too"));
}

TEST_CASE("Kernels are the functions nvcc gives a host stub", "[policy][grader]") {
  const std::vector<Symbol> defined = {
      {"_Z12matmul_tiledPKfS0_Pfiii", 'T'},
      {"_Z19matmul_tiled_kernelPKfS0_Pfiii", 'T'},
      {"_Z48__device_stub__Z19matmul_tiled_kernelPKfS0_PfiiiPKfS0_Pfiii", 'T'},
      {"_Z6helperi", 'T'},
      {"DW.ref.__gxx_personality_v0", 'V'}};
  CHECK(kernels_of(defined) == std::set<std::string>{"_Z19matmul_tiled_kernelPKfS0_Pfiii"});
  ObjectRules rules;
  rules.launchers = {"matmul_tiled"};
  const auto v = check_definitions(defined, rules);
  REQUIRE(v.size() == 1);
  CHECK(v[0].symbol == "helper(int)");
}

namespace {

// The one file a folder of saved name lists holds.
fs::path only_file(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) files.push_back(e.path());
  REQUIRE(files.size() == 1);
  return files[0];
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("A library's saved names serve the next grader run only while the library is the same file",
          "[policy][grader]") {
  const fs::path lib = objects().compile("owned", "int first_name(int x) { return x + 1; }\n");
  const fs::path saved_dir = objects().dir / "names-a", forged_dir = objects().dir / "names-b",
                 stale_dir = objects().dir / "names-c";
  std::string error;
  const auto first = library_names(lib, false, error, saved_dir);
  REQUIRE(error.empty());
  REQUIRE(first);
  CHECK(first->count("_Z10first_namei") == 1);
  // Saved, under the file's stamp: a run with that folder reads the list and
  // runs no nm (shown by a list that says something nm would not).
  const fs::path saved = only_file(saved_dir);
  std::string text;
  {
    std::ifstream in(saved);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  fs::create_directories(forged_dir);
  std::ofstream(forged_dir / saved.filename()) << replaced(text, "_Z10first_namei", "_Z10other_namei");
  const auto from_list = library_names(lib, false, error, forged_dir);
  REQUIRE(from_list);
  CHECK(from_list->count("_Z10other_namei") == 1);
  // A list saved for another version of the file (another stamp) is not read.
  fs::create_directories(stale_dir);
  std::ofstream(stale_dir / saved.filename())
      << replaced(replaced(text, "_Z10first_namei", "_Z10other_namei"), "\"stamp\":\"", "\"stamp\":\"9");
  const auto stale = library_names(lib, false, error, stale_dir);
  REQUIRE(stale);
  CHECK(stale->count("_Z10first_namei") == 1);
  CHECK(stale->count("_Z10other_namei") == 0);
  // The library rewritten: its new names, in every folder and in the process.
  const fs::path other = objects().compile("owned-other", "int second_name(int x) { return x - 1; }\n");
  fs::copy_file(other, lib, fs::copy_options::overwrite_existing);
  for (const fs::path& dir : {saved_dir, forged_dir}) {
    const auto again = library_names(lib, false, error, dir);
    REQUIRE(again);
    CHECK(again->count("_Z11second_namei") == 1);
    CHECK(again->count("_Z10first_namei") == 0);
    CHECK(again->count("_Z10other_namei") == 0);
  }
  CHECK(error.empty());
}
