// cudalab: the course's command-line program.
//
//   cudalab test [LAB...]   build the labs from labs/ and run their checks
//   cudalab doctor          what this machine has, and what is missing
//   cudalab selftest        the framework's own tests (meson test)
//   cudalab expect ...      run a test binary against expected verdicts
//
// Normally started through the ./cudalab script at the repository root,
// which installs what is missing and configures the build first.
#include <fmt/color.h>
#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "calibrate_command.h"
#include "checks.h"
#include "course.h"
#include "cudalab/manifest.h"
#include "expect.h"
#include "explain.h"
#include "export.h"
#include "grade.h"
#include "new_lab.h"
#include "process.h"
#include "release.h"
#include "report.h"
#include "report_html.h"
#include "sandbox.h"
#include "score.h"
#include "slurm.h"
#include "submission.h"

namespace fs = std::filesystem;
using namespace cudalab;

namespace {

// Exit codes (README): 0 all good, 1 checks failed or internal error,
// 2 usage or manifest error, 3 no GPU: built only, GPU checks not run.
constexpr int kOk = 0, kFailed = 1, kUsage = 2, kNoGpu = 3;

const fs::path kSourceRoot = CUDALAB_SOURCE_ROOT;
const fs::path kBuildRoot = CUDALAB_BUILD_ROOT;

std::vector<std::string> all_labs() {
  std::vector<std::string> labs;
  for (const auto& e : fs::directory_iterator(kSourceRoot / "labs"))
    if (e.is_directory() && fs::exists(e.path() / "lab.toml")) labs.push_back(e.path().filename().string());
  std::sort(labs.begin(), labs.end());
  return labs;
}

// Keeps the compiler's error lines and a little context.
std::string trim_build_log(const std::string& log, bool verbose) {
  if (verbose) return log;
  std::istringstream in(log);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::string out;
  int budget = 40;
  for (std::size_t i = 0; i < lines.size() && budget > 0; ++i) {
    if (lines[i].find("error") == std::string::npos && lines[i].find("Error") == std::string::npos) continue;
    for (std::size_t j = i; j < lines.size() && j < i + 4 && budget > 0; ++j, --budget)
      out += lines[j] + "\n";
    i += 3;
  }
  return out.empty() ? log.substr(log.size() > 4000 ? log.size() - 4000 : 0) : out;
}

bool target_exists(const std::string& target);

bool build_targets(const std::vector<std::string>& targets, bool verbose) {
  ProcessOptions opt;
  // ninja itself where it is on PATH and knows every target by its path: a
  // `meson compile` that has nothing to do costs 1.6 s on a 2-core machine
  // (it introspects the build), ninja 0.05 s; it rebuilds the same way.
  bool ninja = access("/usr/bin/ninja", X_OK) == 0 || access("/usr/local/bin/ninja", X_OK) == 0;
  std::vector<std::string> paths;
  for (const auto& t : targets) {
    if (target_exists("labs/" + t))
      paths.push_back("labs/" + t);
    else if (target_exists("harness/" + t))
      paths.push_back("harness/" + t);
    else
      ninja = false;
  }
  opt.argv = ninja ? std::vector<std::string>{"ninja", "-C", kBuildRoot.string()}
                   : std::vector<std::string>{"meson", "compile", "-C", kBuildRoot.string()};
  const auto& names = ninja ? paths : targets;
  opt.argv.insert(opt.argv.end(), names.begin(), names.end());
  opt.timeout_s = 1800;
  opt.output_cap = 1 << 20;
  fmt::print("building {} ...\n", fmt::join(targets, ", "));
  std::fflush(stdout);
  const ProcessResult p = run_process(opt);
  if (p.ok()) return true;
  fmt::print(stderr, "the build failed ({}):\n{}\n", p.describe(), trim_build_log(p.output, verbose));
  return false;
}

struct GpuProbe {
  bool usable = false;
  std::string line;  // one line: the GPU, or why there is none
  nlohmann::json info;
};

// nvcc on PATH, or where the CUDA toolkit installs it; "" if none.
std::string find_nvcc() {
  if (const char* path = std::getenv("PATH")) {
    std::istringstream in(path);
    for (std::string dir; std::getline(in, dir, ':');)
      if (!dir.empty() && access((fs::path(dir) / "nvcc").c_str(), X_OK) == 0)
        return (fs::path(dir) / "nvcc").string();
  }
  std::vector<fs::path> homes;
  if (const char* home = std::getenv("CUDA_HOME"); home && *home) homes.emplace_back(home);
  homes.emplace_back("/usr/local/cuda");
  for (const auto& h : homes)
    if (access((h / "bin" / "nvcc").c_str(), X_OK) == 0) return (h / "bin" / "nvcc").string();
  return {};
}

bool target_exists(const std::string& target);

// Builds the GPU probe (harness/cudalab-gpuinfo) where it is missing or
// stale: the ./cudalab script builds only the program. A build configured
// before nvcc was installed is configured again. "" when the probe is there,
// else why not.
std::string ensure_gpu_probe() {
  if (!target_exists("cudalab-gpuinfo")) {
    const std::string nvcc = find_nvcc();
    if (nvcc.empty())
      return "no CUDA toolkit: nvcc is not installed (on PATH or in /usr/local/cuda/bin), so the GPU probe "
             "cannot be built";
    // nvcc came after the build was configured: configure it again, with nvcc on PATH.
    const std::string dir = fs::path(nvcc).parent_path().string();
    const std::string path = std::getenv("PATH") ? std::string(std::getenv("PATH")) : "/usr/bin:/bin";
    setenv("PATH", (dir + ":" + path).c_str(), 1);
    ProcessOptions opt;
    opt.argv = {"meson", "setup", "--reconfigure", kBuildRoot.string(), kSourceRoot.string()};
    opt.timeout_s = 600;
    opt.output_cap = 1 << 20;
    const ProcessResult p = run_process(opt);
    if (!p.ok() || !target_exists("cudalab-gpuinfo"))
      return fmt::format(
          "nvcc is installed ({}) but {} was configured without it and configuring it again failed ({}): run "
          "`meson setup --reconfigure {}`",
          nvcc, kBuildRoot.string(), p.describe(), kBuildRoot.string());
  }
  ProcessOptions opt;
  opt.argv = {"meson", "compile", "-C", kBuildRoot.string(), "harness/cudalab-gpuinfo"};
  opt.timeout_s = 1800;
  opt.output_cap = 1 << 20;
  const ProcessResult p = run_process(opt);
  if (!p.ok())
    return fmt::format("the GPU probe (harness/cudalab-gpuinfo) did not build ({}):\n{}", p.describe(),
                       trim_build_log(p.output, false));
  return {};
}

// probe_gpu(true) builds the probe first where it can (ensure_gpu_probe).
GpuProbe probe_gpu(bool build = false) {
  GpuProbe g;
  if (build) {
    if (const std::string why = ensure_gpu_probe(); !why.empty()) {
      g.line = "not probed: " + why;
      return g;
    }
  }
  const fs::path exe = kBuildRoot / "harness" / "cudalab-gpuinfo";
  if (!fs::exists(exe)) {
    g.line = "not probed: the CUDA parts are not built (no nvcc?)";
    return g;
  }
  ProcessOptions opt;
  opt.argv = {exe.string()};
  opt.timeout_s = 60;
  const ProcessResult p = run_process(opt);
  g.info = nlohmann::json::parse(p.output, nullptr, false);
  if (g.info.is_discarded() || !g.info.is_object()) {
    g.line = "the GPU probe failed: " + p.describe();
    return g;
  }
  g.usable = g.info.value("usable", false);
  g.line =
      g.usable
          ? fmt::format(
                "{} (sm_{}, {} SMs, {:.0f} GB/s peak DRAM, {:.0f} MiB L2)", g.info.value("name", "?"),
                [&] {
                  auto cc = g.info.value("compute_capability", "?");
                  cc.erase(std::remove(cc.begin(), cc.end(), '.'), cc.end());
                  return cc;
                }(),
                g.info.value("sm_count", 0), g.info.value("peak_dram_gbs", 0.0), g.info.value("l2_mib", 0.0))
          : g.info.value("reason", std::string("no usable GPU"));
  return g;
}

struct TestArgs {
  std::vector<std::string> labs, only;
  std::string seed, sanitize;
  bool verbose = false, no_build = false, cpu = false, access_report = false;
};

bool target_exists(const std::string& target) {
  // Meson writes every target into build.ninja; a CPU-mode target exists
  // wherever simt built, a GPU one only where nvcc was found.
  std::ifstream in(kBuildRoot / "build.ninja");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (target.find('/') != std::string::npos) return text.find("build " + target + ": ") != std::string::npos;
  return text.find("build labs/" + target + ": ") != std::string::npos ||
         text.find("build harness/" + target + ": ") != std::string::npos;
}

// Nsight Compute's memory-access metrics per kernel, for --access-report on a GPU.
std::string ncu_access_report(const RunContext& ctx, const CheckSpec& check) {
  const std::vector<std::string> names = {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
                                          "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
                                          "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
                                          "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
                                          "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
                                          "smsp__inst_executed_op_shared_ld.sum",
                                          "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
                                          "smsp__inst_executed_op_shared_st.sum"};
  ProcessOptions opt;
  opt.argv = {"ncu",
              "--metrics",
              fmt::format("{}", fmt::join(names, ",")),
              "--csv",
              "--page",
              "raw",
              "--launch-count",
              "200",
              fs::absolute(ctx.binary).string(),
              "--lab-toml",
              fs::absolute(ctx.lab_toml).string(),
              check.name};
  opt.timeout_s = 600;
  opt.output_cap = 8 << 20;
  const ProcessResult p = run_process(opt);
  if (!p.started || p.exit_code == 127)
    return "access report: Nsight Compute (ncu) is not installed here; `--cpu --access-report` gives the "
           "same counts from CPU mode\n";
  if (p.output.find("ERR_NVGPUCTRPERM") != std::string::npos)
    return "access report: this machine does not permit reading the GPU's performance counters "
           "(ERR_NVGPUCTRPERM; an administrator can allow it); `--cpu --access-report` gives the same "
           "counts\n";
  // CSV: a header row, a units row, then one row per kernel launch.
  std::istringstream in(p.output);
  std::vector<std::vector<std::string>> rows;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] != '"') continue;
    rows.push_back(split_csv_line(line));
  }
  if (rows.size() < 3) return "access report: ncu measured no kernel (" + p.describe() + ")\n";
  const auto& head = rows[0];
  auto col = [&](const std::string& name) {
    for (std::size_t i = 0; i < head.size(); ++i)
      if (head[i] == name) return static_cast<int>(i);
    return -1;
  };
  const int kname = col("Kernel Name");
  struct Sum {
    double v[8] = {};
  };
  std::map<std::string, Sum> per_kernel;
  for (std::size_t r = 2; r < rows.size(); ++r) {
    if (kname < 0 || kname >= static_cast<int>(rows[r].size())) continue;
    std::string k = rows[r][kname];
    if (k.rfind("ref::", 0) == 0) continue;  // the references' kernels
    k = k.substr(0, k.find('('));
    auto& sum = per_kernel[k];
    for (std::size_t m = 0; m < names.size(); ++m) {
      const int c = col(names[m]);
      if (c >= 0 && c < static_cast<int>(rows[r].size())) {
        std::string v = rows[r][c];
        v.erase(std::remove(v.begin(), v.end(), ','), v.end());
        sum.v[m] += std::atof(v.c_str());
      }
    }
  }
  auto ratio = [](double a, double b) { return b > 0 ? fmt::format("{:.2f}", a / b) : std::string("-"); };
  std::string out = "access report (Nsight Compute, per kernel, over its launches in this check):\n";
  out += fmt::format("  {:<30} {:>18} {:>18} {:>20} {:>20}\n", "kernel", "global ld sect/req",
                     "global st sect/req", "shared ld confl/req", "shared st confl/req");
  for (const auto& [k, s] : per_kernel)
    out += fmt::format("  {:<30} {:>18} {:>18} {:>20} {:>20}\n", k.substr(0, 30), ratio(s.v[0], s.v[1]),
                       ratio(s.v[2], s.v[3]), ratio(s.v[4], s.v[5]), ratio(s.v[6], s.v[7]));
  return out;
}

