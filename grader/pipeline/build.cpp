// grader/pipeline/build.cpp: the grading folder's build: Meson and ninja, per slot (the student's part
// confined), the reference's build, --prepare.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <future>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "cudalab/replay.h"
#include "pipeline/grader.h"
#include "pipeline/internal.h"
#include "run/explain.h"
#include "run/meson_project.h"
#include "run/policy.h"
#include "run/process.h"
#include "run/progress.h"
#include "run/sandbox.h"
#include "run/submission.h"

namespace fs = std::filesystem;

namespace cudalab {

namespace {

// Whether every lab of the course has targets in a configured build: Meson
// reads the list of labs only when it configures (labs/meson.build writes it
// to labs/configured-labs.txt, the folder first), so a lab the course gained
// since needs the build configured again.
bool has_labs(const fs::path& build, const std::vector<LabSpec>& labs) {
  std::istringstream in(read_text(build / "labs" / "configured-labs.txt"));
  std::set<std::string> configured;
  for (std::string line; std::getline(in, line);) configured.insert(line);
  for (const auto& lab : labs)
    if (!configured.count(lab.id)) return false;
  return true;
}

// Whose build a step's progress names: the reference's, or (the student's)
// nothing.
std::string slot_name(int slot) {
  return slot == Grader::kReferenceSlot ? "the reference solutions' " : "";
}

std::string target_path(const std::string& t) {
  return (t == "cudalab-gpuinfo" ? "harness/" : "labs/") + t;
}

// The prefix of a program (<prefix>/bin/<program>), as named and with its
// links resolved: /opt/torch/.venv and the interpreter's own.
void add_prefixes(std::vector<fs::path>& out, const fs::path& program) {
  std::error_code ec;
  out.push_back(program.parent_path().parent_path());
  const fs::path real = fs::canonical(program, ec);
  if (!ec) out.push_back(real.parent_path().parent_path());
}

// Where the programs a build runs live: each tool's prefix as found on PATH
// and with its links resolved (a virtual environment's python3 and meson,
// pip's ninja, the CUDA toolkit's nvcc), and the system's own.
std::vector<fs::path> build_tool_roots() {
  static const std::vector<fs::path> roots = [] {
    std::vector<fs::path> out = {"/usr", "/bin", "/sbin", "/lib", "/lib64"};
    std::error_code ec;
    const char* path = std::getenv("PATH");
    for (const char* tool : {"ninja", "meson", "python3", "nvcc", "c++", "g++", "cc", "ar", "ld"}) {
      std::stringstream in(path ? path : "/usr/local/bin:/usr/bin:/bin");
      for (std::string dir; std::getline(in, dir, ':');) {
        const fs::path found = fs::path(dir) / tool;
        if (dir.empty() || dir[0] != '/' || !fs::is_regular_file(found, ec)) continue;
        add_prefixes(out, found);
        break;
      }
    }
    return out;  // sorted and without "/" by build_sandbox
  }();
  return roots;
}

// The prefixes of the programs a configured build runs (its compilers,
// linkers and the interpreter of its generators, as Meson's introspection
// names them; a bare name is looked up on PATH), read once per build folder.
std::vector<fs::path> configured_tool_roots(const fs::path& build_dir) {
  static std::mutex lock;
  static std::map<fs::path, std::vector<fs::path>> known;
  const std::lock_guard<std::mutex> guard(lock);
  if (auto it = known.find(build_dir); it != known.end()) return it->second;
  std::vector<fs::path> roots;
  const auto targets = MesonProject(build_dir).targets();
  std::set<std::string> programs;
  if (targets.is_array())
    for (const auto& t : targets)
      for (const auto& src : t.value("target_sources", nlohmann::json::array()))
        for (const char* key : {"compiler", "linker"})
          if (src.is_object() && src.contains(key) && src[key].is_array() && !src[key].empty() &&
              src[key][0].is_string())
            programs.insert(src[key][0].get<std::string>());
  for (const auto& p : programs) {
    if (!p.empty() && p[0] == '/')
      add_prefixes(roots, p);
    else
      for (const auto& found : programs_in_path(p)) add_prefixes(roots, found);
  }
  known[build_dir] = roots;
  return roots;
}

}  // namespace

std::string tidy_build_log(const std::string& log, const std::string& overlay_labs, bool verbose) {
  std::string s = log;
  replace_all(s, overlay_labs + "/", "labs/");
  std::istringstream in(s);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    // ninja's and meson's own lines say nothing to a student
    if (line.rfind("ninja:", 0) == 0 || line.rfind("[", 0) == 0 || line.rfind("INFO:", 0) == 0 ||
        line.find("FAILED:") != std::string::npos || line.rfind("/usr/", 0) == 0 ||
        line.find("nvcc -") != std::string::npos || line.find("c++ -") != std::string::npos)
      continue;
    lines.push_back(line);
  }
  std::string out;
  const std::size_t max_lines = verbose ? lines.size() : 30;
  for (std::size_t i = 0; i < lines.size() && i < max_lines; ++i) out += lines[i] + "\n";
  if (lines.size() > max_lines) out += fmt::format("[... {} more lines]\n", lines.size() - max_lines);
  return out;
}

