#include "grade.h"

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
#include "explain.h"
#include "policy.h"
#include "process.h"
#include "sandbox.h"
#include "submission.h"

namespace fs = std::filesystem;

namespace cudalab {

namespace {

// Calls f(0) to f(count - 1), at most `jobs` at once, started in index order
// (a caller that sorts the longest first ends soon after it). The first
// exception is rethrown once the calls under way have finished; no call
// starts after it.
void for_each_side_by_side(std::size_t count, std::size_t jobs, const std::function<void(std::size_t)>& f) {
  std::atomic<std::size_t> next{0};
  std::exception_ptr failed;
  std::mutex lock;
  const auto worker = [&] {
    for (std::size_t i; (i = next++) < count;) {
      try {
        f(i);
      } catch (...) {
        const std::lock_guard<std::mutex> guard(lock);
        if (!failed) failed = std::current_exception();
        next = count;
      }
    }
  };
  std::vector<std::thread> threads;
  for (std::size_t w = 1; w < std::min(jobs, count); ++w)
    threads.emplace_back(worker);  // the caller is the last
  worker();
  for (auto& t : threads) t.join();
  if (failed) std::rethrow_exception(failed);
}

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Copies only when the content differs, so unchanged files keep their
// timestamps and the build does not recompile them.
void sync_file(const fs::path& from, const fs::path& to) {
  if (fs::exists(to) && read_all(from) == read_all(to)) return;
  fs::create_directories(to.parent_path());
  fs::copy_file(from, to, fs::copy_options::overwrite_existing);
}

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  if (from.empty()) return;
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
}

// A lab that was not run gets one result per check carrying the reason, so
// every export lists every check.
void fill_unrun(LabGrade& lab) {
  lab.results.clear();
  for (const auto& c : lab.spec->checks)
    lab.results.push_back(judge_by_grader(c, lab.status == "not_run" ? "not_run" : "fail", lab.message));
}

// "'square' failed" when a check this one requires has a result that did not
// pass; "" when all passed or are still to run (then the score gates it).
std::string failed_requirement(const CheckSpec& check, const std::vector<Judged>& done) {
  std::vector<std::string> failed;
  for (const auto& id : check.required)
    for (const auto& r : done)
      if (r.result().id == id && !r.passed()) failed.push_back("'" + id + "'");
  if (failed.empty()) return {};
  return fmt::format("{} failed (a speed check counts only for correct code)", fmt::join(failed, " and "));
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

void score_submission(SubmissionGrade& g) {
  g.score = g.max_score = 0;
  for (auto& lab : g.labs) {
    lab.points = 0;
    lab.max_points = lab.spec->total_points();
    lab.scores.clear();
    for (std::size_t i = 0; i < lab.results.size(); ++i) {
      lab.scores.push_back(score_check(lab.spec->checks[i], lab.results[i], lab.results));
      lab.points += lab.scores.back().points;
    }
    g.score += lab.weight * lab.points;
    g.max_score += lab.weight * lab.max_points;
  }
}

Grader::Grader(GraderConfig config) : cfg_(std::move(config)) {}

namespace {

// CUDALAB_PROFILE=1: where a grade's time goes, on stderr ("+12.34 s  lab
// 03_tiling built"), to find what to cut (issue 13). Off by default.
void profile(const std::string& what) {
  static const bool on = [] {
    const char* v = std::getenv("CUDALAB_PROFILE");
    return v && *v && std::string(v) != "0";
  }();
  if (!on) return;
  static const auto t0 = std::chrono::steady_clock::now();
  fmt::print(stderr, "+{:7.2f} s  {}\n",
             std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), what);
}

fs::path slot_dir(const fs::path& work_dir, int slot) {
  if (slot == Grader::kReferenceSlot) return work_dir / "reference";
  return slot == 0 ? work_dir : work_dir / fmt::format("slot-{}", slot);
}

}  // namespace

fs::path Grader::overlay(int slot) const {
  return slot_dir(cfg_.work_dir, slot) / "overlay" / "labs";
}

fs::path Grader::build(int slot) const {
  return slot_dir(cfg_.work_dir, slot) / "build";
}

std::string Grader::build_reference(const LabSpec& lab, bool cpu_mode) {
  const std::lock_guard<std::recursive_mutex> lock(reference_mutex_);
  const std::string target = lab.id + (cpu_mode ? "-tests-cpu" : "-tests");
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

namespace {

fs::path reference_binary(const fs::path& build, const LabSpec& lab, bool cpu_mode) {
  return build / "labs" / (lab.id + (cpu_mode ? "-tests-cpu" : "-tests"));
}

// Where the reference's results for a check are kept: <reference>/evidence/
// <gpu|cpu>/<seed>/<lab>/<check>.{evidence,seconds}.
fs::path reference_record(const fs::path& reference_dir, const RunContext& ctx, const LabSpec& lab,
                          const CheckSpec& check, bool cpu_mode, const char* ext) {
  return reference_dir / "evidence" / (cpu_mode ? "cpu" : "gpu") / (ctx.seed.empty() ? "default" : ctx.seed) /
         lab.id / (check.id + ext);
}

// A kept file is current when the reference binary is not newer.
bool current(const fs::path& file, const fs::path& binary) {
  std::error_code ec;
  return fs::exists(file, ec) && fs::last_write_time(file, ec) >= fs::last_write_time(binary, ec);
}

double read_seconds(const fs::path& file) {
  std::ifstream in(file);
  double s = 0;
  return in >> s && s > 0 ? s : 0;
}

void write_seconds(const fs::path& file, double seconds) {
  std::ofstream(file.string() + ".tmp") << fmt::format("{:.3f}\n", seconds);
  std::error_code ec;
  fs::rename(file.string() + ".tmp", file, ec);
}

}  // namespace

fs::path Grader::reference_evidence(const RunContext& ctx, const LabSpec& lab, const CheckSpec& check,
                                    bool cpu_mode, std::string& error, double* seconds) {
  const std::lock_guard<std::recursive_mutex> lock(reference_mutex_);
  error = build_reference(lab, cpu_mode);
  if (!error.empty()) return {};
  const fs::path binary = reference_binary(build(kReferenceSlot), lab, cpu_mode);
  const fs::path dir = slot_dir(cfg_.work_dir, kReferenceSlot);
  const fs::path file = reference_record(dir, ctx, lab, check, cpu_mode, ".evidence");
  const fs::path time_file = reference_record(dir, ctx, lab, check, cpu_mode, ".seconds");
  std::error_code ec;
  // Kept from an earlier run (a batch's first submission) with its time.
  if (current(file, binary) && current(time_file, binary)) {
    if (seconds) *seconds = read_seconds(time_file);
    // The seed's folder, newest again: pruning keeps the recently used.
    fs::last_write_time(file.parent_path().parent_path(), fs::file_time_type::clock::now(), ec);
    return file;
  }
  fs::create_directories(file.parent_path());
  RunContext rc = ctx;
  rc.binary = binary;
  rc.sanitizer.clear();
  rc.reference_evidence.clear();
  rc.reference_s = 0;
  // A name of its own: Slurm tasks on several nodes may compute it at once in
  // one shared grading folder; the rename below is atomic and the contents equal.
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  rc.evidence_out = file.string() + "." + host + "-" + run_stem(lab.id, check.id) + ".tmp";
  rc.max_timeout_s = 0;  // the course's cap is for students; the reference gets the lab's own limit
  const CheckResult r = run_reference_check(rc, lab, check).said;
  if (!r.passed()) {
    fs::remove(rc.evidence_out, ec);
    error = fmt::format(
        "the reference solution did not pass the check {} of {} ({}{}): the grader cannot judge it", check.id,
        lab.id, r.verdict, r.failures.empty() ? "" : ": " + r.failures.front());
    return {};
  }
  fs::rename(rc.evidence_out, file);
  write_seconds(time_file, r.seconds);
  if (seconds) *seconds = r.seconds;
  return file;
}

double Grader::reference_speed_seconds(const RunContext& ctx, const LabSpec& lab, const CheckSpec& check,
                                       bool cpu_mode) {
  const std::lock_guard<std::recursive_mutex> lock(reference_mutex_);
  if (!build_reference(lab, cpu_mode).empty()) return 0;
  const fs::path binary = reference_binary(build(kReferenceSlot), lab, cpu_mode);
  const fs::path time_file =
      reference_record(slot_dir(cfg_.work_dir, kReferenceSlot), ctx, lab, check, cpu_mode, ".seconds");
  if (current(time_file, binary)) return read_seconds(time_file);
  fs::create_directories(time_file.parent_path());
  RunContext rc = ctx;
  rc.binary = binary;
  rc.sanitizer.clear();
  rc.reference_evidence.clear();
  rc.evidence_out.clear();
  rc.reference_s = 0;
  rc.max_timeout_s = 0;
  const CheckResult r = run_reference_check(rc, lab, check).said;
  // Its time counts if the check ran to its end (a pass, or a ratio below the
  // threshold on this GPU, or "not run" in CPU mode); a hang or a crash of the
  // reference leaves the lab's limit.
  if (r.verdict != "pass" && r.verdict != "fail" && r.verdict != "not_run") return 0;
  write_seconds(time_file, r.seconds);
  return r.seconds;
}

namespace {

// Whether every lab of the course has targets in a configured build: Meson
// reads the list of labs only when it configures (labs/meson.build writes it
// to labs/configured-labs.txt, the folder first), so a lab the course gained
// since needs the build configured again.
bool has_labs(const fs::path& build, const std::vector<LabSpec>& labs) {
  std::istringstream in(read_all(build / "labs" / "configured-labs.txt"));
  std::set<std::string> configured;
  for (std::string line; std::getline(in, line);) configured.insert(line);
  for (const auto& lab : labs)
    if (!configured.count(lab.id)) return false;
  return true;
}

}  // namespace

bool Grader::ensure_configured(int slot, std::string& error) {
  const fs::path build_ = build(slot), overlay_ = overlay(slot);
  const bool configured = fs::exists(build_ / "build.ninja");
  if (configured && has_labs(build_, cfg_.labs)) return true;
  sync_overlay(nullptr, slot);
  ProcessOptions opt;
  opt.argv = {"meson",
              "setup",
              configured ? "--reconfigure" : "--buildtype=release",
              build_.string(),
              cfg_.source_root.string(),
              "-Dlabs_dir=" + overlay_.string(),
              "-Dvariants=false"};
  // Which GPUs to compile for: the build's own choice (auto: the visible
  // GPU's), unless the environment names them (the framework's tests do on a
  // machine without a GPU, to build one architecture instead of five).
  if (const char* arch = std::getenv("CUDALAB_GRADE_GPU_ARCH"); arch && *arch)
    opt.argv.push_back(std::string("-Dgpu_arch=") + arch);
  opt.timeout_s = cfg_.course.build_timeout_s;
  const ProcessResult p = run_process(opt);
  if (!p.ok()) {
    error = fmt::format("configuring the grading build in {} failed ({}):\n{}", build_.string(), p.describe(),
                        p.output);
    fs::remove_all(build_);
    return false;
  }
  return true;
}

void Grader::sync_overlay(const SubmissionPlan* plan, int slot) {
  const fs::path overlay_ = overlay(slot);
  const fs::path labs = cfg_.source_root / "labs";
  if (fs::exists(labs / "common"))
    for (const auto& e : fs::recursive_directory_iterator(labs / "common"))
      if (e.is_regular_file())
        sync_file(e.path(), overlay_ / "common" / fs::relative(e.path(), labs / "common"));
  for (const auto& lab : cfg_.labs) {
    for (const auto& e : fs::directory_iterator(labs / lab.id)) {
      if (!e.is_regular_file()) continue;
      const std::string name = e.path().filename().string();
      const bool student =
          std::find(lab.student_files.begin(), lab.student_files.end(), name) != lab.student_files.end();
      fs::path from = e.path();  // pristine; for a student file, the skeleton
      if (student && plan)
        if (const LabFiles* lf = plan->find(lab.id))
          for (const auto& [f, where] : lf->found)
            if (f == name) from = where;
      sync_file(from, overlay_ / lab.id / name);
    }
  }
}

std::string Grader::build_lab(const std::string& target, int slot, bool& ok) {
  return build_targets({target}, slot, ok);
}

namespace {

// The ninja program, where there is one: `meson compile` introspects the
// build first, 0.5 s on 16 cores for nothing to do, on every lab of every
// submission (ninja reruns Meson itself when a meson.build changed).
const fs::path& ninja_program() {
  static const fs::path ninja = [] {
    const auto found = programs_in_path("ninja");
    return found.empty() ? fs::path() : found.front();
  }();
  return ninja;
}

std::string target_path(const std::string& t) {
  return (t == "cudalab-gpuinfo" ? "harness/" : "labs/") + t;
}

// The folders of a ':'-separated list in the environment that exist.
std::vector<fs::path> env_dirs(const char* var) {
  std::vector<fs::path> out;
  const char* v = std::getenv(var);
  std::stringstream in(v ? v : "");
  std::error_code ec;
  for (std::string item; std::getline(in, item, ':');)
    if (!item.empty() && item[0] == '/' && fs::is_directory(item, ec)) out.push_back(item);
  return out;
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

// "abc: x y \\\n z" (ninja -t query's "input:" block) -> the inputs.
std::vector<std::string> query_inputs(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  bool inputs = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("  input:", 0) == 0) {
      inputs = true;
      continue;
    }
    if (line.rfind("  outputs:", 0) == 0) break;
    if (!inputs) continue;
    std::istringstream words(line);
    for (std::string w; words >> w;)
      if (w != "|" && w != "||") out.push_back(w);
  }
  return out;
}

}  // namespace

namespace {

// The prefixes of the programs a configured build runs (its compilers,
// linkers and the interpreter of its generators, as Meson's introspection
// names them; a bare name is looked up on PATH), read once per build folder.
std::vector<fs::path> configured_tool_roots(const fs::path& build_dir) {
  static std::mutex lock;
  static std::map<fs::path, std::vector<fs::path>> known;
  const std::lock_guard<std::mutex> guard(lock);
  if (auto it = known.find(build_dir); it != known.end()) return it->second;
  std::vector<fs::path> roots;
  const auto targets =
      nlohmann::json::parse(read_all(build_dir / "meson-info" / "intro-targets.json"), nullptr, false);
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

SandboxSpec Grader::build_sandbox(int slot, const fs::path& scratch) const {
  SandboxSpec box;
  box.build = true;
  box.scratch = scratch;
  box.write = {build(slot)};
  // The submission's copy and what a lab build compiles and links of the
  // course (never solutions/, tests/, the course file or another slot).
  std::error_code ec;
  box.read = {overlay(slot).parent_path()};
  for (const char* dir : {"harness", "simt", "tools", "labs"})
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

std::string Grader::build_targets(const std::vector<std::string>& targets, int slot, bool& ok) {
  const fs::path build_ = fs::absolute(build(slot)), overlay_ = overlay(slot);
  const fs::path& ninja = ninja_program();
  ProcessOptions opt;
  opt.timeout_s = cfg_.course.build_timeout_s;
  opt.output_cap = 1 << 20;
  opt.niceness = 10;  // in a batch, this may overlap the previous submission's timed checks
  const bool student_code = slot != kReferenceSlot && !ninja.empty() &&
                            std::any_of(targets.begin(), targets.end(),
                                        [](const std::string& t) { return t != "cudalab-gpuinfo"; });
  if (ninja.empty()) {
    opt.argv = {"meson", "compile", "-C", build_.string()};
    opt.argv.insert(opt.argv.end(), targets.begin(), targets.end());
  } else {
    opt.argv = {ninja.string(), "-C", build_.string()};
    for (const auto& t : targets) opt.argv.push_back(target_path(t));
  }
  std::filesystem::path scratch;
  if (student_code) {
    // The course's part first, outside the sandbox (it reads the solutions
    // compiled into the checks): the inputs of each target but the student's
    // own library and objects. Then the student's code, confined like a check.
    std::vector<std::string> course = {"build.ninja"};
    for (const auto& t : targets)
      for (const auto& in : course_inputs(target_path(t), slot)) course.push_back(in);
    ProcessOptions pre = opt;
    pre.argv = {ninja.string(), "-C", build_.string()};
    pre.argv.insert(pre.argv.end(), course.begin(), course.end());
    const ProcessResult p = run_process(pre);
    if (!p.ok()) {
      ok = false;
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
  if (ok) return {};
  // For the instructor who profiles a grade: the whole command and output.
  profile(fmt::format("build failed ({}): {}\n{}", p.describe(), fmt::join(opt.argv, " "), p.output));
  if (p.timed_out) return fmt::format("the build did not finish within {:.0f} s", opt.timeout_s);
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
  ProcessOptions q;
  q.argv = {ninja_program().string(), "-C", build(slot).string(), "-t", "query", target};
  q.timeout_s = 60;
  const ProcessResult p = run_process(q);
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

namespace {

// Splits a compile command as Meson writes it (arguments with spaces quoted).
std::vector<std::string> split_command(const std::string& cmd) {
  std::vector<std::string> out;
  std::string cur;
  char quote = 0;
  bool have = false;
  for (std::size_t i = 0; i < cmd.size(); ++i) {
    const char c = cmd[i];
    if (quote) {
      if (c == quote)
        quote = 0;
      else if (c == '\\' && quote == '"' && i + 1 < cmd.size())
        cur += cmd[++i];
      else
        cur += c;
    } else if (c == '\'' || c == '"') {
      quote = c, have = true;
    } else if (c == ' ') {
      if (have || !cur.empty()) out.push_back(cur), cur.clear(), have = false;
    } else {
      cur += c;
    }
  }
  if (have || !cur.empty()) out.push_back(cur);
  return out;
}

// The files a make-style dependency list names ("x.o: a.cu b.h \\ ...").
std::vector<std::string> parse_deps(const std::string& text) {
  std::vector<std::string> out;
  const auto colon = text.find(": ");
  std::istringstream in(colon == std::string::npos ? text : text.substr(colon + 2));
  for (std::string tok; in >> tok;)
    if (tok != "\\") out.push_back(tok);
  return out;
}

}  // namespace

namespace {

// Whether compile_commands.json's entry `e` compiles the student file `f` of
// `lab` from the overlay: nvcc's object (GPU), or g++'s of its simt
// translation (CPU mode). labs/meson.build compiles them into a library of
// their own, linked last.
bool student_object(const nlohmann::json& e, const fs::path& overlay, const LabSpec& lab,
                    const std::string& f, bool cpu) {
  const std::string src = (overlay / lab.id / f).string();
  const std::string prefix = "labs/lib" + lab.id + (cpu ? "-student-cpu.a.p/" : "-student.a.p/");
  const std::string cpu_src = "cpu-" + lab.id + "-" + f + ".cpp";
  const std::string file = e.is_object() ? e.value("file", "") : "";
  const bool mine = cpu ? file.size() >= cpu_src.size() &&
                              file.compare(file.size() - cpu_src.size(), cpu_src.size(), cpu_src) == 0
                        : file == src;
  return mine && e.value("output", "").rfind(prefix, 0) == 0;
}

}  // namespace

std::string Grader::policy_problems(const LabSpec& lab, int slot, bool fresh_only, bool cpu_mode) {
  const fs::path build_ = build(slot), overlay_ = overlay(slot);
  const auto db = nlohmann::json::parse(read_all(build_ / "compile_commands.json"), nullptr, false);
  if (!db.is_array()) return "the grader could not read compile_commands.json to check the submission";
  const auto object_of = [&](const nlohmann::json& e, const std::string& f, bool cpu) {
    return student_object(e, overlay_, lab, f, cpu);
  };
  std::vector<std::string> problems;
  for (const auto& f : lab.student_files) {
    const std::string src = (overlay_ / lab.id / f).string();
    for (const auto& e : db) {
      if (!object_of(e, f, cpu_mode)) continue;
      const fs::path object = build_ / e.value("output", "");
      std::error_code ec;
      // After a failed build, only an object compiled from this very file counts.
      if (fresh_only &&
          (!fs::exists(object, ec) || fs::last_write_time(object, ec) < fs::last_write_time(src, ec)))
        continue;
      // What it may call, define and contain (policy.h). Who owns the names
      // of the link is read once per grader run.
      std::string error;
      ObjectRules rules;
      rules.launchers = lab.launchers;
      rules.cpu_mode = cpu_mode;
      std::string cudart;
      for (const auto& g : db)  // the CUDA runtime next to the nvcc that compiled the GPU object
        if (const auto argv = split_command(g.value("command", "")); object_of(g, f, false) && !argv.empty())
          cudart = find_cudart_static(argv[0]);
      const Owners owners = link_owners(build_, lab.id, cpu_mode, cudart, error);
      rules.owners = &owners;
      if (cpu_mode)  // its kernels are those of the same file's GPU object (no stubs here)
        for (const auto& g : db)
          if (object_of(g, f, false)) rules.kernels = object_kernels(build_ / g.value("output", ""), error);
      for (const auto& v : check_object(object, rules, error)) problems.push_back(v.describe(f));
      if (!error.empty()) problems.push_back(error);
    }
  }
  std::string out;
  for (std::size_t i = 0; i < problems.size() && i < 6; ++i) out += (i ? "\n" : "") + problems[i];
  if (problems.size() > 6) out += fmt::format("\n... and {} more", problems.size() - 6);
  return out;
}

namespace {

// Beneath `root` (both canonical), or `root` itself.
bool beneath(const fs::path& path, const fs::path& root) {
  auto p = path.begin(), r = root.begin();
  for (; r != root.end(); ++p, ++r)
    if (p == path.end() || *p != *r) return false;
  return true;
}

// The folders a lab's file may include from: the compile command's own -I,
// -isystem and -iquote folders and the source's folder, the compiler's
// system headers, CUDA's, and those the machine adds (CPATH and the like).
std::vector<fs::path> include_roots(const std::vector<std::string>& argv, const fs::path& cwd,
                                    const fs::path& source) {
  std::vector<fs::path> roots;
  std::error_code ec;
  const auto add = [&](const fs::path& dir) {
    const fs::path p = fs::weakly_canonical(dir.is_absolute() ? dir : cwd / dir, ec);
    if (!ec && !p.empty()) roots.push_back(p);
  };
  add(source.parent_path());
  for (std::size_t i = 0; i < argv.size(); ++i)
    for (const char* flag : {"-I", "-isystem", "-iquote", "-idirafter"}) {
      const std::string f = flag;
      if (argv[i] == f && i + 1 < argv.size())
        add(argv[i + 1]);
      else if (argv[i].rfind(f, 0) == 0 && argv[i].size() > f.size() && f == "-I")
        add(argv[i].substr(2));
    }
  for (const char* dir : {"/usr/include", "/usr/local/include", "/usr/lib/gcc"}) add(dir);
  if (!argv.empty())  // the toolkit of this very compiler (nvcc: <root>/bin/nvcc)
    for (const auto& compiler : programs_in_path(fs::path(argv[0]).filename().string()))
      if (fs::path(argv[0]).filename() == "nvcc") {
        add(compiler.parent_path().parent_path() / "include");
        add(compiler.parent_path().parent_path() / "targets");
      }
  for (const char* var : {"CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH"})
    for (const auto& d : env_dirs(var)) add(d);
  return roots;
}

// The paths a failed preprocessing could not include ("x.cu:3:10: fatal
// error: /etc/shadow: Permission denied"), from the compiler's own lines.
std::vector<std::string> failed_includes(const std::string& log) {
  std::vector<std::string> out;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    const auto at = line.find(" fatal error: ");
    if (at == std::string::npos) continue;
    const std::string rest = line.substr(at + 14);
    const auto colon = rest.rfind(": ");
    if (colon != std::string::npos && colon > 0) out.push_back(rest.substr(0, colon));
  }
  return out;
}

}  // namespace

std::string Grader::include_problems(const LabSpec& lab, int slot) {
  const fs::path build_ = fs::absolute(build(slot)), overlay_ = overlay(slot);
  const auto db = nlohmann::json::parse(read_all(build_ / "compile_commands.json"), nullptr, false);
  if (!db.is_array()) return "the grader could not read compile_commands.json to check the submission";
  std::vector<std::string> problems;
  for (const auto& f : lab.student_files) {
    const fs::path src = overlay_ / lab.id / f;
    const nlohmann::json* entry = nullptr;
    for (const auto& e : db)
      if (student_object(e, overlay_, lab, f, /*cpu=*/false)) entry = &e;
    if (!entry) continue;  // a build without CUDA: CPU mode translates the file first (the same includes)
    // Its includes, from the compiler itself with the build's own flags,
    // before anything is compiled; confined like the build.
    const std::vector<std::string> argv = split_command(entry->value("command", ""));
    std::vector<std::string> deps_cmd;
    for (std::size_t i = 0; i < argv.size(); ++i) {
      if (argv[i] == "-o" || argv[i] == "-MF" || argv[i] == "-MQ" || argv[i] == "-MT") {
        ++i;
        continue;
      }
      if (argv[i] == "-c" || argv[i] == "-MD" || argv[i] == "-MMD") continue;
      deps_cmd.push_back(argv[i]);
    }
    deps_cmd.push_back("-M");
    ProcessOptions opt;
    opt.cwd = build_.string();
    opt.timeout_s = std::min(120.0, cfg_.course.build_timeout_s);
    opt.output_cap = 4 << 20;
    opt.niceness = 10;  // like the build it checks
    fs::path scratch;
    ProcessResult p;
    try {
      scratch = make_scratch_dir(fmt::format("includes-{}", slot));
      opt.argv = sandboxed_argv(build_sandbox(slot, scratch), deps_cmd);
      p = run_process(opt);
    } catch (const std::exception& e) {
      remove_scratch_dir(scratch);
      return fmt::format("the grader cannot check includes confined: {}", e.what());
    }
    remove_scratch_dir(scratch);
    std::vector<std::string> deps;
    for (const auto& d : p.ok() ? parse_deps(p.output) : failed_includes(p.output))  // relative to the build
      deps.push_back(fs::path(d).is_absolute() ? d : (build_ / d).string());
    for (const auto& inc : forbidden_includes(deps, cfg_.source_root, overlay_ / lab.id))
      problems.push_back(
          fmt::format("{} includes {}, a file of the course itself (tests or solutions): a submission must "
                      "be its own code",
                      f, inc));
    if (!problems.empty()) continue;
    const std::vector<fs::path> roots = include_roots(deps_cmd, build_, src);
    std::error_code ec;
    for (const auto& d : deps) {
      const fs::path real = fs::weakly_canonical(d, ec);
      if (d.size() > 2 && d.compare(d.size() - 2, 2, ".o") == 0) continue;  // the rule's target
      if (std::none_of(roots.begin(), roots.end(), [&](const fs::path& r) { return beneath(real, r); }))
        problems.push_back(fmt::format(
            "{} includes {}, which is outside what a lab may include (the lab's own folder, the course's "
            "headers, "
            "the compiler's and CUDA's headers): the lab was not compiled, and nothing of that file is shown",
            f, printable(d)));
    }
    if (!p.ok() && p.timed_out)
      problems.push_back(
          fmt::format("{}: listing its includes did not finish within {:.0f} s", f, opt.timeout_s));
  }
  std::string out;
  for (std::size_t i = 0; i < problems.size() && i < 6; ++i) out += (i ? "\n" : "") + problems[i];
  if (problems.size() > 6) out += fmt::format("\n... and {} more", problems.size() - 6);
  return out;
}

bool Grader::student_device_code(const LabSpec& lab, int slot, const fs::path& out, std::string& error) {
  const fs::path build_ = build(slot), overlay_ = overlay(slot);
  const auto db = nlohmann::json::parse(read_all(build_ / "compile_commands.json"), nullptr, false);
  if (!db.is_array()) {
    error = "the grader could not read compile_commands.json";
    return false;
  }
  // The objects of the student's own library (labs/meson.build), and only those.
  std::vector<std::string> pieces;
  for (const auto& f : lab.student_files) {
    for (const auto& e : db) {
      if (!student_object(e, overlay_, lab, f, /*cpu=*/false)) continue;
      std::string fatbin, why;
      // Host-only files (.cpp) have no device code.
      if (replay::elf_section(read_all(build_ / e.value("output", "")), ".nv_fatbin", fatbin, why))
        pieces.push_back(std::move(fatbin));
    }
  }
  if (pieces.empty()) {
    error = "none of the submission's files has compiled kernels";
    return false;
  }
  std::ofstream o(out, std::ios::binary | std::ios::trunc);
  o << replay::pack(pieces);
  if (!o) {
    error = "the grader could not write " + out.string();
    return false;
  }
  return true;
}

Judged Grader::run_speed_check(const RunContext& ctx, const LabSpec& lab, const CheckSpec& check, int slot,
                               std::string& launch) {
  const fs::path base = ctx.work_dir / run_stem(lab.id, check.id);
  fs::create_directories(ctx.work_dir);
  struct Remove {
    std::vector<fs::path> files;
    ~Remove() {
      std::error_code ec;
      for (const auto& f : files) fs::remove(f, ec);
    }
  } remove{{base.string() + ".trace", base.string() + ".kernels"}};
  RunContext traced = ctx;
  traced.trace_out = base.string() + ".trace";
  Claim claim = run_student_check(traced, lab, check);
  // Whatever the student's run says of itself counts for nothing but a
  // failure: a pass only means "traced", and the grader's replay times it.
  if (claim.said.verdict == "pass")
    if (std::string big = over_bound(traced.trace_out, kMaxTraceBytes, "its launch trace"); !big.empty())
      claim.said.verdict = "fail", claim.said.failures = {std::move(big)};
  if (claim.said.verdict != "pass") return judge_speed_untimed(std::move(claim));
  const double traced_s = claim.said.seconds;
  profile(fmt::format("  {} {} traced", lab.id, check.id));
  launch = describe_traced_launch(read_all(traced.trace_out));
  std::string error;
  const std::string reference_error = build_reference(lab, /*cpu_mode=*/false);
  if (!reference_error.empty() || !student_device_code(lab, slot, base.string() + ".kernels", error))
    return judge_by_grader(check, "error",
                           fmt::format("the grader cannot time this submission: {}",
                                       reference_error.empty() ? error : reference_error));
  profile(fmt::format("  {} {} kernels extracted", lab.id, check.id));
  RunContext rc = ctx;
  rc.binary = reference_binary(build(kReferenceSlot), lab, false);
  rc.replay_trace = base.string() + ".trace";
  rc.replay_code = base.string() + ".kernels";
  Testimony timed = run_reference_check(rc, lab, check);
  timed.said.seconds += traced_s;
  timed.said.notes.insert(
      timed.said.notes.begin(),
      "timed by the grader: your kernels, replayed from the launches your launcher made, in a "
      "process that runs none of your host code");
  return judge_speed_timed(std::move(timed));
}

void Grader::explain_slow(const RunContext& ctx, const LabSpec& lab, const CheckSpec& speed, int slot,
                          const std::string& launch, CheckResult& r) {
  const CheckSpec* by = lab.find_by_id(speed.explain);
  if (!by || !timed_and_failed(r)) return;
  bool ok = false;
  build_lab(lab.id + "-tests-access", slot, ok);
  if (!ok) return;
  explain_by_access(ctx, lab, *by, build(slot) / "labs" / (lab.id + "-tests-access"),
                    ctx.work_dir / (run_stem(lab.id, by->id) + "-access.json"), launch, r);
}

bool Grader::second_look(const RunContext& ctx, const LabSpec& lab, const CheckSpec& check, int slot,
                         CheckResult& r) {
  const SecondOpinion kind = second_opinion_for(r, !compute_sanitizer_program().empty());
  if (kind == SecondOpinion::none) return false;
  // Built only when a look needs it (--prepare builds it on a GPU host).
  const auto cpu_binary = [&]() -> fs::path {
    bool ok = false;
    build_lab(lab.id + "-tests-cpu", slot, ok);
    return ok ? build(slot) / "labs" / (lab.id + "-tests-cpu") : fs::path();
  };
  return second_opinion(ctx, lab, check, kind, cpu_binary, r);
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
  const auto prepare_reference = [this]() -> std::string {
    for (const auto& lab : cfg_.labs)
      for (bool cpu : {false, true}) {
        if (cpu && !cfg_.course.cpu_mode) continue;
        if (std::string e = build_reference(lab, cpu); !e.empty()) return e;
      }
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

SubmissionGrade Grader::grade(const fs::path& submission, const std::string& id) {
  return run(stage(submission, id, 0));
}

Grader::Staged Grader::stage(const fs::path& submission, const std::string& id, int slot) {
  const auto t0 = std::chrono::steady_clock::now();
  profile(fmt::format("slot {}: staging {}", slot, id));
  Staged st;
  st.slot = slot;
  SubmissionGrade& g = st.grade;
  g.id = id;
  for (const auto& lab : cfg_.labs) {
    LabGrade lg;
    lg.spec = &lab;
    lg.weight = cfg_.course.weight(lab.id);
    g.labs.push_back(lg);
  }
  st.ready.assign(g.labs.size(), false);
  auto done = [&] {
    st.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return st;
  };
  auto fail_all = [&](const std::string& why) {
    g.error = why;
    for (auto& lab : g.labs) lab.status = "missing", lab.message = why;
  };

  // The submission: a folder, or an archive unpacked into the slot's folder.
  fs::path root = submission;
  if (!fs::exists(submission)) {
    fail_all(fmt::format("the submission {} does not exist", submission.string()));
    return done();
  }
  if (fs::is_regular_file(submission)) {
    if (!is_archive(submission)) {
      fail_all(fmt::format("{} is neither a folder nor a .zip, .tar.gz or .tar archive",
                           printable(submission.filename().string())));
      return done();
    }
    root = build(slot).parent_path() / "unpacked";
    fs::remove_all(root);
    std::string error;
    if (!extract_archive(submission, root, cfg_.source_root, g.ignored, error)) {
      std::error_code ec;
      fs::remove_all(root, ec);  // what a refused archive left: nothing stays
      fail_all(error);
      return done();
    }
  }
  const SubmissionPlan plan = plan_submission(root, cfg_.labs);
  g.ignored.insert(g.ignored.end(), plan.ignored.begin(), plan.ignored.end());
  g.notes.insert(g.notes.end(), plan.notes.begin(), plan.notes.end());
  // Each lab's inputs' seed, from its files as handed in (seed.h).
  st.seeds.assign(g.labs.size(), "");
  for (std::size_t i = 0; i < g.labs.size(); ++i)
    if (const LabFiles* files = plan.find(g.labs[i].spec->id); files && files->complete()) {
      std::vector<std::pair<std::string, std::string>> contents;
      for (const auto& [name, where] : files->found) contents.emplace_back(name, read_all(where));
      st.seeds[i] = derive_seed(key(), cfg_.seed, g.labs[i].spec->id, std::move(contents));
    }

  std::string error;
  if (!ensure_configured(slot, error)) throw std::runtime_error(error);
  sync_overlay(&plan, slot);
  // An unpacked archive has given the overlay its student files: nothing of
  // it stays in the grading folder.
  if (root != submission) {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
  if (!fs::exists(build(slot) / "harness" / "cudalab-gpuinfo")) {
    bool ignored = false;
    build_lab("cudalab-gpuinfo", slot, ignored);
  }
  // What each lab's files include, before anything is compiled: an include
  // from outside what a lab may include rejects the lab unbuilt.
  // Side by side: each lab's listing is one preprocessor run.
  std::vector<std::string> include_bad(g.labs.size());
  for_each_side_by_side(g.labs.size(), g.labs.size(), [&](std::size_t i) {
    if (const LabFiles* files = plan.find(g.labs[i].spec->id); files && files->complete())
      include_bad[i] = include_problems(*g.labs[i].spec, slot);
  });
  // Every complete lab's build at once first: ninja compiles the labs side by
  // side. A lab that fails is built again alone below, for its own log.
  {
    std::vector<std::string> targets;
    for (std::size_t i = 0; i < g.labs.size(); ++i)
      if (const LabFiles* files = plan.find(g.labs[i].spec->id);
          files && files->complete() && include_bad[i].empty())
        targets.push_back(g.labs[i].spec->id + "-tests");
    bool all_ok = false;
    if (!targets.empty()) {
      profile(fmt::format("slot {}: building {} labs", slot, targets.size()));
      build_targets(targets, slot, all_ok);
      profile(fmt::format("slot {}: built", slot));
    }
  }
  // The policy of each built lab, side by side (each reads its own objects).
  std::vector<std::future<std::string>> policies(g.labs.size());
  std::vector<std::string> build_logs(g.labs.size());
  std::vector<bool> built(g.labs.size(), false);
  for (std::size_t i = 0; i < g.labs.size(); ++i) {
    const LabFiles* files = plan.find(g.labs[i].spec->id);
    if (!files || !files->complete() || !include_bad[i].empty()) continue;
    bool ok = false;
    build_logs[i] = build_lab(g.labs[i].spec->id + "-tests", slot, ok);
    built[i] = ok;
    if (ok)
      policies[i] = std::async(std::launch::async,
                               [this, &g, i, slot] { return policy_problems(*g.labs[i].spec, slot); });
  }
  for (std::size_t i = 0; i < g.labs.size(); ++i) {
    LabGrade& lab = g.labs[i];
    const LabFiles* files = plan.find(lab.spec->id);
    if (!files || !files->complete()) {
      std::string why;
      if (files)
        for (const auto& m : files->missing) why += (why.empty() ? "" : "; ") + m;
      lab.status = "missing";
      lab.message = why;
      continue;
    }
    if (!include_bad[i].empty()) {
      lab.status = "rejected";
      lab.message = "the lab was not run:\n" + include_bad[i];
      continue;
    }
    bool ok = built[i];
    const std::string& log = build_logs[i];
    if (!ok) {
      // A link error after a clean compile is often a call the lab forbids
      // (cuBLAS is not linked): the policy names it better than the linker.
      if (const std::string bad = policy_problems(*lab.spec, slot, /*fresh_only=*/true); !bad.empty()) {
        lab.status = "rejected";
        lab.message = "the lab was not run:\n" + bad;
        continue;
      }
      lab.status = "build_failed";
      lab.message = "the lab did not compile:\n" + log;
      continue;
    }
    if (const std::string bad = policies[i].get(); !bad.empty()) {
      lab.status = "rejected";
      lab.message = "the lab was not run:\n" + bad;
      continue;
    }
    profile(fmt::format("slot {}: {} policy checked", slot, lab.spec->id));
    if (cfg_.course.cpu_mode || cfg_.cpu_fallback) {
      const std::string cpu_log = build_lab(lab.spec->id + "-tests-cpu", slot, ok);
      // The CPU-mode object is the student's code too, compiled another way:
      // the same policy, with simt's runtime in place of CUDA's.
      if (const std::string bad = policy_problems(*lab.spec, slot, /*fresh_only=*/!ok, /*cpu_mode=*/true);
          !bad.empty()) {
        lab.status = "rejected";
        lab.message = "the lab was not run:\n" + bad;
        continue;
      }
      if (!ok) {
        lab.status = "build_failed";
        lab.message = "the lab did not compile for CPU mode:\n" + cpu_log;
        continue;
      }
    }
    st.ready[i] = true;
  }
  return done();
}

std::vector<std::string> parse_gpus(const std::string& spec, int visible_count, const char* visible,
                                    std::string& error) {
  std::vector<std::string> names;  // what CUDA_VISIBLE_DEVICES calls GPU i
  if (visible && *visible) {
    std::stringstream in(visible);
    for (std::string item; std::getline(in, item, ',');)
      if (!item.empty()) names.push_back(item);
  }
  const auto name_of = [&](int i) {
    return i < static_cast<int>(names.size()) ? names[i] : std::to_string(i);
  };
  std::vector<std::string> out;
  if (visible_count <= 0) {
    error = "--gpus: no GPU is usable here";
    return out;
  }
  const auto is_number = [](const std::string& t) {
    return !t.empty() && t.size() < 6 &&
           std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (spec == "all") {
    for (int i = 0; i < visible_count; ++i) out.push_back(name_of(i));
    return out;
  }
  if (spec.find(',') == std::string::npos && is_number(spec)) {
    const int n = std::stoi(spec);
    if (n < 1 || n > visible_count) {
      error = fmt::format("--gpus {}: this machine has {} usable GPU{}", spec, visible_count,
                          visible_count == 1 ? "" : "s");
      return out;
    }
    for (int i = 0; i < n; ++i) out.push_back(name_of(i));
    return out;
  }
  std::stringstream in(spec);
  for (std::string item; std::getline(in, item, ',');) {
    const std::string t = item.size() > 0 && item[0] == ' ' ? item.substr(1) : item;
    if (!is_number(t) || std::stoi(t) >= visible_count) {
      error = fmt::format(
          "--gpus {}: '{}' is not a GPU here (\"all\", a count, or indices 0 to {} separated by commas)",
          spec, t, visible_count - 1);
      return {};
    }
    const std::string name = name_of(std::stoi(t));
    if (std::find(out.begin(), out.end(), name) != out.end()) {
      error = fmt::format("--gpus {}: GPU {} is named twice (one check at a time per GPU)", spec, t);
      return {};
    }
    out.push_back(name);
  }
  if (out.empty()) error = "--gpus: no GPU named";
  return out;
}

void grade_batch(
    Grader& grader, std::size_t count, const std::vector<std::string>& gpus, int slot_base,
    const std::function<Grader::Staged(std::size_t k, int slot)>& stage,
    const std::function<void(std::size_t k, SubmissionGrade* grade, const std::string& error)>& done) {
  const std::vector<std::string> devices = gpus.empty() ? std::vector<std::string>{""} : gpus;
  std::mutex m;
  std::size_t next = 0;
  const auto take = [&]() -> std::optional<std::size_t> {
    const std::lock_guard<std::mutex> lock(m);
    if (next >= count) return std::nullopt;
    return next++;
  };
  std::mutex report;
  const auto worker = [&](std::size_t w) {
    // Two slots per worker: its next submission builds in one while its GPU
    // runs the checks of the one staged in the other.
    const int slots[2] = {slot_base + static_cast<int>(2 * w), slot_base + static_cast<int>(2 * w + 1)};
    int turn = 0;
    struct Next {
      std::size_t k;
      std::future<Grader::Staged> staged;
    };
    const auto begin = [&](std::size_t k) {
      const int slot = slots[turn];
      turn ^= 1;
      return Next{k, std::async(std::launch::async, [&stage, k, slot] { return stage(k, slot); })};
    };
    std::optional<Next> cur;
    if (const auto k = take()) cur = begin(*k);
    while (cur) {
      std::optional<Next> after;
      std::string error;
      std::optional<SubmissionGrade> g;
      try {
        Grader::Staged st = cur->staged.get();
        if (const auto k = take()) after = begin(*k);
        st.gpu = devices[w];
        g = grader.run(std::move(st));
      } catch (const std::exception& e) {
        error = e.what();
        if (!after)
          if (const auto k = take()) after = begin(*k);
      }
      {
        const std::lock_guard<std::mutex> lock(report);
        done(cur->k, g ? &*g : nullptr, error);
      }
      cur = std::move(after);
    }
  };
  std::vector<std::thread> threads;
  for (std::size_t w = 1; w < devices.size(); ++w) threads.emplace_back(worker, w);
  worker(0);
  for (auto& t : threads) t.join();
}

std::size_t check_jobs(int configured, bool cpu_mode, unsigned cores) {
  if (configured > 0) return static_cast<std::size_t>(configured);
  const std::size_t n = std::max(1u, cores);
  return cpu_mode ? n : std::min<std::size_t>(8, n);
}

SubmissionGrade Grader::run(Staged st) {
  const auto t0 = std::chrono::steady_clock::now();
  SubmissionGrade g = std::move(st.grade);
  if (g.error.empty()) {
    // The GPU, once per submission (a previous one may have left it unusable).
    ProcessOptions probe;
    probe.argv = {(build(st.slot) / "harness" / "cudalab-gpuinfo").string()};
    probe.timeout_s = 60;
    if (!st.gpu.empty()) {
      std::map<std::string, std::string> env = minimal_environment();
      env["CUDA_VISIBLE_DEVICES"] = st.gpu;
      probe.env = env;
    }
    const ProcessResult pr = run_process(probe);
    const auto info = nlohmann::json::parse(pr.output, nullptr, false);
    g.gpu = !info.is_discarded() && info.is_object() && info.value("usable", false);
    g.gpu_line = info.is_object() ? (g.gpu ? info.value("name", "") : info.value("reason", ""))
                                  : "not probed: " + pr.describe();
    g.cpu_mode = !g.gpu && (cfg_.course.cpu_mode || cfg_.cpu_fallback);
    g.provisional = g.cpu_mode && !cfg_.course.cpu_mode;
  }
  profile(fmt::format("slot {}: probed the GPU", st.slot));
  RunContext ctx;
  ctx.seed = cfg_.seed;
  ctx.work_dir = cfg_.work_dir / "records";
  ctx.clean_env = true;
  ctx.max_timeout_s = cfg_.course.check_timeout_s;
  // This submission's GPU alone, for its checks and for the reference runs
  // they cause (the reference's evidence does not depend on which GPU of a
  // host ran it).
  if (!st.gpu.empty()) ctx.extra_env.push_back("CUDA_VISIBLE_DEVICES=" + st.gpu);
  // Three passes (issue 13: a warm grade spent most of its time starting one
  // check after another):
  //  1. the reference's evidence and time for every correctness check, one
  //     at a time (kept from the batch's first submission: free after it);
  //  2. the student's correctness checks of all labs side by side (they time
  //     nothing; each still runs alone in its own confined process with its
  //     own limit), then the second looks at those that failed;
  //  3. the speed checks, one at a time, after every correctness check, so
  //     that nothing else runs on the GPU while one is timed, and each sees
  //     whether the checks it requires passed.
  struct Pending {
    std::size_t lab, check;
    RunContext ctx;
  };
  std::vector<std::vector<std::optional<Judged>>> done(g.labs.size());
  std::vector<Pending> correctness;
  for (std::size_t i = 0; i < g.labs.size(); ++i) {
    LabGrade& lab = g.labs[i];
    if (!st.ready[i]) continue;
    if (!g.gpu && !g.cpu_mode) {
      lab.status = "not_run";
      lab.message = "built; the checks need a GPU and none is usable (" + g.gpu_line + ")";
      continue;
    }
    lab.status = "graded";
    done[i].resize(lab.spec->checks.size());
    RunContext lc = ctx;
    lc.binary = build(st.slot) / "labs" / (lab.spec->id + (g.cpu_mode ? "-tests-cpu" : "-tests"));
    lc.lab_toml = lab.spec->file;
    lc.seed = st.seeds[i];
    for (std::size_t c = 0; c < lab.spec->checks.size(); ++c) {
      const CheckSpec& check = lab.spec->checks[c];
      if (check.kind != "correctness") continue;
      RunContext cc = lc;
      std::string no_judge;
      cc.reference_evidence = reference_evidence(lc, *lab.spec, check, g.cpu_mode, no_judge, &cc.reference_s);
      // Without the reference's outputs nothing can be judged: a pass from
      // the test process alone is worth nothing.
      if (cc.reference_evidence.empty())
        done[i][c] = judge_by_grader(check, "error", no_judge);
      else
        correctness.push_back({i, c, cc});
    }
  }
  profile(fmt::format("slot {}: reference evidence ready", st.slot));
  // The longest first (by the reference's time on each): the last to finish
  // then is a short one, and the pass ends soon after the longest check.
  std::stable_sort(correctness.begin(), correctness.end(),
                   [](const Pending& a, const Pending& b) { return a.ctx.reference_s > b.ctx.reference_s; });
  {
    std::vector<std::optional<Judged>> ran(correctness.size());
    const std::size_t jobs = check_jobs(cfg_.check_jobs, g.cpu_mode, std::thread::hardware_concurrency());
    for_each_side_by_side(correctness.size(), jobs, [&](std::size_t k) {
      const Pending& p = correctness[k];
      const LabSpec& spec = *g.labs[p.lab].spec;
      const CheckSpec& check = spec.checks[p.check];
      // The student's process claims; the judge compares its outputs with the reference's.
      ran[k] = judge_correctness(run_student_check(p.ctx, spec, check), p.ctx.reference_evidence, check);
    });
    profile(fmt::format("slot {}: {} correctness checks ran", st.slot, correctness.size()));
    // Labs whose hung check did not finish in CPU mode either: their other
    // hung checks are spared that look (a submission that hangs in every
    // check of a lab should cost about 30 s).
    std::vector<std::string> hangs_in_cpu_mode(g.labs.size());  // the check that did
    for (std::size_t k = 0; k < correctness.size(); ++k) {
      const Pending& p = correctness[k];
      const LabSpec& spec = *g.labs[p.lab].spec;
      const CheckSpec& check = spec.checks[p.check];
      Judged& r = *ran[k];
      RunContext plain = p.ctx;
      plain.reference_evidence.clear();
      plain.reference_s = 0;
      // The second looks say why; they never change a verdict (edit_words).
      r.edit_words([&](CheckResult& words) {
        if (g.cpu_mode) lead_hang_in_cpu_mode(words);
        if (g.gpu && words.verdict == "timeout" && !hangs_in_cpu_mode[p.lab].empty())
          lead_hang_like(hangs_in_cpu_mode[p.lab], words);
        else if (g.gpu && second_look(plain, spec, check, st.slot, words) && words.verdict == "timeout")
          hangs_in_cpu_mode[p.lab] = check.name;
      });
      // Under the sanitizers too: a kernel can be right by luck (a race that
      // did not bite, a read past the end that found harmless values). Their
      // report can only fail a check.
      for (const auto& tool : cfg_.sanitizers) {
        if (!g.gpu || !r.passed()) break;
        RunContext sc = plain;
        sc.sanitizer = tool;
        const CheckResult s = run_check(sc, spec, check);
        if (!s.failures.empty() && s.failures.front().rfind("compute-sanitizer", 0) == 0)
          r.lower_to_fail(s.failures.front());
      }
      done[p.lab][p.check] = std::move(r);
    }
  }
  for (std::size_t i = 0; i < g.labs.size(); ++i) {
    LabGrade& lab = g.labs[i];
    if (lab.status != "graded") continue;
    RunContext lc = ctx;
    lc.binary = build(st.slot) / "labs" / (lab.spec->id + (g.cpu_mode ? "-tests-cpu" : "-tests"));
    lc.lab_toml = lab.spec->file;
    lc.seed = st.seeds[i];
    std::vector<Judged> correct;  // what the speed checks' requirements read
    for (const auto& r : done[i])
      if (r) correct.push_back(*r);
    for (std::size_t c = 0; c < lab.spec->checks.size(); ++c) {
      const CheckSpec& check = lab.spec->checks[c];
      if (done[i][c]) continue;
      // A speed check counts only when the correctness checks it requires
      // passed (score.h): where one failed it is not timed at all, and says why.
      if (const std::string failed = failed_requirement(check, correct); !failed.empty()) {
        done[i][c] = judge_by_grader(check, "not_run", "not timed: " + failed);
        continue;
      }
      // CPU mode times nothing: the grader does not run a speed check
      // there, whatever a record would say of it.
      if (g.cpu_mode) {
        Judged r = judge_by_grader(check, "not_run", "");
        r.edit_words([](CheckResult& w) { w.notes.push_back(kSpeedNotRunInCpuMode); });
        done[i][c] = std::move(r);
        continue;
      }
      RunContext cc = lc;
      RunContext speed_ctx = lc;
      speed_ctx.seed = reference_speed_seed();
      cc.reference_s = reference_speed_seconds(speed_ctx, *lab.spec, check, false);
      std::string launch;
      Judged r = run_speed_check(cc, *lab.spec, check, st.slot, launch);
      if (!check.explain.empty())
        r.edit_words([&](CheckResult& words) { explain_slow(lc, *lab.spec, check, st.slot, launch, words); });
      profile(fmt::format("slot {}: {} {} ran", st.slot, lab.spec->id, check.id));
      done[i][c] = std::move(r);
    }
    for (auto& r : done[i]) {
      // The grading folder's paths mean nothing to a student: "launched at
      // labs/03_tiling/matmul_tiled.cu:61", as in the build log.
      r->edit_words([&](CheckResult& words) {
        std::vector<std::string*> texts{&words.output};
        for (auto& f : words.failures) texts.push_back(&f);
        for (auto& n : words.notes) texts.push_back(&n);
        for (int slot : {st.slot, 0, kReferenceSlot})
          for (const fs::path& dir : {fs::absolute(overlay(slot)), overlay(slot)})
            for (std::string* text : texts) replace_all(*text, dir.string() + "/", "labs/");
      });
      lab.results.push_back(std::move(*r));
    }
  }
  for (auto& lab : g.labs)
    if (lab.status != "graded") fill_unrun(lab);
  score_submission(g);
  prune_reference_evidence();
  g.seconds = st.seconds + std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return g;
}

const GradingKey& Grader::key() {
  const std::lock_guard<std::mutex> lock(key_mutex_);
  if (!key_) key_ = grading_key(cfg_.work_dir);
  return *key_;
}

std::string Grader::reference_speed_seed() {
  // The speed checks time fresh inputs of their own (cudalab/timing.h); this
  // seed only keeps the reference's time apart from every student's seed.
  return derive_seed(key(), cfg_.seed, "reference speed runs", {});
}

namespace {
// The reference's evidence kept, per mode, for this many seeds: a batch on N
// GPUs has up to 2N submissions in flight, and the same files graded again
// (a warm grade, a resumed batch) reuse theirs.
constexpr std::size_t kKeptSeeds = 64;
}  // namespace

void Grader::prune_reference_evidence() {
  const std::lock_guard<std::recursive_mutex> lock(reference_mutex_);
  std::error_code ec;
  for (const char* mode : {"gpu", "cpu"}) {
    const fs::path dir = slot_dir(cfg_.work_dir, kReferenceSlot) / "evidence" / mode;
    std::vector<std::pair<fs::file_time_type, fs::path>> seeds;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
      if (it->is_directory(ec)) seeds.emplace_back(fs::last_write_time(it->path(), ec), it->path());
    if (seeds.size() <= kKeptSeeds) continue;
    std::sort(seeds.begin(), seeds.end());
    for (std::size_t k = 0; k + kKeptSeeds < seeds.size(); ++k) fs::remove_all(seeds[k].second, ec);
  }
}

}  // namespace cudalab
