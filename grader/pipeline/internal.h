// grader/pipeline/internal.h: what the grading pipeline's stages share, and
// nothing outside grader/pipeline/ includes.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <filesystem>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/files.h"
#include "cudalab/manifest.h"

namespace cudalab {

// Calls f(0) to f(count - 1), at most `jobs` at once, started in index order
// (a caller that sorts the longest first ends soon after it). The first
// exception is rethrown once the calls under way have finished.
void for_each_side_by_side(std::size_t count, std::size_t jobs, const std::function<void(std::size_t)>& f);

// Tasks on `jobs` threads, in the order added, where a running task may add
// others (a speed check's trace, once the checks it requires passed): run()
// returns when none is queued or running. The first exception drops the
// queued tasks and is rethrown once the running ones have finished.
class TaskPool {
 public:
  void add(std::function<void()> task);
  void run(std::size_t jobs);

 private:
  void work();
  std::mutex lock_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> queue_;
  std::size_t running_ = 0;
  std::exception_ptr failed_;
};

// CUDALAB_PROFILE=1: where a grade's time goes, on stderr. Off by default.
void profile(const std::string& what);

void replace_all(std::string& s, const std::string& from, const std::string& to);

// A slot's folder in the grading folder (Grader::kReferenceSlot: the reference's).
std::filesystem::path slot_dir(const std::filesystem::path& work_dir, int slot);
// The reference's test binary of a lab in a build folder, for GPU or CPU mode.
std::filesystem::path reference_binary(const std::filesystem::path& build, const LabSpec& lab, bool cpu_mode);

// A slot's build folder holds what the last submission it built made of its
// files (labs/meson.build names each): its libraries and their objects
// (labs/lib<lab>-student*.a and .p/), its CPU-mode translations
// (labs/cpu-<lab>-<file>.cpp; the references' are cpu-ref-...), and the
// test binaries linked from them (labs/<lab>-tests*, the access build's
// objects in <lab>-tests-access.p/). Whether `name`, a file or folder of
// labs/, is one of them.
bool student_output(const std::string& name, const std::vector<std::string>& lab_ids);
// Removes every such output from `build`, so that the next submission's build
// (which may read its build folder) meets none of a classmate's files. The
// course's part (harness, the checks, the skeletons in namespace ref) stays:
// that is the reuse that makes a warm grade fast. Returns how many it removed.
std::size_t clear_student_outputs(const std::filesystem::path& build,
                                  const std::vector<std::string>& lab_ids);

// The folders of a PATH-like environment variable.
std::vector<std::filesystem::path> env_dirs(const char* var);
// A compile command split into its words (compile_commands.json's "command").
std::vector<std::string> split_command(const std::string& cmd);
// The same without a compiler launcher Meson may have put first (ccache): the
// grader's own runs of the compiler (include listings, PTX) need no cache,
// and confined, they could not write one.
std::vector<std::string> compiler_argv(const std::string& cmd);
// Whether compile_commands.json's entry `e` compiles the student file `f` of
// `lab` from the overlay (GPU, or CPU mode's simt translation).
bool student_object(const nlohmann::json& e, const std::filesystem::path& overlay, const LabSpec& lab,
                    const std::string& f, bool cpu);

}  // namespace cudalab