ProgressOptions Grader::progress_options() const {
  ProgressOptions o = ProgressOptions::for_stderr();
  o.show = o.show && cfg_.progress;
  return o;
}

fs::path Grader::overlay(int slot) const {
  return slot_dir(cfg_.work_dir, slot) / "overlay" / "labs";
}

fs::path Grader::build(int slot) const {
  return slot_dir(cfg_.work_dir, slot) / "build";
}

std::string Grader::build_reference(const LabSpec& lab, bool cpu_mode) {
  return build_reference_target(lab, lab.id + (cpu_mode ? "-tests-cpu" : "-tests"));
}

std::string Grader::build_reference_target(const LabSpec& lab, const std::string& target) {
  const std::lock_guard<std::recursive_mutex> lock(reference_mutex_);
  if (auto it = reference_built_.find(target); it != reference_built_.end()) return it->second;
  std::string& result = reference_built_[target];
  // The solutions as the student files of every lab of the course.
  SubmissionPlan plan;
  for (const auto& l : cfg_.labs) {
    LabFiles files;
    files.lab = l.id;
    for (const auto& f : l.student_files) {
      const fs::path src = cfg_.source_root / "solutions" / l.id / f;
      if (fs::is_regular_file(src))
        files.found.push_back({f, src});
      else
        files.missing.push_back("missing " + src.string());
    }
    plan.labs.push_back(files);
  }
  if (const LabFiles* mine = plan.find(lab.id); mine && !mine->complete()) {
    result = fmt::format("the reference solution of {} is missing ({}): correctness cannot be judged", lab.id,
                         mine->missing.front());
    return result;
  }
  std::string error;
  if (!ensure_configured(kReferenceSlot, error)) return result = error;
  sync_overlay(&plan, kReferenceSlot);
  bool ok = false;
  const std::string log = build_lab(target, kReferenceSlot, ok);
  if (!ok) result = fmt::format("building the reference solution's {} failed:\n{}", target, log);
  return result;
}