int cmd_test(const TestArgs& a) {
  const std::vector<std::string> labs = a.labs.empty() ? all_labs() : a.labs;
  std::vector<LabSpec> specs;
  for (const auto& id : labs) {
    const fs::path toml = kSourceRoot / "labs" / id / "lab.toml";
    if (!fs::exists(toml)) {
      fmt::print(stderr, "cudalab: there is no lab '{}' (labs: {})\n", id, fmt::join(all_labs(), ", "));
      return kUsage;
    }
    try {
      specs.push_back(load_lab(toml));
    } catch (const ManifestError& e) {
      fmt::print(stderr, "cudalab: {}\n", e.what());
      return kUsage;
    }
  }
  const bool have_gpu_build = target_exists("cudalab-gpuinfo");
  const bool have_cpu_build = target_exists(labs.front() + "-tests-cpu");
  GpuProbe gpu;
  if (!a.cpu && have_gpu_build) {
    if (!a.no_build && !build_targets({"cudalab-gpuinfo"}, a.verbose)) return kFailed;
    gpu = probe_gpu();
  } else {
    gpu.line = a.cpu ? "not used (--cpu)" : "not probed: the CUDA parts are not built (no nvcc?)";
  }
  const bool cpu = a.cpu || !gpu.usable;
  if (cpu && !have_cpu_build) {
    fmt::print(stderr, "cudalab: no usable GPU ({}) and no CPU-mode build: nothing can run the checks\n",
               gpu.line);
    return kNoGpu;
  }
  if (cpu && !a.sanitize.empty()) {
    fmt::print(stderr, "cudalab: --sanitize needs a GPU (compute-sanitizer runs real kernels)\n");
    return kUsage;
  }
  if (!a.no_build) {
    std::vector<std::string> targets;
    for (const auto& id : labs) {
      // The GPU build only where a GPU can run it: without one it is nvcc's
      // 5 s or more after every edit for nothing (the grader still compiles
      // the file with nvcc, so nvcc-only errors show there).
      if (have_gpu_build && !cpu) targets.push_back(id + "-tests");
      if (cpu) targets.push_back(id + (a.access_report ? "-tests-access" : "-tests-cpu"));
    }
    if (!build_targets(targets, a.verbose)) return kFailed;
  }
  const Style style = Style::for_stdout(a.verbose);
  fmt::print("GPU: {}\n", gpu.line);
  if (cpu)
    fmt::print(
        "CPU mode: the kernels run on simulated GPU threads on the CPU. Correctness checks only; speed "
        "checks are not run; timing, caches, warp lockstep and the memory model are not modelled "
        "(handouts/cpu_mode.md).\n");

  bool any_failed = false;
  RunContext ctx;
  ctx.seed = a.seed;
  ctx.work_dir = kBuildRoot / "records";
  ctx.clean_env = false;  // a student's own machine: keep their environment
  ctx.sanitizer = a.sanitize;
  if (!a.sanitize.empty())
    fmt::print(
        "Running under compute-sanitizer --tool {}: speed checks are not run, large shapes are skipped.\n",
        a.sanitize);
  for (const auto& lab : specs) {
    const std::string suffix = !cpu ? "-tests" : a.access_report ? "-tests-access" : "-tests-cpu";
    ctx.binary = kBuildRoot / "labs" / (lab.id + suffix);
    ctx.lab_toml = lab.file;
    std::string context = a.seed.empty() ? "" : "seed " + a.seed;
    if (cpu) context = "CPU mode" + (context.empty() ? "" : ", " + context);
    print_lab_header(style, lab, context);
    std::vector<CheckResult> results;
    std::vector<std::string> reports;
    std::vector<const CheckSpec*> todo;
    for (const auto& check : lab.checks)
      if (a.only.empty() || std::find(a.only.begin(), a.only.end(), check.id) != a.only.end())
        todo.push_back(&check);
    const auto access_file = [&](const CheckSpec& check) {
      return ctx.work_dir / fmt::format("{}-{}-access.txt", lab.id, check.id);
    };
    // CPU mode runs the lab's checks side by side, one process per check and
    // at most one per core: they share nothing (each has its own record and
    // scratch folder) and time nothing. On a GPU they run one at a time, as
    // the speed checks' timings need.
    std::vector<CheckResult> ran(todo.size());
    {
      const std::size_t jobs = cpu ? std::max(1u, std::thread::hardware_concurrency()) : 1;
      std::size_t next = 0;
      std::vector<std::future<void>> running;
      fs::create_directories(ctx.work_dir);
      while (next < todo.size() || !running.empty()) {
        while (next < todo.size() && running.size() < jobs) {
          const std::size_t i = next++;
          RunContext c = ctx;
          if (cpu && a.access_report) c.access_out = access_file(*todo[i]);
          running.push_back(std::async(std::launch::async,
                                       [&ran, &lab, &todo, i, c] { ran[i] = run_check(c, lab, *todo[i]); }));
        }
        // Wait for the first to finish, then start the next.
        for (bool any = false; !any && !running.empty();)
          for (auto it = running.begin(); it != running.end(); ++it)
            if (it->wait_for(std::chrono::milliseconds(20)) == std::future_status::ready) {
              it->get();
              running.erase(it);
              any = true;
              break;
            }
      }
    }
    for (std::size_t i = 0; i < todo.size(); ++i) {
      const CheckSpec& check = *todo[i];
      const fs::path report = access_file(check);
      // Too slow on the GPU: CPU mode's access count of the lab's `explain`
      // check says why (explain.h), as the grader does.
      const CheckSpec* by = check.explain.empty() ? nullptr : lab.find_by_id(check.explain);
      const std::string access_target = lab.id + "-tests-access";
      if (!cpu && by && a.sanitize.empty() && timed_and_failed(ran[i]) && target_exists(access_target) &&
          (a.no_build || build_targets({access_target}, a.verbose))) {
        explain_by_access(ctx, lab, *by, kBuildRoot / "labs" / access_target,
                          ctx.work_dir / fmt::format("{}-{}-explain.json", lab.id, by->id), "", ran[i]);
      }
      if (cpu) lead_hang_in_cpu_mode(ran[i]);  // as the grader does (explain.h)
      // Failed on the GPU where its evidence leaves the cause open: racecheck
      // or CPU mode takes a second look, as the grader does (explain.h).
      if (!cpu && a.sanitize.empty()) {
        const SecondOpinion kind = second_opinion_for(ran[i], !compute_sanitizer_program().empty());
        const std::string cpu_target = lab.id + "-tests-cpu";
        const auto cpu_binary = [&]() -> fs::path {
          return target_exists(cpu_target) && (a.no_build || build_targets({cpu_target}, a.verbose))
                     ? kBuildRoot / "labs" / cpu_target
                     : fs::path();
        };
        if (kind != SecondOpinion::none) second_opinion(ctx, lab, check, kind, cpu_binary, ran[i]);
      }
      results.push_back(std::move(ran[i]));
      if (a.access_report && check.kind == "correctness") {
        if (cpu) {
          std::ifstream in(report);
          const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
          reports.push_back(fmt::format("access report for '{}' (CPU mode, per kernel source line):\n{}",
                                        check.id, text.empty() ? "  (no accesses recorded)\n" : text));
        } else {
          reports.push_back(ncu_access_report(ctx, check));
        }
      }
    }
    double points = 0, max_points = 0;
    for (const auto& r : results) {
      const CheckSpec& spec = *lab.find_by_id(r.id);
      const CheckScore s = preview_check_score(spec, r, results);
      print_check(style, spec, r, s);
      points += s.points;
      max_points += s.max_points;
      any_failed |= (r.verdict != "pass" && r.verdict != "skipped" && r.verdict != "not_run");
    }
    for (const auto& rep : reports) fmt::print("\n{}", rep);
    print_lab_total(style, lab, points, max_points,
                    cpu ? " (CPU mode: correctness only; speed needs a GPU)"
                        : " (on this machine; your grade comes from the course's grader)");
  }
  return any_failed ? kFailed : kOk;
}

