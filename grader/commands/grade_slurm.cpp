#include "grade_slurm.h"

#include <fmt/format.h>

#include <fstream>
#include <string>
#include <system_error>
#include <vector>

#include "common.h"
#include "core/files.h"
#include "core/time_limits.h"
#include "platforms/gradebook.h"
#include "platforms/intake.h"
#include "platforms/slurm.h"
#include "run/process.h"
#include "run/sandbox.h"

namespace fs = std::filesystem;

namespace cudalab {

std::vector<std::string> collect_command(const GradeCommand::Args& a, const fs::path& out) {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  std::vector<std::string> argv = {self.empty() ? "cudalab" : self.string(),
                                   "grade",
                                   "--batch",
                                   fs::absolute(a.batch).string(),
                                   "--out",
                                   fs::absolute(out).string(),
                                   "--collect"};
  if (!a.course.empty()) argv.insert(argv.end(), {"--course", fs::absolute(a.course).string()});
  if (!a.assignment.empty()) argv.insert(argv.end(), {"--assignment", a.assignment});
  if (!a.from.empty()) argv.insert(argv.end(), {"--from", a.from});
  return argv;
}

std::string shell_line(const std::vector<std::string>& argv) {
  std::string line;
  for (const auto& w : argv) line += (line.empty() ? "" : " ") + shell_quote(w);
  return line;
}

int submit_to_slurm(const GradeCommand::Args& a, std::size_t count, const fs::path& out) {
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
  if (!a.assignment.empty()) grade.insert(grade.end(), {"--assignment", a.assignment});
  // The tasks and the collecting job read the export as this command did.
  if (!a.from.empty()) grade.insert(grade.end(), {"--from", a.from});
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
    opt.timeout_s = kSlurmSubmitLimit_s;
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
  // One command line for the job and for the instructor who collects by hand,
  // so that neither loses the export's platform or the assignment.
  const std::string by_hand = shell_line(collect_command(a, out));
  collect.insert(collect.end(), {"--wrap", by_hand});
  if (!submit(collect, collect_id)) {
    fmt::print(stderr,
               "cudalab: the grading array {} was submitted; collect by hand when it is done:\n  {}\n",
               array_id, by_hand);
    return kFailed;
  }
  std::string books = (out / "grades.csv").string();
  if (const auto platform = parse_platform(a.from))
    books +=
        fmt::format(", {} and {}", (out / gradebook_file(*platform)).string(), (out / "feedback").string());
  fmt::print(
      "submitted {} submissions as Slurm job array {} ({} task{}, {} submission{} each at most), and job {} "
      "to collect the gradebook after it\n"
      "  watch:     squeue -j {},{}\n"
      "  logs:      {}/task-{}_<task>.log\n"
      "  gradebook: {} (when job {} is done)\n"
      "  by hand:   {}\n"
      "A task that fails can be submitted again: graded submissions are skipped (--force grades them "
      "again).\n",
      count, array_id, tasks, tasks == 1 ? "" : "s", a.slurm_chunk, a.slurm_chunk == 1 ? "" : "s", collect_id,
      array_id, collect_id, dir.string(), array_id, books, collect_id, by_hand);
  return kOk;
}

}  // namespace cudalab