bool Grader::ensure_configured(int slot, std::string& error) {
  const fs::path build_ = build(slot), overlay_ = overlay(slot);
  const MesonProject project(build_);
  bool configured = project.configured();
  // A slot that builds submissions holds the labs' skeletons where the
  // reference build holds the solutions (labs/meson.build): nothing of a
  // solution is in any process, build folder or object a student's code
  // meets. A folder configured otherwise (by an older grader) starts afresh:
  // what it built from the solutions is not left in it.
  const std::string reference_code = slot == kReferenceSlot ? "linked" : "absent";
  if (configured && project.option("reference_code") != reference_code) {
    std::error_code ec;
    fs::remove_all(build_, ec);
    configured = false;
  }
  if (configured && has_labs(build_, cfg_.labs)) return true;
  sync_overlay(nullptr, slot);
  std::vector<std::string> options = {"-Dlabs_dir=" + overlay_.string(), "-Dvariants=false",
                                      "-Dreference_code=" + reference_code};
  // Which GPUs to compile for: the build's own choice (auto: the visible
  // GPU's), unless the environment names them (the framework's tests do on a
  // machine without a GPU, to build one architecture instead of five).
  if (const char* arch = std::getenv("CUDALAB_GRADE_GPU_ARCH"); arch && *arch)
    options.push_back(std::string("-Dgpu_arch=") + arch);
  ProcessOptions setup = project.setup(cfg_.source_root, options, configured, cfg_.course.build_timeout_s);
  Progress progress(fmt::format("configuring the grading build in {} (Meson)", build_.string()), "steps",
                    progress_options());
  setup.on_output = [&progress](std::string_view chunk) { progress.feed(chunk); };
  const ProcessResult p = run_process(setup);
  progress.finish(p.ok());
  if (!p.ok()) {
    error = fmt::format("configuring the grading build in {} failed ({}):\n{}", build_.string(), p.describe(),
                        p.output);
    fs::remove_all(build_);
    return false;
  }
  return true;
}

std::string Grader::build_lab(const std::string& target, int slot, bool& ok) {
  return build_targets({target}, slot, ok);
}

SandboxSpec Grader::build_sandbox(int slot, const fs::path& scratch) const {
  SandboxSpec box;
  box.build = true;
  box.scratch = scratch;
  box.write = {build(slot)};
  // The submission's copy and what a lab build compiles and links of the
  // course (never solutions/, tests/, the course file or another slot).
  std::error_code ec;
  box.read = {overlay(slot).parent_path()};
  for (const char* dir : {"harness", "simt", "tools", "labs", "course"})
    if (fs::exists(cfg_.source_root / dir, ec)) box.read.push_back(cfg_.source_root / dir);
  // Headers and libraries the machine adds outside /usr (a GPU host without a
  // package manager unpacks them elsewhere, tools/offline/env.sh).
  for (const char* var : {"CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH", "LIBRARY_PATH", "LD_LIBRARY_PATH"})
    for (const auto& d : env_dirs(var)) box.read.push_back(d);
  box.exec = build_tool_roots();
  // The compilers this build was configured with, wherever they live (a GPU
  // host's g++ in /opt/gcc).
  for (const auto& root : configured_tool_roots(build(slot))) box.exec.push_back(root);
  std::sort(box.exec.begin(), box.exec.end());
  box.exec.erase(std::unique(box.exec.begin(), box.exec.end()), box.exec.end());
  // "/" as a prefix (a tool in /bin on a merged /usr) would open everything.
  box.exec.erase(std::remove(box.exec.begin(), box.exec.end(), fs::path("/")), box.exec.end());
  return box;
}