std::string paint_total(const Style& style, const std::string& text) {
  return style.colour ? fmt::format(fmt::emphasis::bold, "{}", text) : text;
}

// --- grade -----------------------------------------------------------------

struct GradeArgs {
  std::string submission;  // empty: the working copy's labs/
  std::string batch;       // a folder of submissions
  std::string out;         // where results go
  std::string course;      // course.toml
  std::string seed;
  std::string work;                   // the grading build
  std::vector<std::string> sanitize;  // memcheck, racecheck, ...
  std::string gpus;                   // --gpus: all, N or a list; empty: the default GPU
  std::string shard;                  // --shard I/N: only that share of the batch (a Slurm task)
  bool collect = false;               // --collect: only the gradebook from graded results
  bool slurm = false;                 // --slurm: submit the batch as a Slurm job array
  std::size_t slurm_chunk = 10;       // submissions per array task
  std::vector<std::string> sbatch;    // the sbatch options after --slurm
  bool force = false, verbose = false, prepare = false;
  bool no_cpu = false;  // without a GPU, grade nothing unless course.toml sets cpu_mode
};

std::string submission_id(const fs::path& p) {
  std::string n = p.filename().string();
  for (const char* ext : {".tar.gz", ".tgz", ".zip", ".tar"}) {
    const std::string e(ext);
    if (n.size() > e.size() && n.compare(n.size() - e.size(), e.size(), e) == 0) {
      n.resize(n.size() - e.size());
      break;
    }
  }
  std::string id;
  for (unsigned char c : n)
    id += (std::isalnum(c) || c == '-' || c == '_' || c == '.') ? static_cast<char>(c) : '_';
  return id.empty() || id[0] == '.' ? "_" + id : id;
}

void write_text(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::trunc);
  out << text;
}

void write_exports(const SubmissionGrade& g, const std::vector<LabSpec>& labs, const fs::path& dir) {
  write_text(dir / "results.json", gradescope_json(g).dump(2) + "\n");
  write_text(dir / "prairielearn.json", prairielearn_json(g).dump(2) + "\n");
  write_text(dir / "junit.xml", junit_xml(g));
  write_text(dir / "grade.csv", csv_header(labs) + csv_row(g));
  write_text(dir / "report.txt", submission_output(g));
  write_text(dir / "report.html", report_html(g));
}

