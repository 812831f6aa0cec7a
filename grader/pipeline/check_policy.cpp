// grader/pipeline/check_policy.cpp: the policy a lab's objects must meet before any check runs: the includes
// its files list (confined -M) and the symbols its objects define and call (policy.h holds the rules).
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
#include "run/sandbox.h"
#include "run/submission.h"

namespace fs = std::filesystem;

namespace cudalab {

namespace {

// The files a make-style dependency list names ("x.o: a.cu b.h \\ ...").
std::vector<std::string> parse_deps(const std::string& text) {
  std::vector<std::string> out;
  const auto colon = text.find(": ");
  std::istringstream in(colon == std::string::npos ? text : text.substr(colon + 2));
  for (std::string tok; in >> tok;)
    if (tok != "\\") out.push_back(tok);
  return out;
}

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
  if (!argv.empty()) {
    // The headers of this very compiler, found where it lives (nvcc:
    // <root>/bin/nvcc and the toolkit's include/; a g++ in /opt/gcc/bin: its
    // include/ and lib/gcc/, as a GPU host without a package manager has it),
    // named as run and with its links resolved.
    std::vector<fs::path> compilers = {argv[0]};
    if (!fs::path(argv[0]).is_absolute()) compilers = programs_in_path(fs::path(argv[0]).filename().string());
    for (const auto& named : std::vector<fs::path>(compilers))
      if (const fs::path real = fs::weakly_canonical(named, ec); !ec) compilers.push_back(real);
    for (const auto& compiler : compilers) {
      const fs::path root = compiler.parent_path().parent_path();
      if (compiler.filename() == "nvcc") {
        add(root / "include");
        add(root / "targets");
      } else if (root != "/" && root != "/usr") {  // /usr's are above
        add(root / "include");
        add(root / "lib" / "gcc");
        add(root / "lib64" / "gcc");
      }
    }
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

std::string Grader::policy_problems(const LabSpec& lab, int slot, bool fresh_only, bool cpu_mode) {
  const fs::path build_ = build(slot), overlay_ = overlay(slot);
  const auto db = MesonProject(build_).compile_commands();
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
        if (const auto argv = compiler_argv(g.value("command", "")); object_of(g, f, false) && !argv.empty())
          cudart = find_cudart_static(argv[0]);
      // The runtimes' names, read by nm once per work folder (a warm grade
      // spends none of its time on them).
      const Owners owners = link_owners(build_, lab.id, cpu_mode, cudart, error, cfg_.work_dir / "names");
      rules.owners = &owners;
      if (cpu_mode)  // its kernels are those of the same file's GPU object (no stubs here)
        for (const auto& g : db)
          if (object_of(g, f, false)) rules.kernels = object_kernels(build_ / g.value("output", ""), error);
      for (const auto& v : check_object(object, rules, error)) problems.push_back(v.describe(f));
      // The instructions lab.toml's forbid excludes (a lab without forbid spends nothing here).
      if (!cpu_mode && !fresh_only)
        for (auto& p : instruction_problems(lab, slot, f, compiler_argv(e.value("command", "")), object))
          problems.push_back(std::move(p));
      if (!error.empty()) problems.push_back(error);
    }
  }
  std::string out;
  for (std::size_t i = 0; i < problems.size() && i < 6; ++i) out += (i ? "\n" : "") + problems[i];
  if (problems.size() > 6) out += fmt::format("\n... and {} more", problems.size() - 6);
  return out;
}

std::string Grader::include_problems(const LabSpec& lab, int slot) {
  const fs::path build_ = fs::absolute(build(slot)), overlay_ = overlay(slot);
  const auto db = MesonProject(build_).compile_commands();
  if (!db.is_array()) return "the grader could not read compile_commands.json to check the submission";
  std::vector<std::string> problems;
  for (const auto& f : lab.student_files) {
    const fs::path src = overlay_ / lab.id / f;
    // Every compile of the file, each with its own defines: the GPU build,
    // CPU mode's (CUDALAB_CPU_MODE) and the access report's, whose sources
    // are the file translated to C++ (the same includes, listed from the file
    // itself as C++: the translation is made by the build, later). An
    // include behind `#ifdef CUDALAB_CPU_MODE` is listed like any other.
    const std::string access_prefix = "labs/" + lab.id + "-tests-access.p/";
    std::vector<std::pair<const nlohmann::json*, bool>> entries;  // the entry, translated
    const std::string translation_name = "cpu-" + lab.id + "-" + f + ".cpp";
    for (const auto& e : db) {
      const std::string file = e.value("file", "");
      const bool access =
          e.value("output", "").rfind(access_prefix, 0) == 0 && fs::path(file).filename() == translation_name;
      if (student_object(e, overlay_, lab, f, /*cpu=*/false))
        entries.emplace_back(&e, false);
      else if (student_object(e, overlay_, lab, f, /*cpu=*/true) || access)
        entries.emplace_back(&e, true);
    }
    for (const auto& [entry, translated] : entries) {
      // Its includes, from the compiler itself with the build's own flags,
      // before anything is compiled; confined like the build.
      const std::vector<std::string> argv = compiler_argv(entry->value("command", ""));
      const std::string translation = entry->value("file", "");
      std::vector<std::string> deps_cmd;
      for (std::size_t i = 0; i < argv.size(); ++i) {
        if (argv[i] == "-o" || argv[i] == "-MF" || argv[i] == "-MQ" || argv[i] == "-MT") {
          ++i;
          continue;
        }
        // -fpch-preprocess (Meson's, with ccache) prints a pragma among the
        // dependencies where a precompiled header is built (simt_pch.h).
        if (argv[i] == "-c" || argv[i] == "-MD" || argv[i] == "-MMD" || argv[i] == "-fpch-preprocess")
          continue;
        if (translated && (argv[i] == translation || build_ / argv[i] == fs::path(translation))) {
          deps_cmd.insert(deps_cmd.end(), {"-x", "c++", src.string()});
          continue;
        }
        deps_cmd.push_back(argv[i]);
      }
      deps_cmd.push_back("-M");
      ProcessOptions opt;
      opt.cwd = build_.string();
      opt.timeout_s = std::min(kIncludeListLimit_s, cfg_.course.build_timeout_s);
      opt.output_cap = 4 << 20;
      opt.niceness = 10;  // like the build it checks
      opt.memory_limit_bytes = kBuildMemoryLimit_bytes;
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
      for (const auto& d :
           p.ok() ? parse_deps(p.output) : failed_includes(p.output))  // relative to the build
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
              "the compiler's and CUDA's headers): the lab was not compiled, and nothing of that file is "
              "shown",
              f, printable(d)));
      }
      if (!p.ok() && p.timed_out)
        problems.push_back(
            fmt::format("{}: listing its includes did not finish within {:.0f} s", f, opt.timeout_s));
      if (!problems.empty()) break;
    }
  }
  std::string out;
  for (std::size_t i = 0; i < problems.size() && i < 6; ++i) out += (i ? "\n" : "") + problems[i];
  if (problems.size() > 6) out += fmt::format("\n... and {} more", problems.size() - 6);
  return out;
}

}  // namespace cudalab