std::string Grader::build_targets(const std::vector<std::string>& targets, int slot, bool& ok,
                                  double timeout_s) {
  const fs::path build_ = fs::absolute(build(slot)), overlay_ = overlay(slot);
  const MesonProject project(build_);
  const fs::path& ninja = ninja_program();
  // The outputs known without reading build.ninja (hundreds of kilobytes,
  // for every lab of every submission): a lab's targets are in labs/, the GPU
  // probe in harness/.
  std::vector<std::string> outputs;
  for (const auto& t : targets) outputs.push_back(target_path(t));
  ProcessOptions opt =
      project.build(targets, outputs, timeout_s > 0 ? timeout_s : cfg_.course.build_timeout_s);
  opt.niceness = 10;  // in a batch, this may overlap the previous submission's timed checks
  // One step for both of a submission's builds below: ninja's second count
  // is timed on its own (progress.h).
  Progress progress(fmt::format("building {}{}", slot_name(slot), fmt::join(targets, ", ")), "steps",
                    progress_options());
  opt.on_output = [&progress](std::string_view chunk) { progress.feed(chunk); };
  const bool student_code = slot != kReferenceSlot && !ninja.empty() &&
                            std::any_of(targets.begin(), targets.end(),
                                        [](const std::string& t) { return t != "cudalab-gpuinfo"; });
  std::filesystem::path scratch;
  if (student_code) {
    // The course's part first, outside the sandbox (it reads the solutions
    // compiled into the checks): the inputs of each target but the student's
    // own library and objects. Then the student's code, confined like a check.
    std::vector<std::string> course = {"build.ninja"};
    for (const auto& t : outputs)
      for (const auto& in : course_inputs(t, slot)) course.push_back(in);
    ProcessOptions pre = project.build(course, course, opt.timeout_s);
    pre.niceness = opt.niceness;
    pre.on_output = opt.on_output;
    const ProcessResult p = run_process(pre);
    if (!p.ok()) {
      ok = false;
      progress.finish(false);
      return fmt::format(
          "building the course's part of the lab failed (not your code; tell your instructor):\n{}",
          p.timed_out ? "timed out" : p.output);
    }
    try {
      scratch = make_scratch_dir(fmt::format("build-{}", slot));
      opt.argv = sandboxed_argv(build_sandbox(slot, scratch), opt.argv);
    } catch (const std::exception& e) {
      remove_scratch_dir(scratch);
      ok = false;
      return fmt::format("the grader cannot build submissions confined: {}", e.what());
    }
  }
  const ProcessResult p = run_process(opt);
  remove_scratch_dir(scratch);
  ok = p.ok();
  progress.finish(ok);
  if (ok) return {};
  // For the instructor who profiles a grade: the whole command and output.
  profile(fmt::format("build failed ({}): {}\n{}", p.describe(), fmt::join(opt.argv, " "), p.output));
  if (p.timed_out) return fmt::format("the build did not finish within {:.0f} s", opt.timeout_s);
  if (ran_out_of_memory(opt, p))
    return describe_memory_limit("the build", opt.memory_limit_bytes) + ":\n" +
           build_failure_log(p.output, overlay_.string(), cfg_.verbose, p.describe());
  if (student_code && p.exit_code == 125 && p.output.find("cudalab-sandbox:") != std::string::npos)
    return "the grader could not confine the build (not your code; tell your instructor):\n" + p.output;
  return build_failure_log(p.output, overlay_.string(), cfg_.verbose, p.describe());
}

std::string build_failure_log(const std::string& output, const std::string& overlay_labs, bool verbose,
                              const std::string& how) {
  auto blank = [](const std::string& s) { return s.find_first_not_of(" \t\r\n") == std::string::npos; };
  std::string log = tidy_build_log(output, overlay_labs, verbose);
  if (!blank(log)) return log;
  // Nothing from a compiler: ninja's own words are all there is (a tool
  // that could not start, a file it could not read, a target it does not know).
  log.clear();
  std::vector<std::string> lines;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) {
    if (blank(line)) continue;
    lines.push_back(line);
    if (line.rfind("ninja:", 0) == 0 || line.find("error") != std::string::npos ||
        line.find("denied") != std::string::npos || line.find("cannot") != std::string::npos)
      log += line + "\n";
  }
  if (!log.empty()) return log;
  // Not even that (an empty "BUILD FAILED" is what this prevents): the last
  // lines the build printed, whatever they are, and how it ended.
  for (std::size_t i = lines.size() > 10 ? lines.size() - 10 : 0; i < lines.size(); ++i)
    log += lines[i] + "\n";
  return fmt::format("the build failed ({}) without a compiler message{}\n{}", how,
                     lines.empty() ? " or any other output" : "; its last lines:", log);
}

