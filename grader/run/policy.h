// grader/run/policy.h: what a student's compiled code may call, define and contain.
//
// Threat model: a student who has the whole student release, reads the
// harness's source, and submits native host and device code (constructors,
// inline assembly, any symbol name). Before a lab's checks run, each student
// object is held against three allow-lists:
//
//  - its undefined symbols (what it calls): the CUDA runtime's launch, memory,
//    attribute and error calls; from the harness only what lab.cuh and check.h
//    offer (CUDA_CHECK, CUDALAB_TODO); from the C++ runtime what a launcher
//    needs (new/delete, exceptions, strings, output to cout/cerr, clocks);
//    from C printf-style output, string, memory and math functions. Anything
//    else (the rest of the harness, cuBLAS, Thrust, the reference solution,
//    files, processes, networks, threads) is refused with the symbol named;
//  - its defined global symbols (what it could replace in the link): the
//    lab's launchers (lab.toml), kernels with what nvcc generates for them,
//    and weak instantiations of standard templates that nothing else in the
//    link or the C/C++ runtime defines. Anything else is refused, naming who
//    owns the name (the harness, the tests, the C/C++ or CUDA runtime);
//  - its machine code: no system-call instruction (syscall, sysenter,
//    int 0x80) anywhere in an executable section, found byte by byte.
//
// The files a student file includes are checked too: nothing from the
// course's own tree (solutions, tests) but the harness's public headers.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "run/names_cache.h"

namespace cudalab {

struct Violation {
  enum class Kind { uses, defines, contains };
  std::string symbol;  // demangled; for `contains`, the instruction
  std::string why;     // for the student
  Kind kind = Kind::uses;

  // One line for the student: "matmul_tiled.cu uses X: why",
  // "... defines X, why", "... contains X why".
  std::string describe(const std::string& file) const;
};

// A symbol as nm prints it: mangled name and type letter (T, W, V, D, B...).
struct Symbol {
  std::string name;
  char type = 'T';
  std::string object;  // in an archive: the member that defines it
};

// Who defines which names elsewhere in the link (the harness, the lab's tests
// and references) and in the runtime libraries (C, C++, CUDA): a student
// object that defines one of them would replace it. Loaded once per grader
// run (they do not depend on the student).
class Owners {
 public:
  // `who`: "the harness", "the C library"...; names are mangled.
  void add(const std::string& who, std::shared_ptr<const NameMap> names);
  // Who defines `mangled`, or nullptr; `object`, if given, receives the
  // object file that defines it ("" if none can be read).
  const std::string* owner(const std::string& mangled, std::string* object = nullptr) const;
  // The reference solution's own functions, demangled without "ref::" (its
  // foils, e.g. vector_add_chunked): a submission that is the solution file
  // defines them too, harmlessly (nothing else defines them globally).
  std::set<std::string> foils;
  // Owners whose objects the link takes before the student's (labs/meson.build
  // links the student's files last): where both define the same instantiation
  // of a standard template, the linker keeps theirs.
  std::set<std::string> linked_first;
  bool empty() const { return sources_.empty(); }

 private:
  std::vector<std::pair<std::string, std::shared_ptr<const NameMap>>> sources_;
};

// What one student object may define.
struct ObjectRules {
  std::vector<std::string> launchers;  // lab.toml's launchers
  const Owners* owners = nullptr;      // none: only the name rules apply
  // CPU mode: the object is the student file translated to C++ (simt) and
  // compiled by g++: no device stubs, so its kernels are named here (those of
  // the same file's GPU object), and simt's runtime calls are allowed.
  bool cpu_mode = false;
  std::set<std::string> kernels;  // mangled
};

// Host-only (tested). Symbols are mangled, as nm prints them. `defined` only
// serves to name Thrust and CUB as such.
std::vector<Violation> check_symbols(const std::vector<std::string>& undefined,
                                     const std::vector<std::string>& defined, bool cpu_mode = false);

// The defined global symbols that the rules do not allow. Host-only (tested).
// With `object` (the student object they come from), a weak instantiation of
// a standard template that another object of the link defines too is allowed
// when both copies are the same code (same_definition).
std::vector<Violation> check_definitions(const std::vector<Symbol>& defined, const ObjectRules& rules,
                                         const std::filesystem::path& object = {});

// Whether `symbol` has the same bytes and relocations in both objects (their
// targets compared by name, or by the string they point to): then it does not
// matter which copy the linker keeps.
bool same_definition(const std::filesystem::path& a, const std::filesystem::path& b,
                     const std::string& symbol);

// The kernels of an nvcc-compiled object: the functions that have a host
// stub (__device_stub_<mangled kernel>) defined beside them.
std::set<std::string> kernels_of(const std::vector<Symbol>& defined);

// System-call instructions (0F 05, 0F 34, CD 80) at any byte offset of any
// executable section of an ELF64 object, named with section and function.
std::vector<Violation> system_call_instructions(const std::filesystem::path& object, std::string& error);

// "_ZN3ref12matmul_tiledEPKfS1_Pfiii" -> "ref::matmul_tiled(float const*, ...)"
std::string demangle(const std::string& symbol);
// A demangled name as a student writes it: std::string for
// std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >,
// and the like. For messages only (rules match the full names).
std::string readable_name(std::string name);

// All three checks of one compiled student object (runs nm), or a message in
// `error` if it could not be read. `kernels`, if given, receives the object's
// kernels (for the CPU-mode object of the same file).
std::vector<Violation> check_object(const std::filesystem::path& object, const ObjectRules& rules,
                                    std::string& error, std::set<std::string>* kernels = nullptr);
// The same with no launchers and no owners (any global function is refused).
std::vector<Violation> check_object(const std::filesystem::path& object, std::string& error);

// The kernels of an nvcc-compiled object (runs nm), for the CPU-mode object
// of the same student file.
std::set<std::string> object_kernels(const std::filesystem::path& object, std::string& error);

// The owners of the names in a lab's link, from the grading build folder:
// the harness's libraries, the lab's checks library (tests and references),
// the C and C++ runtime's shared libraries, and the CUDA runtime
// (`cudart_static`, libcudart_static.a; CPU mode: simt's library). Each
// library is read once per process, and once in all where `cache_dir` is
// given (see library_names). Libraries that are missing are skipped; `error`
// says which could not be read.
Owners link_owners(const std::filesystem::path& build, const std::string& lab, bool cpu_mode,
                   const std::filesystem::path& cudart_static, std::string& error,
                   const std::filesystem::path& cache_dir = {});

// The defined global names of a library or object (nm; -D for a shared
// library); nullptr and `error` if nm could not read it. Kept per process and,
// where `cache_dir` is given, in a file there for the next grader run (a warm
// grade spends no nm run on the C, C++ and CUDA runtimes). Either is used only
// for the very same file: same device, inode, size, modification and change
// time.
std::shared_ptr<const NameMap> library_names(const std::filesystem::path& lib, bool shared,
                                             std::string& error, const std::filesystem::path& cache_dir = {});

// libcudart_static.a of the toolkit whose nvcc is `nvcc` (a path, or a name
// looked up in PATH); empty if not found.
std::filesystem::path find_cudart_static(const std::string& nvcc);

// Files a student file includes (from `nvcc -M` with the build's flags) that
// are not allowed: anything in the course's tree but the harness's headers
// and simt's (CPU mode's compiles list them).
std::vector<std::string> forbidden_includes(const std::vector<std::string>& dependencies,
                                            const std::filesystem::path& source_root,
                                            const std::filesystem::path& student_dir);

}  // namespace cudalab