void print_grade(const SubmissionGrade& g, const Style& style, bool show_ignored) {
  fmt::print("GPU: {}\n", g.gpu           ? g.gpu_line
                          : g.provisional ? "none usable (" + g.gpu_line +
                                                "): CPU mode, correctness checks only; a provisional grade"
                          : g.cpu_mode ? "none usable (" + g.gpu_line + "): CPU mode, correctness checks only"
                                       : "none usable (" + g.gpu_line + "): built only, checks not run");
  if (!g.error.empty()) fmt::print("{}\n", g.error);
  for (const auto& lab : g.labs) {
    print_lab_header(style, *lab.spec, lab.weight != 1 ? fmt::format("weight {:g}", lab.weight) : "");
    if (lab.status != "graded" && !lab.message.empty()) {
      fmt::print("  {}\n", lab.status == "build_failed" ? "BUILD FAILED"
                           : lab.status == "missing"    ? "MISSING"
                                                        : "NOT RUN");
      std::istringstream in(lab.message);
      for (std::string line; std::getline(in, line);) fmt::print("    {}\n", line);
    } else {
      for (std::size_t i = 0; i < lab.results.size(); ++i)
        print_check(style, lab.spec->checks[i], lab.results[i].result(), lab.scores[i]);
    }
    print_lab_total(style, *lab.spec, lab.points, lab.max_points, "");
  }
  if (show_ignored && !g.ignored.empty()) {
    fmt::print("\nignored ({}):\n", g.ignored.size());
    for (std::size_t i = 0; i < g.ignored.size() && i < 20; ++i) fmt::print("  {}\n", g.ignored[i]);
    if (g.ignored.size() > 20)
      fmt::print("  ... and {} more (report.txt lists all)\n", g.ignored.size() - 20);
  }
  fmt::print("\n{}\n", paint_total(style, fmt::format("total: {:.2f} / {:g} points ({:.0f} s)", g.score,
                                                      g.max_score, g.seconds)));
  if (g.provisional)
    fmt::print(
        "provisional: graded without a GPU, correctness in CPU mode; the speed checks' points need a GPU\n");
}

struct Distribution {
  std::vector<double> values;
  double max = 0;
  std::string line() const {
    if (values.empty()) return "no submissions";
    std::vector<double> v = values;
    std::sort(v.begin(), v.end());
    const std::size_t full = std::count_if(v.begin(), v.end(), [&](double x) { return x >= max - 1e-9; });
    const std::size_t zero = std::count_if(v.begin(), v.end(), [](double x) { return x <= 1e-9; });
    double mean = 0;
    for (double x : v) mean += x;
    mean /= static_cast<double>(v.size());
    return fmt::format(
        "min {:.1f}  median {:.1f}  mean {:.1f}  max {:.1f} of {:g}; full {}, partial {}, zero {}", v.front(),
        v[v.size() / 2], mean, v.back(), max, full, v.size() - full - zero, zero);
  }
};

// Every graded check runs through cudalab-sandbox: without it nothing can be
// judged, so say so once, before minutes of building, rather than per check.
bool sandbox_missing() {
  if (!sandbox_launcher().empty()) return false;
  fmt::print(stderr, "cudalab: {}. Nothing was graded.\n", sandbox_missing_message());
  return true;
}

// --slurm: one array task per chunk of the batch, each `cudalab grade
// --batch ... --shard I/N` in its own grading folder, and a collecting job
// after them (slurm.h). Nothing is graded here.
int submit_to_slurm(const GradeArgs& a, std::size_t count, const fs::path& out) {
  if (count == 0) {
    fmt::print(stderr, "cudalab: {} holds no submission (folders or archives): nothing to submit\n", a.batch);
    return kUsage;
  }
  const auto sbatch = programs_in_path("sbatch");
  if (sbatch.empty()) {
    fmt::print(stderr,
               "cudalab: --slurm submits the batch with Slurm's sbatch, which is not on PATH here; run it on "
               "the cluster's login node (docs/slurm.md)\n");
    return kUsage;
  }
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  const fs::path work =
      fs::absolute(a.work.empty() ? fs::path(kBuildRoot.string() + "-grade") : fs::path(a.work));
  const std::size_t tasks = slurm_tasks(count, a.slurm_chunk);
  std::vector<std::string> grade = {
      self.string(), "grade", "--batch", fs::absolute(a.batch).string(), "--out", fs::absolute(out).string()};
  if (!a.course.empty()) grade.insert(grade.end(), {"--course", fs::absolute(a.course).string()});
  if (!a.seed.empty()) grade.insert(grade.end(), {"--seed", a.seed});
  if (a.force) grade.push_back("--force");
  if (a.no_cpu) grade.push_back("--no-cpu");
  for (const auto& tool : a.sanitize) grade.insert(grade.end(), {"--sanitize", tool});
  const fs::path dir = out / "slurm";
  fs::create_directories(dir, ec);
  const fs::path script = dir / "task.sh";
  write_text(script, slurm_task_script(grade, work.string(), tasks));
  fs::permissions(script, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                              fs::perms::others_read | fs::perms::others_exec);
  const auto submit = [&](std::vector<std::string> argv, std::string& id) {
    ProcessOptions opt;
    opt.argv = std::move(argv);
    opt.timeout_s = 120;
    const ProcessResult p = run_process(opt);
    id = p.ok() ? sbatch_job_id(p.output) : "";
    if (id.empty()) fmt::print(stderr, "cudalab: sbatch failed ({}):\n{}\n", p.describe(), p.output);
    return !id.empty();
  };
  std::vector<std::string> argv = {sbatch.front().string(), "--parsable",
                                   fmt::format("--array=0-{}", tasks - 1), "--job-name=cudalab-grade",
                                   "--output=" + (fs::absolute(dir) / "task-%A_%a.log").string()};
  argv.insert(argv.end(), a.sbatch.begin(), a.sbatch.end());
  argv.push_back(script.string());
  std::string array_id, collect_id;
  if (!submit(argv, array_id)) return kFailed;
  // The collecting job needs no GPU: the options that ask for one stay with the tasks.
  std::vector<std::string> collect = {sbatch.front().string(), "--parsable",
                                      "--dependency=afterany:" + array_id, "--job-name=cudalab-collect",
                                      "--output=" + (fs::absolute(dir) / "collect-%j.log").string()};
  for (const auto& o : a.sbatch)
    if (o.rfind("--gres", 0) != 0 && o.rfind("--gpus", 0) != 0 && o.rfind("-G", 0) != 0) collect.push_back(o);
  std::string wrap;
  for (const auto& w :
       std::vector<std::string>{grade[0], "grade", "--batch", grade[3], "--out", grade[5], "--collect"})
    wrap += shell_quote(w) + " ";
  if (!a.course.empty()) wrap += "--course " + shell_quote(fs::absolute(a.course).string());
  collect.insert(collect.end(), {"--wrap", wrap});
  if (!submit(collect, collect_id)) {
    fmt::print(stderr,
               "cudalab: the grading array {} was submitted; collect by hand when it is done:\n  {} grade "
               "--batch {} --out {} --collect\n",
               array_id, self.string(), a.batch, out.string());
    return kFailed;
  }
  fmt::print(
      "submitted {} submissions as Slurm job array {} ({} task{}, {} submission{} each at most), and job {} "
      "to "
      "collect the gradebook after it\n"
      "  watch:    squeue -j {},{}\n"
      "  logs:     {}/task-{}_<task>.log\n"
      "  gradebook: {} (when job {} is done; or by hand: cudalab grade --batch {} --out {} --collect)\n"
      "A task that fails can be submitted again: graded submissions are skipped (--force grades them "
      "again).\n",
      count, array_id, tasks, tasks == 1 ? "" : "s", a.slurm_chunk, a.slurm_chunk == 1 ? "" : "s", collect_id,
      array_id, collect_id, dir.string(), array_id, (out / "grades.csv").string(), collect_id, a.batch,
      out.string());
  return kOk;
}

// The GPUs that `--gpus spec` names on this machine (parse_gpus); empty with
// the reason in error.
std::vector<std::string> gpus_of(const std::string& spec, const GpuProbe& gpu, std::string& error) {
  return parse_gpus(spec, gpu.usable ? gpu.info.value("device_count", 1) : 0,
                    std::getenv("CUDA_VISIBLE_DEVICES"), error);
}

