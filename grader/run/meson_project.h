// grader/run/meson_project.h: a Meson build folder as the grader drives it:
// configure it (again), build targets with ninja within a time limit, ask
// ninja what a target is built from. The one place that knows Meson's and
// ninja's command lines and the files they write; callers decide the
// options, the time limits and what to tell people when a build fails.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "run/process.h"

namespace cudalab {

// The memory each process of a build (Meson, ninja, every compiler) may
// allocate (RLIMIT_DATA, process.h): a file made to blow up the compiler
// (gallery 64's #include "/dev/zero", templates instantiated without end)
// ends with "the build ran out of its 4 GiB memory limit" instead of taking
// the grading host's memory. Per process, as an rlimit is: lab 03's student
// file through nvcc peaks at 214 MB and builds under a 256 MiB limit too
// (2026-11-28, CUDA 13.0, GCC 12), so 4 GiB is room for any honest file, and
// 16 compilers side by side stay within a GPU host's 128 GiB.
inline constexpr std::uint64_t kBuildMemoryLimit_bytes = 4ull << 30;

class MesonProject {
 public:
  explicit MesonProject(std::filesystem::path build_dir);

  const std::filesystem::path& dir() const { return dir_; }

  // Meson has written build.ninja: the folder is configured.
  bool configured() const;
  // build.ninja has a build statement for `output` ("labs/01_vector_add-tests").
  // build.ninja is read once, on the first question.
  bool has_output(const std::string& output) const;
  // The output of target `name` in the first of `folders` that build.ninja
  // has ("labs" -> "labs/NAME"); a name with a '/' is an output already.
  // "" where none has it.
  std::string output_of(const std::string& name, const std::vector<std::string>& folders) const;

  // Meson's compile command database (compile_commands.json): an array of
  // {"file", "command", "output", ...}; anything else where it is missing or
  // unreadable.
  nlohmann::json compile_commands() const;
  // Meson's introspection of the targets (meson-info/intro-targets.json): an
  // array where it could be read.
  nlohmann::json targets() const;
  // The value of build option `name` as configured
  // (meson-info/intro-buildoptions.json), as text; "" where it is not set or
  // cannot be read.
  std::string option(const std::string& name) const;

  // `meson setup` of this folder from `source`: a new folder as a release
  // build, or a configured one again (--reconfigure keeps its options), then
  // `options` ("-Dname=value").
  ProcessOptions setup(const std::filesystem::path& source, const std::vector<std::string>& options,
                       bool reconfigure, double timeout_s) const;
  // Builds targets: ninja with their outputs where ninja is on PATH and every
  // output is known (`outputs` as long as `names`), else `meson compile` with
  // their names. ninja costs 0.05 s where a `meson compile` with nothing to do
  // introspects the build first (1.6 s on 2 cores), on every call; both
  // rebuild the same way (ninja reruns Meson when a meson.build changed).
  // ninja's status lines are NINJA_STATUS=kNinjaStatus's (progress.h), for
  // a Progress to read from the output as it comes.
  ProcessOptions build(const std::vector<std::string>& names, const std::vector<std::string>& outputs,
                       double timeout_s) const;
  // `ninja -t query OUTPUT`: what `output` is built from (query_inputs).
  ProcessOptions query(const std::string& output) const;

 private:
  std::filesystem::path dir_;
  mutable std::optional<std::string> build_ninja_;
};

// The ninja program found on PATH (once per process), or empty.
const std::filesystem::path& ninja_program();

// The inputs of a `ninja -t query` answer ("OUTPUT:\n  input: RULE\n    x\n
// | y\n  outputs:\n ..."): explicit, implicit (after "|") and order-only
// (after "||") alike.
std::vector<std::string> query_inputs(const std::string& text);

}  // namespace cudalab
