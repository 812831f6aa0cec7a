// cudalab grade [SUBMISSION | --batch DIR]: grades one submission (a folder,
// .zip or .tar.gz), the working copy's labs/, or a batch of them (one after
// another, a submission per GPU with --gpus, a share with --shard, or through
// Slurm: grade_slurm.h), writes each one's grade.json and its views, and
// prints the grade or the batch's distribution. --prepare only builds the
// grading folder. The grading itself is grade.h's Grader.
#include <fmt/color.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <system_error>

#include "commands.h"
#include "common.h"
#include "core/course.h"
#include "core/files.h"
#include "core/grade_document.h"
#include "core/late.h"
#include "cudalab/manifest.h"
#include "gpu_probe.h"
#include "grade_slurm.h"
#include "pipeline/grader.h"
#include "platforms/gradebook.h"
#include "platforms/intake.h"
#include "platforms/slurm.h"
#include "run/submission.h"
#include "views/csv.h"
#include "views/export.h"
#include "views/report.h"

namespace fs = std::filesystem;

namespace cudalab {

namespace {

// The total line: bold on a terminal.
std::string paint_total(const Style& style, const std::string& text) {
  return style.colour ? fmt::format(fmt::emphasis::bold, "{}", text) : text;
}

// A submission's id, the name of its results folder: its file or folder
// name without the archive's extension, anything but letters, digits, -, _
// and . made _, and never hidden (no leading dot).
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

// A grade on the console: each lab's checks (or why it was not graded), the
// files it ignored where show_ignored, and the total.
void print_grade(const GradeDocument& g, const Style& style, bool show_ignored) {
  fmt::print("GPU: {}\n", g.gpu           ? g.gpu_line
                          : g.provisional ? "none usable (" + g.gpu_line +
                                                "): CPU mode, correctness checks only; a provisional grade"
                          : g.cpu_mode ? "none usable (" + g.gpu_line + "): CPU mode, correctness checks only"
                                       : "none usable (" + g.gpu_line + "): built only, checks not run");
  if (!g.error.empty()) fmt::print("{}\n", g.error);
  // As report.txt shows them (report.h): one formatter for both.
  for (const auto& lab : g.labs) fmt::print("{}", graded_lab_text(style, lab));
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

// A batch's points in one lab, or in total, summed up in one line.
struct Distribution {
  std::vector<double> values;
  double max = 0;
  std::string line() const {
    if (values.empty()) return "no submissions";
    std::vector<double> v = values;
    std::sort(v.begin(), v.end());
    const std::size_t full = std::count_if(v.begin(), v.end(), [&](double x) { return x >= max - 1e-9; });
    // A lab worth no points: every submission has them all, none has none.
    const std::size_t zero =
        std::count_if(v.begin(), v.end(), [&](double x) { return x <= 1e-9 && x < max - 1e-9; });
    double mean = 0;
    for (double x : v) mean += x;
    mean /= static_cast<double>(v.size());
    return fmt::format(
        "min {:.1f}  median {:.1f}  mean {:.1f}  max {:.1f} of {:g}; full {}, partial {}, zero {}", v.front(),
        v[v.size() / 2], mean, v.back(), max, full, v.size() - full - zero, zero);
  }
};

// The GPUs that `--gpus spec` names on this machine (parse_gpus); empty with
// the reason in error.
std::vector<std::string> gpus_of(const std::string& spec, const GpuProbe& gpu, std::string& error) {
  return parse_gpus(spec, gpu.usable ? gpu.info.value("device_count", 1) : 0,
                    std::getenv("CUDA_VISIBLE_DEVICES"), error);
}

// A batch's points per lab and in total: min, median, mean, max and how
// many have full, partial and no points.
void print_distributions(const BatchView& batch, const std::vector<LabSpec>& labs) {
  std::map<std::string, Distribution> per_lab;
  Distribution total;
  // Aggregate from the gradebook's rows, so that resumed submissions count too.
  for (const auto& row : batch_rows(batch)) {
    const std::vector<std::string> cells = split_csv_line(row);
    if (cells.size() >= 3 + labs.size()) {
      total.values.push_back(std::atof(cells[1].c_str()));
      // A row of 0 for a submission not graded has no maximum: the largest is the batch's.
      total.max = std::max(total.max, std::atof(cells[2].c_str()));
      for (std::size_t l = 0; l < labs.size(); ++l) {
        auto& d = per_lab[labs[l].id];
        d.values.push_back(std::atof(cells[3 + l].c_str()));
        d.max = batch.lab_max[l];
      }
    }
  }
  for (const auto& l : labs) fmt::print("  {:<16} {}\n", l.id, per_lab[l.id].line());
  fmt::print("  {:<16} {}\n", "total", total.line());
}

// --prepare: the grading folder configured and built, nothing graded.
int prepare(const GradeCommand::Args& a, Grader& grader, const CourseSpec& course, const fs::path& work_dir) {
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
  fmt::print("preparing the grading build in {}{}{} ...\n", work_dir.string(),
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

// One submission, or the working copy where none is named.
int grade_one(const GradeCommand::Args& a, Grader& grader, const Style& style) {
  const bool working_copy = a.submission.empty();
  const fs::path sub = working_copy ? kSourceRoot / "labs" : fs::path(a.submission);
  const std::string id = working_copy ? "working-copy" : submission_id(sub);
  const fs::path out = a.out.empty() ? kSourceRoot / "results" / id : fs::path(a.out);
  fmt::print("grading {} ...\n", working_copy ? "the working copy (labs/)" : sub.string());
  std::fflush(stdout);
  SubmissionGrade g = grader.grade(sub, id);
  if (working_copy) g.ignored.clear();  // the course's own files, not the student's
  const GradeDocument doc = write_grade(g, out);
  print_grade(doc, style, !working_copy);
  fmt::print(
      "results: {} (grade.json, and from it results.json for Gradescope, prairielearn.json, junit.xml, "
      "grade.csv, report.txt, report.html)\n",
      out.string());
  // A grade the course chose to give in CPU mode is whole; one made in CPU
  // mode for want of a GPU is provisional.
  return g.gpu || (g.cpu_mode && !g.provisional) ? kOk : kNoGpu;
}

// A batch's submissions: each one's files and id, in the order they are
// graded, and with --from the platform's export they came from.
struct BatchInput {
  std::vector<fs::path> entries;
  std::vector<std::string> ids;
  std::optional<Intake> intake;
};

// Every folder or archive in the batch folder, sorted; with --from, every
// hand-in of the platform's export (intake.h). Nothing where the folder or
// the export cannot be read (said on stderr).
std::optional<BatchInput> read_batch(const GradeCommand::Args& a, const fs::path& out) {
  BatchInput in;
  if (!a.from.empty()) {
    try {
      // PrairieLearn's flat files are staged in folders under the batch's output.
      in.intake = read_export(*parse_platform(a.from), a.batch, out / "staged");
    } catch (const IntakeError& e) {
      fmt::print(stderr, "cudalab: {}\nNothing was graded.\n", e.what());
      return std::nullopt;
    }
    for (const auto& w : in.intake->warnings) fmt::print(stderr, "cudalab: {}\n", w);
    for (const auto& h : in.intake->handins) {
      in.entries.push_back(h.files);
      in.ids.push_back(h.key);
    }
    return in;
  }
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(a.batch, ec))
    if (e.is_directory() || (e.is_regular_file() && is_archive(e.path()))) in.entries.push_back(e.path());
  if (ec) {
    fmt::print(stderr, "cudalab: cannot read {}: {}\n", a.batch, ec.message());
    return std::nullopt;
  }
  std::sort(in.entries.begin(), in.entries.end());
  for (const auto& e : in.entries) in.ids.push_back(submission_id(e));
  return in;
}

// What a batch run does with its submissions: those it grades (indices
// into the batch), and with --collect those that have no results yet.
struct BatchPlan {
  std::vector<std::size_t> todo;
  std::vector<std::string> not_graded;  // --collect: submissions without results yet
};

// The batch's view, a row per submission, each with the grade.json it has
// from before where that is readable and this assignment's, and what is
// left to grade: this shard's submissions without one, or all with --force.
BatchPlan plan_batch(const GradeCommand::Args& a, const CourseSpec& course, const std::vector<LabSpec>& labs,
                     const BatchInput& in, const fs::path& out, std::pair<std::size_t, std::size_t> range,
                     BatchView& batch) {
  for (const auto& l : labs) {
    batch.lab_ids.push_back(l.id);
    batch.lab_max.push_back(course.weight(l.id) * l.total_points());
  }
  batch.entries.resize(in.entries.size());
  // Resume: a submission with a readable grade.json keeps it.
  BatchPlan plan;
  for (std::size_t i = 0; i < in.entries.size(); ++i) {
    BatchEntry& entry = batch.entries[i];
    entry.id = in.ids[i];
    // A hand-in the export lists but without files (a missing folder, a
    // repository not cloned): a row of 0 with the reason, nothing to grade.
    if (in.intake && !in.intake->handins[i].problem.empty()) {
      entry.problem = in.intake->handins[i].problem;
      continue;
    }
    const fs::path file = out / entry.id / "grade.json";
    std::string unreadable;
    if (fs::exists(file)) {
      entry.grade = load_grade_document(file, unreadable);
      if (!entry.grade)
        fmt::print(stderr, "cudalab: {}: graded again{}\n", unreadable,
                   a.collect ? " by a batch without --collect" : "");
      // Graded for another assignment (or for the whole course): not this one's grade.
      if (entry.grade && entry.grade->assignment != course.assignment) {
        fmt::print(
            stderr, "cudalab: {}: graded for {}, not {}: graded again{}\n", file.string(),
            entry.grade->assignment.empty() ? "the whole course" : "assignment " + entry.grade->assignment,
            course.assignment.empty() ? "the whole course" : "assignment " + course.assignment,
            a.collect ? " by a batch without --collect" : "");
        entry.grade.reset();
      }
    }
    if (a.collect) {
      if (!entry.grade) plan.not_graded.push_back(entry.id);
      continue;
    }
    if (i < range.first || i >= range.second) continue;  // another shard's
    if (!a.force && entry.grade) {
      fmt::print("[{}/{}] {}: graded before, skipped (--force grades it again)\n", i + 1, in.entries.size(),
                 entry.id);
    } else {
      entry.grade.reset();
      plan.todo.push_back(i);
    }
  }
  return plan;
}

// With --from: who handed it in and when, as the platform recorded it; the
// late rule only ever from that time, an input of the score.
void apply_handin(const CourseSpec& course, const HandIn& handin, const std::string& id, SubmissionGrade& g) {
  g.submission = handin.record;
  if (const Assignment* as = course.find_assignment(course.assignment)) {
    try {
      g.late = late_penalty(*as, *g.submission);
    } catch (const ManifestError& e) {
      g.notes.push_back(fmt::format("late rule not applied: {}", e.what()));
      fmt::print(stderr, "cudalab: {}: late rule not applied: {}\n", id, e.what());
    }
  }
  score_submission(g);
}

// The plan's submissions graded, each one's grade.json written and its line
// printed as it finishes, then the batch's time; whether any was graded on a
// GPU (or in the CPU mode the course chose).
bool grade_planned(Grader& grader, const CourseSpec& course, const BatchInput& in,
                   const std::vector<std::size_t>& todo, const std::vector<std::string>& gpus, int slot_base,
                   const fs::path& out, BatchView& batch) {
  bool any_gpu = false;
  const auto t0 = std::chrono::steady_clock::now();
  std::size_t finished = 0;
  const std::vector<BatchWorkerTime> times = grade_batch(
      grader, todo.size(), gpus, slot_base,
      [&](std::size_t k, int slot) {
        const std::size_t i = todo[k];
        return grader.stage(in.entries[i], in.ids[i], slot);
      },
      [&](std::size_t k, SubmissionGrade* g, const std::string& error) {
        const std::size_t i = todo[k];
        const std::string& id = in.ids[i];
        ++finished;
        const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const std::string eta =
            finished < todo.size()
                ? fmt::format(", ETA {:.0f} s", elapsed / finished * (todo.size() - finished))
                : "";
        if (!g) {
          fmt::print(stderr, "[{}/{}] {}: internal error: {}\n", i + 1, in.entries.size(), id, error);
          batch.entries[i].problem = "error";
          return;  // a failing submission never stops the batch
        }
        any_gpu |= g->gpu || (g->cpu_mode && !g->provisional);
        if (in.intake) apply_handin(course, in.intake->handins[i], id, *g);
        GradeDocument doc = grade_document(*g, CUDALAB_VERSION);
        std::string late;
        if (doc.late && doc.late->days > 0)
          late = fmt::format(", {} late: {:.2f} before",
                             doc.late->days == 1 ? "a day" : fmt::format("{} days", doc.late->days),
                             doc.late->score_before);
        write_grade_document(doc, out / id);
        batch.entries[i].grade = doc;
        fmt::print("[{}/{}] {}: {:.2f} / {:g}{} ({:.0f} s{})\n", i + 1, in.entries.size(), id, doc.score,
                   doc.max_score, late, g->seconds, eta);
        std::fflush(stdout);
      });
  if (!todo.empty())
    fmt::print("\n{}",
               describe_batch_time(
                   times, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()));
  return any_gpu;
}

// The batch's views (grades.csv, index.html, class.csv) and, with --from,
// the platform's gradebook and a feedback file per student, each said where.
void write_batch(const CourseSpec& course, const std::vector<LabSpec>& labs, const BatchInput& in,
                 const BatchView& batch, const fs::path& out) {
  write_batch_views(batch, out);
  fmt::print("\n{} submissions; gradebook: {}; pages: {}; class view: {}\n", in.entries.size(),
             (out / "grades.csv").string(), (out / "index.html").string(), (out / "class.csv").string());
  if (!in.intake) return;
  Gradebook book;
  book.platform = in.intake->platform;
  book.assignment = course.assignment;
  book.handins = &in.intake->handins;
  book.batch = &batch;
  for (const auto& l : labs)
    for (const auto& f : l.student_files) book.lab_of_file[fs::path(f).filename().string()] = l.id;
  write_gradebook(book, out);
  fmt::print("{} gradebook: {}; feedback for each student: {}\n", platform_name(in.intake->platform),
             (out / gradebook_file(in.intake->platform)).string(), (out / "feedback").string());
}

// --batch: every folder or archive in the batch folder, one after another;
// with --from, every hand-in of the platform's export (intake.h), graded
// with who handed it in and when, the assignment's late rule applied, and
// the platform's gradebook and a feedback file per student written beside
// grades.csv.
int grade_folder(const GradeCommand::Args& a, Grader& grader, const CourseSpec& course,
                 const std::vector<LabSpec>& labs) {
  const fs::path out = a.out.empty() ? kSourceRoot / "results" / "batch" : fs::path(a.out);
  const std::optional<BatchInput> in = read_batch(a, out);
  if (!in) return kUsage;
  if (a.slurm) return submit_to_slurm(a, in->entries.size(), out);
  Shard shard;
  if (!a.shard.empty()) {
    std::string error;
    if (!parse_shard(a.shard, shard, error)) {
      fmt::print(stderr, "cudalab: {}\n", error);
      return kUsage;
    }
  }
  const auto [first, last] = shard_range(in->entries.size(), shard);
  BatchView batch;
  const BatchPlan plan = plan_batch(a, course, labs, *in, out, {first, last}, batch);
  // Several GPUs (--gpus): a submission per GPU at a time, each staging its
  // next in its own slot while its GPU runs the current one (grade_batch).
  std::vector<std::string> gpus;
  if (!a.gpus.empty() && !plan.todo.empty()) {
    const GpuProbe gpu = probe_gpu(/*build=*/true);
    std::string error;
    gpus = gpus_of(a.gpus, gpu, error);
    if (gpus.empty()) {
      fmt::print(stderr, "cudalab: {}\n", error);
      return kUsage;
    }
    fmt::print("grading on {} GPU{} ({})\n", gpus.size(), gpus.size() == 1 ? "" : "s", fmt::join(gpus, ", "));
  }
  // A shard (a Slurm task) builds in slots of its own: tasks on one shared
  // grading folder never build over each other (the reference's build and
  // evidence, made by --prepare and the first task, are only read after).
  const int slot_base =
      a.shard.empty() ? 0 : static_cast<int>(2 * shard.index * std::max<std::size_t>(1, gpus.size()));
  const bool any_gpu = grade_planned(grader, course, *in, plan.todo, gpus, slot_base, out, batch);
  if (!a.shard.empty()) {
    // A share of the batch: the gradebook is the collecting step's.
    fmt::print("\nshard {}/{}: submissions {} to {} of {}; the gradebook: {}\n", shard.index, shard.count,
               first + 1, last, in->entries.size(), shell_line(collect_command(a, out)));
    return !plan.todo.empty() && !any_gpu ? kNoGpu : kOk;
  }
  write_batch(course, labs, *in, batch, out);
  print_distributions(batch, labs);
  if (!plan.not_graded.empty()) {
    fmt::print(stderr, "cudalab: {} of {} submissions have no results yet (0 points in the gradebook): {}\n",
               plan.not_graded.size(), in->entries.size(), fmt::join(plan.not_graded, ", "));
    return kFailed;
  }
  return !plan.todo.empty() && !any_gpu ? kNoGpu : kOk;
}

}  // namespace

GradeCommand::GradeCommand(CLI::App& app)
    : Command(app, "grade",
              "Grade a submission (folder, .zip or .tar.gz), a batch of them, or the working copy") {
  sub_->add_option("submission", a_.submission, "the submission; none: the working copy's labs/");
  sub_->add_option("--batch", a_.batch, "grade every folder and archive in this folder");
  sub_->add_option("--from", a_.from,
                   "with --batch: the folder is this platform's export of an assignment's submissions "
                   "(unzipped): who handed each in and when are kept, the late rule applied, and the "
                   "platform's gradebook and a feedback file per student written (docs/course.md)")
      ->check(CLI::IsMember({"gradescope", "prairielearn", "classroom"}));
  sub_->add_option("--out", a_.out, "where the results go (default results/<submission>/ or results/batch/)");
  sub_->add_option("--course", a_.course, "the course file (default course.toml)");
  sub_->add_option(
      "--assignment", a_.assignment,
      "grade one assignment of the course file ([[assignment]] name): its labs alone, out of its "
      "points");
  sub_->add_option("--seed", a_.seed, "seed for the inputs (default: the course's grading seed)");
  sub_->add_option("--work-dir", a_.work, "the grading build folder (default build-grade/)");
  sub_->add_flag("--force", a_.force, "grade again submissions a batch graded before");
  sub_->add_option("--shard", a_.shard,
                   "with --batch: grade only share I of N (I/N, from 0), e.g. a Slurm task's");
  sub_->add_flag("--collect", a_.collect,
                 "with --batch: grade nothing; write grades.csv, index.html and the distribution from the "
                 "results graded so far (after --slurm or --shard runs)");
  sub_->add_flag("--slurm", a_.slurm,
                 "with --batch: submit the batch to Slurm as a job array and a collecting job; the options "
                 "after it go to sbatch (docs/slurm.md)");
  sub_->add_option("--slurm-chunk", a_.slurm_chunk, "with --slurm: submissions per array task (default 10)")
      ->check(CLI::PositiveNumber);
  sub_->allow_extras();
  sub_->add_option("--gpus", a_.gpus,
                   "with --batch: grade on several GPUs at once, a submission per GPU: all, a count, or a "
                   "list of indices (0,2); with --prepare: prepare the build slots such a batch uses");
  sub_->add_option("--sanitize", a_.sanitize,
                   "also run each passing correctness check under these compute-sanitizer tools "
                   "(e.g. --sanitize memcheck racecheck); a report fails the check")
      ->check(CLI::IsMember({"memcheck", "racecheck", "synccheck", "initcheck"}));
  sub_->add_flag("--no-cpu", a_.no_cpu,
                 "without a usable GPU, build only and report the checks as not run (default: grade the "
                 "correctness checks in CPU mode, a provisional grade); course.toml's cpu_mode = true still "
                 "grades them");
  sub_->add_flag("--prepare", a_.prepare,
                 "only configure and build the grading folder (autograder setup; add --gpus N for a batch)");
  sub_->add_flag("-v,--verbose", a_.verbose,
                 "show every failure, the full compiler output and the test output");
}

int GradeCommand::run() {
  // What follows --slurm and is not cudalab's goes to sbatch.
  a_.sbatch = sub_->remaining();
  if (!a_.sbatch.empty() && !a_.slurm) {
    fmt::print(stderr, "cudalab grade: unknown argument {}\n", a_.sbatch.front());
    return kUsage;
  }
  if (!a_.from.empty() && a_.batch.empty()) {
    fmt::print(stderr, "cudalab grade: --from reads a platform's export: --batch EXPORT --from {}\n",
               a_.from);
    return kUsage;
  }
  // A Gradescope export graded as a folder of folders would lose who handed
  // each in: say what to add instead.
  if (!a_.batch.empty() && a_.from.empty() && fs::exists(fs::path(a_.batch) / "submission_metadata.yml")) {
    fmt::print(stderr,
               "cudalab grade: {} is a Gradescope export (it has submission_metadata.yml): add --from "
               "gradescope\n",
               a_.batch);
    return kUsage;
  }
  if ((a_.slurm || a_.collect || !a_.shard.empty()) && a_.batch.empty()) {
    fmt::print(stderr, "cudalab grade: --slurm, --shard and --collect work on a batch (--batch DIR)\n");
    return kUsage;
  }
  const Args& a = a_;
  const std::vector<std::string> known = all_labs();
  CourseSpec course;
  std::vector<LabSpec> labs;
  std::vector<std::string> outside;  // an assignment's: the other labs' file names
  try {
    course = load_course(a.course.empty() ? kSourceRoot / "course.toml" : fs::path(a.course), known);
    if (!a.assignment.empty()) {
      const CourseSpec whole = course;
      course = select_assignment(whole, a.assignment);
      // The other labs' files in a submission (a student's whole repository)
      // are not this assignment's: its grade does not mention them.
      for (const auto& id : whole.labs)
        if (std::find(course.labs.begin(), course.labs.end(), id) == course.labs.end()) {
          const LabSpec other = load_lab(kSourceRoot / "labs" / id / "lab.toml");
          outside.insert(outside.end(), other.student_files.begin(), other.student_files.end());
          outside.insert(outside.end(), other.tests.begin(), other.tests.end());
        }
    }
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
  cfg.files_outside = outside;
  cfg.seed = a.seed.empty() ? course.seed : a.seed;
  cfg.verbose = a.verbose;
  cfg.sanitizers = a.sanitize;
  // On several GPUs, submissions are graded side by side: their steps would
  // share a terminal's one line. The batch's own lines say how far it is.
  cfg.progress = a.gpus.empty();
  // Without a usable GPU, the correctness checks are graded in CPU mode: a
  // provisional grade (exit code 3). --no-cpu leaves it to the course file
  // (cpu_mode = true), as the autograder does: nothing is graded without a GPU
  // unless the course allows it. --collect grades nothing: its job (a Slurm
  // batch's last, on a node without a GPU) neither probes nor builds the probe.
  if (!a.prepare && !a.collect && !a.no_cpu && !course.cpu_mode) {
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
  if (a.prepare) return prepare(a, grader, course, cfg.work_dir);
  if (a.batch.empty()) return grade_one(a, grader, style);
  return grade_folder(a, grader, course, labs);
}

}  // namespace cudalab