int cmd_grade(const GradeArgs& a) {
  const std::vector<std::string> known = all_labs();
  CourseSpec course;
  std::vector<LabSpec> labs;
  try {
    course = load_course(a.course.empty() ? kSourceRoot / "course.toml" : fs::path(a.course), known);
    for (const auto& id : course.labs) labs.push_back(load_lab(kSourceRoot / "labs" / id / "lab.toml"));
  } catch (const ManifestError& e) {
    fmt::print(stderr, "cudalab: {}\nNothing was graded.\n", e.what());
    return kUsage;
  }
  if (sandbox_missing()) return kUsage;
  GraderConfig cfg;
  cfg.source_root = kSourceRoot;
  cfg.work_dir = fs::absolute(a.work.empty() ? fs::path(kBuildRoot.string() + "-grade") : fs::path(a.work));
  cfg.course = course;
  cfg.labs = labs;
  cfg.seed = a.seed.empty() ? course.seed : a.seed;
  cfg.verbose = a.verbose;
  cfg.sanitizers = a.sanitize;
  // Without a usable GPU, the correctness checks are graded in CPU mode: a
  // provisional grade (exit code 3). --no-cpu leaves it to the course file
  // (cpu_mode = true), as the autograder does: nothing is graded without a GPU
  // unless the course allows it.
  if (!a.prepare && !a.no_cpu && !course.cpu_mode) {
    const GpuProbe gpu = probe_gpu(/*build=*/true);
    if (!gpu.usable) {
      cfg.cpu_fallback = true;
      fmt::print(
          "No usable GPU ({}): correctness checks graded in CPU mode; speed checks not run: a provisional "
          "grade (exit code 3; --no-cpu grades nothing without a GPU)\n",
          gpu.line);
    }
  }
  Grader grader(cfg);
  const Style style = Style::for_stdout(a.verbose);

  if (a.prepare) {
    std::string error;
    // With --gpus: the build slots a batch on those GPUs stages in, two per
    // GPU (otherwise a batch's first submissions on each pay for theirs).
    int slots = 1;
    const GpuProbe gpu = probe_gpu(/*build=*/true);
    if (!a.gpus.empty()) {
      const std::vector<std::string> gpus = gpus_of(a.gpus, gpu, error);
      if (gpus.empty()) {
        fmt::print(stderr, "cudalab: {}\n", error);
        return kUsage;
      }
      slots = static_cast<int>(2 * gpus.size());
    }
    // The second looks' builds where a GPU is usable: only there do failed
    // checks get a second look.
    const bool looks = gpu.usable && !course.cpu_mode;
    fmt::print("preparing the grading build in {}{}{} ...\n", cfg.work_dir.string(),
               slots > 1 ? fmt::format(" ({} build slots: a batch on {} GPU{})", slots, slots / 2,
                                       slots == 2 ? "" : "s")
                         : "",
               looks ? ", with the CPU-mode builds of failed checks' second looks" : "");
    if (!grader.prepare(error, slots, looks)) {
      fmt::print(stderr, "cudalab: {}\n", error);
      return kFailed;
    }
    fmt::print("ready\n");
    return kOk;
  }

  if (a.batch.empty()) {
    const bool working_copy = a.submission.empty();
    const fs::path sub = working_copy ? kSourceRoot / "labs" : fs::path(a.submission);
    const std::string id = working_copy ? "working-copy" : submission_id(sub);
    const fs::path out = a.out.empty() ? kSourceRoot / "results" / id : fs::path(a.out);
    fmt::print("grading {} ...\n", working_copy ? "the working copy (labs/)" : sub.string());
    std::fflush(stdout);
    SubmissionGrade g = grader.grade(sub, id);
    if (working_copy) g.ignored.clear();  // the course's own files, not the student's
    print_grade(g, style, !working_copy);
    write_exports(g, labs, out);
    fmt::print(
        "results: {} (results.json for Gradescope, prairielearn.json, junit.xml, grade.csv, report.txt, "
        "report.html)\n",
        out.string());
    // A grade the course chose to give in CPU mode is whole; one made in CPU
    // mode for want of a GPU is provisional.
    return g.gpu || (g.cpu_mode && !g.provisional) ? kOk : kNoGpu;
  }

  // Batch: every folder or archive in the batch folder, one after another.
  std::vector<fs::path> entries;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(a.batch, ec))
    if (e.is_directory() || (e.is_regular_file() && is_archive(e.path()))) entries.push_back(e.path());
  if (ec) {
    fmt::print(stderr, "cudalab: cannot read {}: {}\n", a.batch, ec.message());
    return kUsage;
  }
  std::sort(entries.begin(), entries.end());
  const fs::path out = a.out.empty() ? kSourceRoot / "results" / "batch" : fs::path(a.out);
  if (a.slurm) return submit_to_slurm(a, entries.size(), out);
  Shard shard;
  if (!a.shard.empty()) {
    std::string error;
    if (!parse_shard(a.shard, shard, error)) {
      fmt::print(stderr, "cudalab: {}\n", error);
      return kUsage;
    }
  }
  const auto [first, last] = shard_range(entries.size(), shard);
  std::vector<std::string> rows(entries.size());
  auto row_of = [](const fs::path& file) {
    std::ifstream in(file);
    std::string header, row;
    std::getline(in, header);
    std::getline(in, row);
    return row;
  };
  // Resume: what was graded before keeps its row.
  std::vector<std::size_t> todo;
  std::vector<std::string> not_graded;  // --collect: submissions without results yet
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const fs::path dir = out / submission_id(entries[i]);
    const bool graded = fs::exists(dir / "results.json") && fs::exists(dir / "grade.csv");
    if (a.collect) {
      if (graded) {
        rows[i] = row_of(dir / "grade.csv");
      } else {
        not_graded.push_back(submission_id(entries[i]));
        rows[i] = fmt::format("{},0.00,0,{}not graded", csv_field(submission_id(entries[i])),
                              std::string(labs.size(), ','));
      }
      continue;
    }
    if (i < first || i >= last) continue;  // another shard's
    if (!a.force && graded) {
      rows[i] = row_of(dir / "grade.csv");
      fmt::print("[{}/{}] {}: graded before, skipped (--force grades it again)\n", i + 1, entries.size(),
                 submission_id(entries[i]));
    } else {
      todo.push_back(i);
    }
  }
  // Several GPUs (--gpus): a submission per GPU at a time, each staging its
  // next in its own slot while its GPU runs the current one (grade_batch).
  std::vector<std::string> gpus;
  if (!a.gpus.empty() && !todo.empty()) {
    const GpuProbe gpu = probe_gpu(/*build=*/true);
    std::string error;
    gpus = gpus_of(a.gpus, gpu, error);
    if (gpus.empty()) {
      fmt::print(stderr, "cudalab: {}\n", error);
      return kUsage;
    }
    fmt::print("grading on {} GPU{} ({})\n", gpus.size(), gpus.size() == 1 ? "" : "s", fmt::join(gpus, ", "));
  }
  bool any_gpu = false;
  const auto t0 = std::chrono::steady_clock::now();
  std::size_t finished = 0;
  // A shard (a Slurm task) builds in slots of its own: tasks on one shared
  // grading folder never build over each other (the reference's build and
  // evidence, made by --prepare and the first task, are only read after).
  const int slot_base =
      a.shard.empty() ? 0 : static_cast<int>(2 * shard.index * std::max<std::size_t>(1, gpus.size()));
  grade_batch(
      grader, todo.size(), gpus, slot_base,
      [&](std::size_t k, int slot) {
        const std::size_t i = todo[k];
        return grader.stage(entries[i], submission_id(entries[i]), slot);
      },
      [&](std::size_t k, SubmissionGrade* g, const std::string& error) {
        const std::size_t i = todo[k];
        const std::string id = submission_id(entries[i]);
        ++finished;
        const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const std::string eta =
            finished < todo.size()
                ? fmt::format(", ETA {:.0f} s", elapsed / finished * (todo.size() - finished))
                : "";
        if (!g) {
          fmt::print(stderr, "[{}/{}] {}: internal error: {}\n", i + 1, entries.size(), id, error);
          rows[i] = fmt::format("{},0.00,0,{}error", csv_field(id), std::string(labs.size(), ','));
          return;  // a failing submission never stops the batch
        }
        any_gpu |= g->gpu || (g->cpu_mode && !g->provisional);
        write_exports(*g, labs, out / id);
        rows[i] = csv_row(*g);
        rows[i].pop_back();
        fmt::print("[{}/{}] {}: {:.2f} / {:g} ({:.0f} s{})\n", i + 1, entries.size(), id, g->score,
                   g->max_score, g->seconds, eta);
        std::fflush(stdout);
      });
  if (!a.shard.empty()) {
    // A share of the batch: the gradebook is the collecting step's.
    fmt::print(
        "\nshard {}/{}: submissions {} to {} of {}; the gradebook: cudalab grade --batch {} --out {} "
        "--collect\n",
        shard.index, shard.count, first + 1, last, entries.size(), a.batch, out.string());
    return !todo.empty() && !any_gpu ? kNoGpu : kOk;
  }
  std::string csv = csv_header(labs);
  std::map<std::string, Distribution> per_lab;
  Distribution total;
  for (const auto& row : rows) {
    csv += row + "\n";
    // Aggregate from the CSV rows, so that resumed submissions count too.
    const std::vector<std::string> cells = split_csv_line(row);
    if (cells.size() >= 3 + labs.size()) {
      total.values.push_back(std::atof(cells[1].c_str()));
      total.max = std::atof(cells[2].c_str());
      for (std::size_t l = 0; l < labs.size(); ++l) {
        auto& d = per_lab[labs[l].id];
        d.values.push_back(std::atof(cells[3 + l].c_str()));
        d.max = course.weight(labs[l].id) * labs[l].total_points();
      }
    }
  }
  write_text(out / "grades.csv", csv);
  {
    std::vector<std::vector<std::string>> cells;
    for (const auto& row : rows) cells.push_back(split_csv_line(row));
    std::vector<double> lab_max;
    for (const auto& l : labs) lab_max.push_back(course.weight(l.id) * l.total_points());
    write_text(out / "index.html", batch_html(labs, lab_max, cells));
  }
  fmt::print("\n{} submissions; gradebook: {}; pages: {}\n", entries.size(), (out / "grades.csv").string(),
             (out / "index.html").string());
  for (const auto& l : labs) fmt::print("  {:<16} {}\n", l.id, per_lab[l.id].line());
  fmt::print("  {:<16} {}\n", "total", total.line());
  if (!not_graded.empty()) {
    fmt::print(stderr, "cudalab: {} of {} submissions have no results yet (0 points in the gradebook): {}\n",
               not_graded.size(), entries.size(), fmt::join(not_graded, ", "));
    return kFailed;
  }
  return !todo.empty() && !any_gpu ? kNoGpu : kOk;
}

