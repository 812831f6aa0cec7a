// cudalab test [LAB...]: builds the labs in labs/ and runs their checks on
// this machine, on its GPU or in CPU mode (simulated GPU threads), with the
// second looks the grader takes at a failed check; a preview of the points,
// not a grade.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <map>
#include <optional>
#include <sstream>
#include <thread>

#include "commands.h"
#include "common.h"
#include "core/files.h"
#include "core/score.h"
#include "core/time_limits.h"
#include "course_build.h"
#include "cudalab/manifest.h"
#include "gpu_probe.h"
#include "run/checks.h"
#include "run/explain.h"
#include "run/lab_targets.h"
#include "run/process.h"
#include "run/progress.h"
#include "run/sandbox.h"
#include "views/report.h"

namespace fs = std::filesystem;

namespace cudalab {

namespace {

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
  opt.timeout_s = kAccessCountLimit_s;
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

// Where CPU mode's access report (--access-report) of a check goes.
fs::path access_file(const RunContext& ctx, const LabSpec& lab, const CheckSpec& check) {
  return ctx.work_dir / fmt::format("{}-{}-access.txt", lab.id, check.id);
}

// Which of a lab's binaries runs its checks here.
LabBinary binary_for(bool cpu, bool access_report) {
  return !cpu ? LabBinary::gpu : access_report ? LabBinary::access : LabBinary::cpu;
}

// The lab's checks, one process each, side by side where nothing is timed:
// in CPU mode all of them (at most one per core; they share nothing: each has
// its own record and scratch folder), on a GPU the correctness checks (a GPU
// runs several processes' kernels, and they time nothing), then each speed
// check alone, as its timing needs. Under compute-sanitizer, or on a GPU that
// one process at a time may use (gpu_shared false: compute mode Exclusive
// Process), one at a time.
std::vector<CheckResult> run_checks(const RunContext& ctx, const LabSpec& lab,
                                    const std::vector<const CheckSpec*>& todo, bool cpu, bool access_report,
                                    bool gpu_shared) {
  std::vector<CheckResult> ran(todo.size());
  const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t jobs = cpu                                   ? cores
                           : gpu_shared && ctx.sanitizer.empty() ? std::min<std::size_t>(cores, 4)
                                                                 : 1;
  // The correctness checks first, then those that run alone.
  const auto alone = [&](std::size_t i) { return !cpu && todo[i]->kind != CheckKind::correctness; };
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < todo.size(); ++i)
    if (!alone(i)) order.push_back(i);
  for (std::size_t i = 0; i < todo.size(); ++i)
    if (alone(i)) order.push_back(i);
  std::size_t next = 0, done = 0;
  std::vector<std::future<void>> running;
  fs::create_directories(ctx.work_dir);
  // A lab's checks can take minutes (CPU mode simulates every thread): say
  // how many are done.
  Progress progress(fmt::format("running {}'s checks{}", lab.id, cpu ? " (CPU mode)" : ""), "checks");
  progress.update(0, todo.size());
  std::vector<std::size_t> started;  // the check each of `running` runs
  while (next < order.size() || !running.empty()) {
    while (next < order.size() && running.size() < jobs && (!alone(order[next]) || running.empty())) {
      const std::size_t i = order[next++];
      RunContext c = ctx;
      if (cpu && access_report) c.access_out = access_file(ctx, lab, *todo[i]);
      running.push_back(std::async(std::launch::async,
                                   [&ran, &lab, &todo, i, c] { ran[i] = run_check(c, lab, *todo[i]); }));
      started.push_back(i);
      if (alone(i)) break;
    }
    // Wait for the first to finish, then start the next.
    for (bool any = false; !any && !running.empty();)
      for (std::size_t k = 0; k < running.size(); ++k)
        if (running[k].wait_for(std::chrono::milliseconds(20)) == std::future_status::ready) {
          running[k].get();
          progress.update(++done, todo.size(), todo[started[k]]->id);
          running.erase(running.begin() + static_cast<std::ptrdiff_t>(k));
          started.erase(started.begin() + static_cast<std::ptrdiff_t>(k));
          any = true;
          break;
        }
  }
  return ran;
}

// One lab: its checks (a.only's, or all) run, the second looks the grader
// would take, and its points printed. True where a check did not pass.
bool test_lab(const TestCommand::Args& a, RunContext ctx, const LabSpec& lab, bool cpu, bool gpu_shared,
              const Style& style) {
  bool failed = false;
  ctx.binary = kBuildRoot / "labs" / lab_target(lab.id, binary_for(cpu, a.access_report));
  ctx.lab_toml = lab.file;
  std::string context = a.seed.empty() ? "" : "seed " + a.seed;
  if (cpu) context = "CPU mode" + (context.empty() ? "" : ", " + context);
  print_lab_header(style, lab.id, lab.title, context);
  std::vector<CheckResult> results;
  std::vector<std::string> reports;
  std::vector<const CheckSpec*> todo;
  for (const auto& check : lab.checks)
    if (a.only.empty() || std::find(a.only.begin(), a.only.end(), check.id) != a.only.end())
      todo.push_back(&check);
  std::vector<CheckResult> ran = run_checks(ctx, lab, todo, cpu, a.access_report, gpu_shared);
  for (std::size_t i = 0; i < todo.size(); ++i) {
    const CheckSpec& check = *todo[i];
    const fs::path report = access_file(ctx, lab, check);
    // Too slow on the GPU: CPU mode's access count of the lab's `explain`
    // check, held against the solution's, says why (explain.h), as the
    // grader does. The solution's access build is the framework's
    // (tests/meson.build): a student's copy has the references prebuilt, not
    // instrumented, and there only what needs no comparison can lead.
    const CheckSpec* by = check.explain.empty() ? nullptr : lab.find_by_id(check.explain);
    const std::string access_target = lab_target(lab.id, LabBinary::access);
    if (!cpu && by && a.sanitize.empty() && timed_and_failed(ran[i]) && target_exists(access_target) &&
        (a.no_build || build_targets({access_target}, a.verbose))) {
      const std::string solution_target = "tests/" + lab.id + "-solution-access";
      std::optional<AccessCount> reference;
      if (target_exists(solution_target) && (a.no_build || build_targets({solution_target}, a.verbose)))
        reference = access_count_from_json(
            access_count_json(count_accesses(ctx, lab, *by, kBuildRoot / solution_target,
                                             ctx.work_dir / (run_stem(lab.id, by->id) + "-reference.json"))));
      explain_by_access(ctx, lab, *by, kBuildRoot / "labs" / access_target, reference ? &*reference : nullptr,
                        ctx.work_dir / (run_stem(lab.id, by->id) + "-explain.json"), "", ran[i]);
    }
    if (cpu) lead_hang_in_cpu_mode(ran[i], grid_stride_lab(lab));  // as the grader does (explain.h)
    // Failed on the GPU where its evidence leaves the cause open: racecheck
    // or CPU mode takes a second look, as the grader does (explain.h).
    if (!cpu && a.sanitize.empty()) {
      const SecondOpinion kind = second_opinion_for(ran[i], !compute_sanitizer_program().empty());
      const std::string cpu_target = lab_target(lab.id, LabBinary::cpu);
      const auto cpu_binary = [&]() -> fs::path {
        return target_exists(cpu_target) && (a.no_build || build_targets({cpu_target}, a.verbose))
                   ? kBuildRoot / "labs" / cpu_target
                   : fs::path();
      };
      if (kind != SecondOpinion::none) second_opinion(ctx, lab, check, kind, cpu_binary, ran[i]);
    }
    results.push_back(std::move(ran[i]));
    if (a.access_report && check.kind == CheckKind::correctness) {
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
    failed |= (r.verdict != Verdict::pass && r.verdict != Verdict::skipped && r.verdict != Verdict::not_run);
  }
  for (const auto& rep : reports) fmt::print("\n{}", rep);
  print_lab_total(style, lab.id, points, max_points,
                  cpu ? " (CPU mode: correctness only; speed needs a GPU)"
                      : " (on this machine; your grade comes from the course's grader)");
  return failed;
}

}  // namespace

TestCommand::TestCommand(CLI::App& app)
    : Command(app, "test", "Build the labs in labs/ and run their checks (all labs if none named)") {
  sub_->add_option("labs", a_.labs, "labs to test, e.g. 03_tiling");
  sub_->add_option("--check", a_.only, "run only these checks (ids from lab.toml)");
  sub_->add_option("--seed", a_.seed, "seed for the random inputs");
  sub_->add_flag("-v,--verbose", a_.verbose, "show every failure and the test output");
  sub_->add_flag("--no-build", a_.no_build, "do not rebuild first");
  sub_->add_flag("--cpu", a_.cpu,
                 "CPU mode: run the kernels on simulated GPU threads (automatic without a GPU); correctness "
                 "only: no timing, caches, warp lockstep or memory model");
  sub_->add_flag("--access-report", a_.access_report,
                 "per kernel: global sectors per request and shared-memory bank conflicts per request (CPU "
                 "mode: per source line; on a GPU: Nsight Compute, where permitted)");
  sub_->add_flag("--all-shapes", a_.all_shapes,
                 "CPU mode: run the largest shapes as they are, as the grader does (seconds more per check; "
                 "without it they run smaller, and each check says which)");
  sub_->add_option(
          "--sanitize", a_.sanitize,
          "run the checks under compute-sanitizer: memcheck (default), racecheck, synccheck, initcheck")
      ->expected(0, 1)
      ->default_str("memcheck")
      ->check(CLI::IsMember({"memcheck", "racecheck", "synccheck", "initcheck"}));
}

int TestCommand::run() {
  // --sanitize alone means memcheck
  if (sub_->count("--sanitize") && a_.sanitize.empty()) a_.sanitize = "memcheck";
  const Args& a = a_;
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
  const bool have_cpu_build = target_exists(lab_target(labs.front(), LabBinary::cpu));
  GpuProbe gpu;
  // Without a driver no GPU can answer: the probe is the CUDA half of the
  // harness, nvcc's minutes on a first run, for a line that says as much.
  const std::string no_driver = a.cpu || !have_gpu_build ? "" : no_gpu_driver();
  if (!a.cpu && have_gpu_build && no_driver.empty()) {
    if (!a.no_build && !build_targets({"cudalab-gpuinfo"}, a.verbose)) return kFailed;
    gpu = probe_gpu();
  } else {
    gpu.line = a.cpu            ? "not used (--cpu)"
               : have_gpu_build ? no_driver
                                : "not probed: the CUDA parts are not built (no nvcc?)";
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
  // The GPU build only where a GPU can run it: without one it is nvcc's 5 s
  // or more after every edit for nothing (the grader still compiles the file
  // with nvcc, so nvcc-only errors show there).
  if (!a.no_build && !build_targets(test_targets(labs, binary_for(cpu, a.access_report)), a.verbose))
    return kFailed;
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
  ctx.keep_output = a.verbose;  // --verbose: each check's own output, passed or not
  // The edit-and-test loop in CPU mode: the large shapes are the grader's
  // (cudalab/testing.h left_to_grader), each check names those it skipped.
  if (cpu && !a.all_shapes) ctx.extra_env.push_back("CUDALAB_LARGE_SHAPES=grader");
  if (!a.sanitize.empty())
    fmt::print(
        "Running under compute-sanitizer --tool {}: speed checks are not run, large shapes are skipped.\n",
        a.sanitize);
  const bool gpu_shared = !cpu && gpu.info.value("shared_by_processes", false);
  for (const auto& lab : specs) any_failed |= test_lab(a, ctx, lab, cpu, gpu_shared, style);
  return any_failed ? kFailed : kOk;
}

}  // namespace cudalab
