// grader/policy.h: what a student's compiled code may call.
//
// Before a lab's checks run, the undefined symbols of each student object are
// read (nm) and held against an allow-list: the CUDA runtime's launch,
// memory, attribute and error calls, the C++ runtime, C string and math
// functions, printf, and cudalab's own helpers. Libraries that would do the
// work (cuBLAS, cuDNN, Thrust), the reference solution, and file, process and
// network calls are refused with a message naming the symbol. The files a
// student file includes are checked too: nothing from the course's own tree
// (solutions, tests) but the harness's public headers.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace cudalab {

struct Violation {
  std::string symbol;  // demangled
  std::string why;     // for the student
};

// Host-only (tested). Symbols are mangled, as nm prints them.
std::vector<Violation> check_symbols(const std::vector<std::string>& undefined,
                                     const std::vector<std::string>& defined);

// "_ZN3ref12matmul_tiledEPKfS1_Pfiii" -> "ref::matmul_tiled(float const*, ...)"
std::string demangle(const std::string& symbol);

// The violations of one compiled student object (runs nm), or a message if
// nm could not read it.
std::vector<Violation> check_object(const std::filesystem::path& object, std::string& error);

// Files a student file includes (from `nvcc -M` with the build's flags) that
// are not allowed: anything in the course's tree but the harness's headers.
std::vector<std::string> forbidden_includes(const std::vector<std::string>& dependencies,
                                            const std::filesystem::path& source_root,
                                            const std::filesystem::path& student_dir);

}  // namespace cudalab