int cmd_expect(const fs::path& binary, const fs::path& lab_toml, const fs::path& expect_path, bool cpu,
               const fs::path& cpu_binary, const fs::path& access_binary) {
  if (sandbox_missing()) return kUsage;
  LabSpec lab;
  ExpectFile ex;
  try {
    lab = load_lab(lab_toml);
    ex = load_expect(expect_path);
  } catch (const ManifestError& e) {
    fmt::print(stderr, "cudalab: {}\n", e.what());
    return kUsage;
  }
  if (cpu) {
    std::vector<std::string> speed;
    for (const auto& c : lab.checks)
      if (c.kind == "speed") speed.push_back(c.id);
    ex = ex.for_cpu_mode(speed);
  }
  RunContext ctx;
  ctx.binary = binary;
  ctx.lab_toml = lab_toml;
  ctx.work_dir = fs::temp_directory_path() / "cudalab-expect";
  fmt::print("{}: {}{}\n", expect_path.parent_path().filename().string(), ex.description,
             cpu ? " [CPU mode]" : "");
  fmt::print("{:<20} {:<9} {:<9} {}\n", "check", "expected", "got", "message");
  for (const auto& e : ex.expectations) {
    if (!lab.find_by_id(e.check_id)) {
      fmt::print(stderr, "cudalab: {}: no check '{}' in {}\n", expect_path.string(), e.check_id,
                 lab_toml.string());
      return kUsage;
    }
  }
  int mismatches = 0, skipped = 0;
  for (const CheckSpec& check : lab.checks) {  // in the lab's order
    const Expectation* expected = ex.find(check.id);
    if (!expected) continue;
    const Expectation& e = *expected;
    CheckResult r = run_check(ctx, lab, check);
    // On the GPU, the second look the grader takes at a failed check
    // (explain.h), with the variant's CPU-mode build where one is given.
    // A speed check too slow on the GPU: CPU mode's access count of its
    // `explain` check leads (explain.h), as in the grader and `cudalab test`.
    if (const CheckSpec* by = check.explain.empty() ? nullptr : lab.find_by_id(check.explain);
        !cpu && by && !access_binary.empty() && timed_and_failed(r))
      explain_by_access(ctx, lab, *by, access_binary,
                        ctx.work_dir / fmt::format("{}-{}-explain.json", lab.id, by->id), "", r);
    if (cpu) lead_hang_in_cpu_mode(r);
    if (!cpu) {
      const SecondOpinion kind = second_opinion_for(r, !compute_sanitizer_program().empty());
      if (kind != SecondOpinion::none)
        second_opinion(
            ctx, lab, check, kind, [&] { return cpu_binary; }, r);
    }
    if (r.verdict == "skipped") {
      ++skipped;
      fmt::print("{:<20} {:<9} {:<9} {}\n", e.check_id, e.verdict, "skipped",
                 r.notes.empty() ? "" : r.notes[0]);
      continue;
    }
    std::string text;
    for (const auto& f : r.failures) text += f + "\n";
    for (const auto& n : r.notes) text += n + "\n";
    // One cause leads, and where the variant names it, the right one.
    const std::string cause = r.verdict == "fail" ? leading_cause_problem(r.failures, e.leads) : "";
    const bool ok =
        r.verdict == e.verdict && (e.says.empty() || contains_phrase(text, e.says)) && cause.empty();
    mismatches += !ok;
    // The row shows what a student reads first: the lead of a failed check.
    std::string first = r.failures.empty() ? (r.notes.empty() ? "" : r.notes[0]) : leading_line(r.failures);
    if (auto nl = first.find('\n'); nl != std::string::npos) first = first.substr(0, nl);
    fmt::print("{:<20} {:<9} {:<9} {}{}\n", e.check_id, e.verdict, r.verdict,
               ok ? "" : "MISMATCH: ", first.substr(0, 200));
    if (!ok) {
      if (!e.says.empty() && !contains_phrase(text, e.says))
        fmt::print("    expected the message to say \"{}\"\n", e.says);
      if (!cause.empty()) fmt::print("    {}\n", cause);
      fmt::print("    full message:\n{}\n", text);
      if (!r.output.empty()) fmt::print("    output:\n{}\n", r.output);
    }
  }
  if (skipped == static_cast<int>(ex.expectations.size())) return 77;
  return mismatches ? kFailed : kOk;
}