std::vector<std::string> Grader::course_inputs(const std::string& target, int slot) {
  const std::string key = fmt::format("{}@{}", target, slot);
  {
    const std::lock_guard<std::mutex> lock(course_inputs_mutex_);
    if (auto it = course_inputs_.find(key); it != course_inputs_.end()) return it->second;
  }
  const ProcessResult p = run_process(MesonProject(build(slot)).query(target));
  std::vector<std::string> out;
  // labs/meson.build: the student's files become lib<lab>-student*.a, or
  // objects of the target itself (<target>.p/); all else is the course's.
  for (const auto& in : query_inputs(p.output))
    if (in.find("-student") == std::string::npos && in.find(".p/") == std::string::npos &&
        (in.rfind("labs/", 0) == 0 || in.rfind("harness/", 0) == 0 || in.rfind("simt/", 0) == 0))
      out.push_back(in);
  if (p.ok()) {
    const std::lock_guard<std::mutex> lock(course_inputs_mutex_);
    course_inputs_[key] = out;
  }
  return out;
}

bool Grader::prepare(std::string& error, int slots, bool looks) {
  // The inputs' key with the folder (an autograder image carries it, so a
  // submission graded again there gets the same inputs).
  try {
    key();
  } catch (const std::exception& e) {
    error = e.what();
    return false;
  }
  // Each slot with the skeletons, side by side (each its own build folder).
  const auto prepare_slot = [this, looks](int slot) -> std::string {
    std::string why;
    if (!ensure_configured(slot, why)) return why;
    sync_overlay(nullptr, slot);
    for (const auto& lab : cfg_.labs)
      for (const char* suffix : {"-tests", "-tests-cpu"}) {
        if (std::string(suffix) == "-tests-cpu" && !cfg_.course.cpu_mode) continue;
        bool ok = false;
        const std::string log = build_lab(lab.id + suffix, slot, ok);
        if (!ok) return fmt::format("building {}{} with the skeleton failed:\n{}", lab.id, suffix, log);
      }
    bool ignored = false;
    build_lab("cudalab-gpuinfo", slot, ignored);
    // The second looks' builds: a look that finds one missing builds it then
    // (and says so where it fails), so a failure here costs nothing.
    if (looks && !cfg_.course.cpu_mode)
      for (const char* suffix : {"-tests-cpu", "-tests-access"}) {
        std::vector<std::string> targets;
        for (const auto& lab : cfg_.labs) targets.push_back(lab.id + suffix);
        build_targets(targets, slot, ignored);
      }
    return {};
  };
  // The judge's side: the reference solutions built the same way, next to them.
  const auto prepare_reference = [this, looks]() -> std::string {
    for (const auto& lab : cfg_.labs)
      for (bool cpu : {false, true}) {
        if (cpu && !cfg_.course.cpu_mode) continue;
        if (std::string e = build_reference(lab, cpu); !e.empty()) return e;
      }
    // What the report's roofline counts the reference's and the foils'
    // traffic with (pipeline/traffic.cpp); a speed check builds it where it
    // is missing, so a failure here costs nothing.
    if (looks && !cfg_.course.cpu_mode)
      for (const auto& lab : cfg_.labs) build_reference_target(lab, lab.id + "-tests-traffic");
    return {};
  };
  // Side by side where there are the cores for it: each build runs ninja on
  // every core, and nvcc's memory on a 2-core machine allows one at a time.
  std::vector<std::function<std::string()>> tasks{[&] { return prepare_slot(0); }, prepare_reference};
  for (int slot = 1; slot < slots; ++slot)
    tasks.push_back([&prepare_slot, slot] { return prepare_slot(slot); });
  std::vector<std::string> errors(tasks.size());
  for_each_side_by_side(tasks.size(), std::thread::hardware_concurrency() / 8,
                        [&](std::size_t t) { errors[t] = tasks[t](); });
  const auto first =
      std::find_if(errors.begin(), errors.end(), [](const std::string& e) { return !e.empty(); });
  error = first == errors.end() ? "" : *first;
  return error.empty();
}

}  // namespace cudalab