std::string first_line_of(const std::vector<std::string>& argv) {
  ProcessOptions opt;
  opt.argv = argv;
  opt.timeout_s = 30;
  const ProcessResult p = run_process(opt);
  if (!p.ok()) return {};
  std::string out = p.output;
  std::smatch m;
  if (std::regex_search(out, m, std::regex(R"(release [0-9.]+|[0-9]+\.[0-9]+\.[0-9]+)"))) return m.str();
  return out.substr(0, out.find('\n'));
}

// A program on PATH or next to nvcc (the CUDA toolkit's bin/); "" if none.
std::string find_tool(const std::string& name) {
  if (const char* path = std::getenv("PATH")) {
    std::istringstream in(path);
    for (std::string dir; std::getline(in, dir, ':');)
      if (!dir.empty() && access((fs::path(dir) / name).c_str(), X_OK) == 0)
        return (fs::path(dir) / name).string();
  }
  if (const std::string nvcc = find_nvcc(); !nvcc.empty()) {
    const fs::path p = fs::path(nvcc).parent_path() / name;
    if (access(p.c_str(), X_OK) == 0) return p.string();
  }
  return {};
}

int cmd_doctor() {
  int missing = 0;
  const std::string sudo = geteuid() == 0 ? "" : "sudo ";
  // A missing required piece counts (exit code 1); an optional one does not.
  auto row = [&](const std::string& what, const std::string& value, const std::string& fix,
                 bool optional = false) {
    if (!value.empty()) {
      fmt::print("  {:<18} {}\n", what, value);
    } else if (optional) {
      fmt::print("  {:<18} not installed (optional)  {}\n", what, fix);
    } else {
      ++missing;
      fmt::print("  {:<18} MISSING  {}\n", what, fix);
    }
  };
  auto version_of = [](const std::string& tool) {
    const std::string path = find_tool(tool);
    return path.empty() ? std::string() : first_line_of({path, "--version"});
  };
  fmt::print("cudalab {} (source {}, build {})\n", CUDALAB_VERSION, kSourceRoot.string(),
             kBuildRoot.string());
  std::fflush(stdout);
  const GpuProbe gpu = probe_gpu(/*build=*/true);  // builds the probe where nvcc is
  fmt::print("GPU\n");
  if (gpu.usable) {
    const auto& i = gpu.info;
    std::string cc = i.value("compute_capability", "");
    std::string sm = cc;
    sm.erase(std::remove(sm.begin(), sm.end(), '.'), sm.end());
    row("device", i.value("name", ""), "");
    row("compute capability", cc.empty() ? "" : fmt::format("{} (sm_{})", cc, sm), "");
    row("SMs", std::to_string(i.value("sm_count", 0)), "");
    row("driver / runtime", i.value("driver", "") + " / " + i.value("runtime", ""), "");
    row("peak DRAM",
        fmt::format("{:.0f} GB/s (2 x {:.0f} MHz x {} bits / 8)", i.value("peak_dram_gbs", 0.0),
                    i.value("mem_clock_mhz", 0.0), i.value("bus_width_bits", 0)),
        "");
    row("peak FP32",
        fmt::format("{:.0f} GFLOP/s (2 x {} SMs x FP32 lanes x {:.0f} MHz)", i.value("peak_fp32_gflops", 0.0),
                    i.value("sm_count", 0), i.value("sm_clock_mhz", 0.0)),
        "");
    row("L2", fmt::format("{:.0f} MiB", i.value("l2_mib", 0.0)), "");
    row("shared mem/block",
        fmt::format("{:.0f} KiB ({:.0f} KiB opt-in)", i.value("smem_per_block_kib", 0.0),
                    i.value("smem_per_block_optin_kib", 0.0)),
        "");
  } else {
    // Why, and what would give one.
    const std::string& why = gpu.line;
    std::string fix;
    if (why.find("no NVIDIA driver") != std::string::npos)
      fix =
          "this machine has no NVIDIA driver: on a machine with an NVIDIA GPU, install its driver "
          "(nvidia-smi must list the GPU)";
    else if (why.find("no CUDA device") != std::string::npos)
      fix = "the driver sees no device: check `nvidia-smi` and CUDA_VISIBLE_DEVICES";
    else if (why.find("no CUDA toolkit") != std::string::npos)
      fix = "install the CUDA toolkit (nvcc, below), then run `cudalab doctor` again";
    else if (why.find("driver") != std::string::npos)
      fix = "the driver is too old for the CUDA runtime, or it failed: update the NVIDIA driver";
    fmt::print("  none usable: {}\n", why);
    if (!fix.empty()) fmt::print("  {}\n", fix);
    fmt::print(
        "  Without a GPU, `./cudalab test` and `./cudalab grade` run the correctness checks in CPU mode "
        "(simulated GPU threads on the CPU);\n  speed checks need a GPU and are not run, so a grade made "
        "here is provisional (exit code 3).\n");
  }
  const std::vector<std::string> labs = all_labs();
  row("CPU mode",
      !labs.empty() && target_exists(labs.front() + "-tests-cpu")
          ? "available (simt: kernels on simulated threads)"
          : "",
      fmt::format("configure the build again: meson setup --reconfigure {}", kBuildRoot.string()));
  fmt::print("Tools\n");
  row("nvcc", version_of("nvcc"),
      "install the CUDA toolkit 12 or newer (13 tested): https://developer.nvidia.com/cuda-downloads, e.g. " +
          sudo + "apt-get install cuda-toolkit from NVIDIA's repository");
  row("meson", version_of("meson"), sudo + "apt-get install meson (1.0 or newer)");
  row("ninja", version_of("ninja"), sudo + "apt-get install ninja-build");
  row("Catch2", CUDALAB_CATCH2_VERSION, sudo + "apt-get install catch2");
  row("compute-sanitizer", version_of("compute-sanitizer"),
      "ships with the CUDA toolkit (" + sudo + "apt-get install cuda-sanitizer-13-0): for --sanitize", true);
  row("ncu", version_of("ncu"),
      "Nsight Compute (" + sudo + "apt-get install cuda-nsight-compute-13-0): memory-access metrics on a GPU",
      true);
  fmt::print("Grading\n");
  // What confines each graded check (cudalab-sandbox --probe).
  const IsolationProbe& isolation = probe_isolation();
  row("isolation", isolation.ok ? isolation.summary : "", isolation.summary);
  if (missing) fmt::print("{} missing: the commands above install them\n", missing);
  return missing ? kFailed : kOk;
}

int cmd_selftest(const std::vector<std::string>& args, bool long_too) {
  std::vector<std::string> argv = {"meson", "test", "-C", kBuildRoot.string(), "--print-errorlogs"};
  // Everything but the suite 'long' (whole batches graded, grading folders and
  // a release built from scratch: minutes each, CI runs them): 7 minutes from
  // a fresh clone on two cores. Named suites or tests run as named.
  static const std::set<std::string> with_value = {
      "--suite",    "--no-suite",  "--num-processes", "-t",       "--timeout-multiplier",
      "--setup",    "--test-args", "--wrapper",       "--repeat", "--logbase",
      "--gdb-path", "-C",          "--max-lines"};
  bool named = false;  // a suite or a test named: run as named
  for (std::size_t i = 0; i < args.size(); ++i) {
    const bool value = i > 0 && with_value.count(args[i - 1]);
    if (args[i] == "--suite" || args[i].rfind("--suite=", 0) == 0 || (!value && args[i].rfind("-", 0) != 0))
      named = true;
  }
  if (!long_too && !named) argv.insert(argv.end(), {"--no-suite", "long"});
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  std::fflush(stdout);
  execvp(cargv[0], cargv.data());
  fmt::print(stderr, "cudalab: cannot run meson: {}\n", std::strerror(errno));
  return kFailed;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"cudalab: GPU memory-optimisation labs: build, check, grade"};
  app.set_version_flag("--version", std::string("cudalab ") + CUDALAB_VERSION);
  app.require_subcommand(1);

  TestArgs ta;
  auto* test =
      app.add_subcommand("test", "Build the labs in labs/ and run their checks (all labs if none named)");
  test->add_option("labs", ta.labs, "labs to test, e.g. 03_tiling");
  test->add_option("--check", ta.only, "run only these checks (ids from lab.toml)");
  test->add_option("--seed", ta.seed, "seed for the random inputs");
  test->add_flag("-v,--verbose", ta.verbose, "show every failure and the test output");
  test->add_flag("--no-build", ta.no_build, "do not rebuild first");
  test->add_flag("--cpu", ta.cpu,
                 "CPU mode: run the kernels on simulated GPU threads (automatic without a GPU); correctness "
                 "only: no timing, caches, warp lockstep or memory model");
  test->add_flag("--access-report", ta.access_report,
                 "per kernel: global sectors per request and shared-memory bank conflicts per request (CPU "
                 "mode: per source line; on a GPU: Nsight Compute, where permitted)");
  test->add_option(
          "--sanitize", ta.sanitize,
          "run the checks under compute-sanitizer: memcheck (default), racecheck, synccheck, initcheck")
      ->expected(0, 1)
      ->default_str("memcheck")
      ->check(CLI::IsMember({"memcheck", "racecheck", "synccheck", "initcheck"}));

  GradeArgs ga;
  auto* grade = app.add_subcommand(
      "grade", "Grade a submission (folder, .zip or .tar.gz), a batch of them, or the working copy");
  grade->add_option("submission", ga.submission, "the submission; none: the working copy's labs/");
  grade->add_option("--batch", ga.batch, "grade every folder and archive in this folder");
  grade->add_option("--out", ga.out,
                    "where the results go (default results/<submission>/ or results/batch/)");
  grade->add_option("--course", ga.course, "the course file (default course.toml)");
  grade->add_option("--seed", ga.seed, "seed for the inputs (default: the course's grading seed)");
  grade->add_option("--work-dir", ga.work, "the grading build folder (default build-grade/)");
  grade->add_flag("--force", ga.force, "grade again submissions a batch graded before");
  grade->add_option("--shard", ga.shard,
                    "with --batch: grade only share I of N (I/N, from 0), e.g. a Slurm task's");
  grade->add_flag("--collect", ga.collect,
                  "with --batch: grade nothing; write grades.csv, index.html and the distribution from the "
                  "results graded so far (after --slurm or --shard runs)");
  grade->add_flag("--slurm", ga.slurm,
                  "with --batch: submit the batch to Slurm as a job array and a collecting job; the options "
                  "after it go to sbatch (docs/slurm.md)");
  grade->add_option("--slurm-chunk", ga.slurm_chunk, "with --slurm: submissions per array task (default 10)")
      ->check(CLI::PositiveNumber);
  grade->allow_extras();
  grade->add_option("--gpus", ga.gpus,
                    "with --batch: grade on several GPUs at once, a submission per GPU: all, a count, or a "
                    "list of indices (0,2); with --prepare: prepare the build slots such a batch uses");
  grade
      ->add_option("--sanitize", ga.sanitize,
                   "also run each passing correctness check under these compute-sanitizer tools "
                   "(e.g. --sanitize memcheck racecheck); a report fails the check")
      ->check(CLI::IsMember({"memcheck", "racecheck", "synccheck", "initcheck"}));
  grade->add_flag("--no-cpu", ga.no_cpu,
                  "without a usable GPU, build only and report the checks as not run (default: grade the "
                  "correctness checks in CPU mode, a provisional grade); course.toml's cpu_mode = true still "
                  "grades them");
  grade->add_flag("--prepare", ga.prepare,
                  "only configure and build the grading folder (autograder setup; add --gpus N for a batch)");
  grade->add_flag("-v,--verbose", ga.verbose,
                  "show every failure, the full compiler output and the test output");

  auto* doctor = app.add_subcommand("doctor", "What this machine has for cudalab, and what is missing");

  auto* selftest =
      app.add_subcommand("selftest", "The framework's own tests: meson test (unit and GPU suites)");
  bool selftest_long = false;
  selftest->add_flag("--long", selftest_long,
                     "the suite 'long' too (end-to-end grading of batches, the gallery, the release: minutes "
                     "each; CI runs them)");
  // Everything else goes to meson test in its order (a positional option here
  // would take "unit" of "--suite unit" away from its flag).
  selftest->footer("Other arguments go to meson test in their order, e.g. --suite unit, or a test's name.");
  selftest->allow_extras();

  std::string binary, lab_toml, expect_path;
  auto* expect =
      app.add_subcommand("expect", "Run a lab test binary and compare its verdicts with an expect.toml");
  expect->add_option("--binary", binary, "the lab test binary")->required();
  expect->add_option("--lab-toml", lab_toml, "the lab's manifest")->required();
  expect->add_option("--expect", expect_path, "the expected verdicts")->required();
  bool expect_cpu = false;
  expect->add_flag("--cpu", expect_cpu,
                   "the binary is a CPU-mode one: use [expect_cpu], speed checks not run");
  std::string expect_cpu_binary;
  expect->add_option("--cpu-binary", expect_cpu_binary,
                     "the same student files built for CPU mode: a correctness check that fails on the GPU "
                     "gets the grader's second look there");
  std::string expect_access_binary;
  expect->add_option("--access-binary", expect_access_binary,
                     "the same student files built for CPU mode's access report: a speed check too slow on "
                     "the GPU leads with what its `explain` check counts there, as in the grader");

  const ReleaseCommand release = add_release_command(app);
  const NewLabCommand new_lab = add_new_lab_command(app);
  const CalibrateCommand calibrate = add_calibrate_command(app, kSourceRoot, kBuildRoot);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kOk : kUsage;
  }
  try {
    if (*test) {
      // --sanitize alone means memcheck
      if (test->count("--sanitize") && ta.sanitize.empty()) ta.sanitize = "memcheck";
      return cmd_test(ta);
    }
    if (*grade) {
      // What follows --slurm and is not cudalab's goes to sbatch.
      ga.sbatch = grade->remaining();
      if (!ga.sbatch.empty() && !ga.slurm) {
        fmt::print(stderr, "cudalab grade: unknown argument {}\n", ga.sbatch.front());
        return kUsage;
      }
      if ((ga.slurm || ga.collect || !ga.shard.empty()) && ga.batch.empty()) {
        fmt::print(stderr, "cudalab grade: --slurm, --shard and --collect work on a batch (--batch DIR)\n");
        return kUsage;
      }
      const int rc = cmd_grade(ga);
      // CUDALAB_PROFILE: the grader's own peak memory (its children's are
      // theirs): what everything it reads from a submission is bounded for.
      if (const char* p = std::getenv("CUDALAB_PROFILE"); p && *p && std::string(p) != "0") {
        rusage self{};
        getrusage(RUSAGE_SELF, &self);
        fmt::print(stderr, "cudalab: the grader's peak memory: {:.1f} MiB\n", self.ru_maxrss / 1024.0);
      }
      return rc;
    }
    if (*doctor) return cmd_doctor();
    if (*selftest) {
      auto extras = selftest->remaining();
      return cmd_selftest(extras, selftest_long);
    }
    if (*expect)
      return cmd_expect(binary, lab_toml, expect_path, expect_cpu, expect_cpu_binary, expect_access_binary);
    if (release.selected()) return release.run();
    if (new_lab.selected()) return new_lab.run();
    if (calibrate.selected()) return calibrate.run();
  } catch (const std::exception& e) {
    fmt::print(stderr, "cudalab: internal error: {}\n", e.what());
    return kFailed;
  }
  return kUsage;
}
