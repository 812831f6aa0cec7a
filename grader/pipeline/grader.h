// grader/pipeline/grader.h: grading a submission: overlay its student files on a
// pristine copy of the labs, build lab by lab against the pristine harness,
// tests and references, run each check in its own process, score.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/course.h"
#include "core/judged.h"
#include "core/score.h"
#include "core/submission_grade.h"
#include "cudalab/manifest.h"
#include "run/checks.h"
#include "run/explain.h"
#include "run/progress.h"
#include "run/sandbox.h"
#include "run/seed.h"
#include "run/submission.h"
#include "run/traffic.h"

namespace cudalab {

class Progress;  // progress.h

struct GraderConfig {
  // An assignment's grade: the file names (student files, tests) of the
  // course's labs outside it, which its grade passes over in silence.
  std::vector<std::string> files_outside;
  std::filesystem::path source_root;  // pristine course: labs/, solutions/, harness/
  std::filesystem::path work_dir;     // the grading build and overlay live here
  CourseSpec course;
  std::vector<LabSpec> labs;  // the course's labs, in its order
  std::string seed;           // inputs' seed at grading time
  // compute-sanitizer tools to run each passing correctness check under too
  // (e.g. memcheck, racecheck): a report turns the check into a failure.
  std::vector<std::string> sanitizers;
  bool verbose = false;
  // Without a usable GPU, grade the correctness checks in CPU mode even where
  // the course does not set cpu_mode (`cudalab grade` unless --no-cpu): the
  // grade is then marked provisional.
  bool cpu_fallback = false;
  // A submission's correctness checks run side by side, this many at once
  // (0: automatic, check_jobs()). Speed checks always run alone.
  int check_jobs = 0;
  // The builds' and stages' progress on stderr (progress.h): for one
  // submission at a time; submissions graded side by side would share a
  // terminal's one line.
  bool progress = false;
};

// How many correctness checks run at once: `configured` where > 0; else in
// CPU mode one per core (simulated threads keep a core busy), on a GPU up to
// 8 (their kernels take milliseconds; the processes' start, the inputs and
// the CPU's expected values are the time: on an H100 host with 16 cores the
// four labs' twelve checks took 9.1 s four at a time).
std::size_t check_jobs(int configured, bool cpu_mode, unsigned cores);

class Grader {
 public:
  // A submission built and checked against the policy, ready for its checks.
  struct Staged {
    SubmissionGrade grade;
    int slot = 0;
    // The GPU its checks run on, as CUDA_VISIBLE_DEVICES names it ("" = the
    // default device): a batch over several GPUs gives each submission one.
    std::string gpu;
    std::vector<bool> ready;  // per lab: built and allowed; its checks still to run
    // Per lab: the seed its checks run with, derived from its files (seed.h).
    std::vector<std::string> seeds;
    double seconds = 0;  // spent staging
  };

  explicit Grader(GraderConfig config);

  // Configures and builds the grading folder with the skeletons, so that
  // grading a submission compiles only its files (the autograder's setup):
  // slots 0 to slots - 1 (a batch on N GPUs stages in 2N; each slot is a
  // build of its own whose first use otherwise costs a configure and the
  // harness's compile, about a minute on 32 cores, inside the batch). With
  // looks, each slot also gets the CPU-mode and access-report builds that a
  // failed check's second look runs (on a GPU host: without one there is no
  // second look), else the first look in each slot compiles simt's harness.
  bool prepare(std::string& error, int slots = 1, bool looks = false);
  SubmissionGrade grade(const std::filesystem::path& submission, const std::string& id);

  // The two halves of grade(), so that a batch builds the next submission on
  // the CPU (in the other slot: its own overlay and build folder) while the
  // GPU runs this one's checks, one check at a time.
  Staged stage(const std::filesystem::path& submission, const std::string& id, int slot);  // CPU only
  SubmissionGrade run(Staged staged);                                                      // the GPU

  const GraderConfig& config() const { return cfg_; }

  // The slot of the reference solutions, built like a submission in their own
  // folder: the judge's side of every correctness check (cudalab/evidence.h).
  static constexpr int kReferenceSlot = -1;

 private:
  std::filesystem::path overlay(int slot) const;
  std::filesystem::path build(int slot) const;
  bool ensure_configured(int slot, std::string& error);
  void sync_overlay(const SubmissionPlan* plan, int slot);
  std::string build_lab(const std::string& target, int slot, bool& ok);
  // Several targets in one build (ninja runs them side by side); the log if it
  // failed. timeout_s > 0: instead of the course's build_timeout_s.
  std::string build_targets(const std::vector<std::string>& targets, int slot, bool& ok,
                            double timeout_s = 0);
  // A build that only serves words (a look's CPU-mode or access build):
  // within what is left of ctx.words, counted against it, and not tried
  // again for the same submission once it failed (pipeline/second_looks.cpp).
  std::string build_for_words(const RunContext& ctx, const std::string& target, int slot, bool& ok);
  // A student slot's build runs confined (sandbox.h, build profile): it
  // reads the submission's copy, the course's harness, simt, tools and labs,
  // and the toolchain; it writes the slot's build folder.
  SandboxSpec build_sandbox(int slot, const std::filesystem::path& scratch) const;
  // The inputs of a target that are the course's (built outside the
  // sandbox before the student's part), kept per target and slot.
  std::vector<std::string> course_inputs(const std::string& target, int slot);
  // Every file the student's files of a lab include, from the compiler
  // (confined); "" when each lies where a lab may include from, else the
  // problems (nothing of an include's contents is quoted).
  std::string include_problems(const LabSpec& lab, int slot);
  // The CPU's half of a grade, stage(), the same way (pipeline/stage.cpp):
  //   submission -receive-> Received -build_labs-> Built -settle_labs-> Staged,
  // with overlay_files putting the received files into the slot's folder
  // before the build.
  //
  // A submission's files: unpacked, each lab's files found (or why not), and
  // each lab's inputs' seed derived from them.
  struct Received {
    // Its labs (none run yet), notes and ignored files; where it could not be
    // read at all, every lab missing and why (then `plan` is empty).
    SubmissionGrade grade;
    std::filesystem::path submission;
    std::filesystem::path root;  // where its files are read from: the submission, or its archive unpacked
    std::optional<SubmissionPlan> plan;
    std::vector<std::string> seeds;  // per lab ("" where its files are incomplete)
    // The lab's files, where every one of them was found; else nullptr.
    const LabFiles* complete(std::size_t lab) const;
  };
  // Per lab: what its files include (problems, "" none), whether it built,
  // its build's log, and its policy's problems (to come).
  struct Built {
    std::vector<std::string> include_bad, build_logs;
    std::vector<bool> built;
    std::vector<std::future<std::string>> policies;
  };
  Received receive(const std::filesystem::path& submission, const std::string& id, int slot);
  // The submission's archive unpacked into the slot's folder: where its files
  // are, or nullopt with every lab of `grade` missing and why.
  std::optional<std::filesystem::path> unpack(const std::filesystem::path& submission, int slot,
                                              SubmissionGrade& grade);
  void overlay_files(const Received& r, int slot);
  Built build_labs(const Received& r, int slot);
  Staged settle_labs(Received r, Built b, int slot);

  // The GPU's half of a grade, run(), is a chain of stages, each a function
  // from the record before it to the next one (pipeline/grader.cpp):
  //   Staged -begin_checks-> Setup -plan_correctness-> CorrectnessPlan
  //   -run_correctness-> Ran -take_second_looks-> Verdicts
  //   -run_speed_checks-> Verdicts -finish-> SubmissionGrade.
  // What they share beyond those records is the grader's own workspace: its
  // configuration, the reference's builds and evidence, and their locks.
  //
  // A submission on the GPU once its GPU is probed: every stage reads it, none
  // changes it (finish takes it over).
  struct Setup {
    SubmissionGrade grade;  // its labs' statuses as the probe left them
    int slot = 0;
    std::string gpu;                 // as Staged::gpu
    std::vector<std::string> seeds;  // per lab, as Staged::seeds
    double staged_seconds = 0;
    RunContext ctx;  // what every check of this submission runs with
    std::chrono::steady_clock::time_point t0;
    // The context of a lab's checks in the build folder `build_dir`.
    RunContext lab_context(std::size_t lab, const std::filesystem::path& build_dir) const;
  };
  // The grader's verdict per lab and check; nullopt: not decided yet.
  using Verdicts = std::vector<std::vector<std::optional<Judged>>>;
  // A speed check's traced run: what the student's process said, and the
  // launch trace it left (its own name: run_stem names every run apart).
  struct Traced {
    Claim claim;
    std::filesystem::path file;
  };
  // Per lab and check: a speed check's traced run (the student's launcher,
  // nothing timed), taken beside the correctness checks as soon as those it
  // requires claimed a pass, so that the speed stage only times.
  using Traces = std::vector<std::vector<std::optional<Traced>>>;
  // The student's correctness checks to run, with the reference's evidence
  // each is judged against, longest first (by the reference's time on each).
  struct CorrectnessPlan {
    struct Pending {
      std::size_t lab, check;
      RunContext ctx;  // with the reference's evidence to judge against
    };
    std::vector<Pending> checks;
    // Checks decided without a run (no reference evidence to judge by); the
    // rest of each lab's checks nullopt.
    Verdicts decided;
  };
  // What the correctness stage leaves: the judge's verdict on each planned
  // check, in the plan's order, and the speed checks it traced.
  struct Ran {
    std::vector<Judged> verdicts;
    Traces traces;
  };
  // Room for a verdict on every check of the labs being graded, none decided.
  static Verdicts undecided(const SubmissionGrade& g);
  Setup begin_checks(Staged st);                                                         // grader.cpp
  CorrectnessPlan plan_correctness(const Setup& s);                                      // reference.cpp
  Ran run_correctness(const Setup& s, const CorrectnessPlan& plan, Progress& progress);  // correctness.cpp
  // The words of the failed checks (they never change a verdict but under
  // the sanitizers, whose report can only fail one); the plan's decided
  // verdicts with the ran ones in their places.
  Verdicts take_second_looks(const Setup& s, const CorrectnessPlan& plan,
                             std::vector<Judged> ran);  // second_looks.cpp
  // Every speed check decided: timed, or not run and why.
  Verdicts run_speed_checks(const Setup& s, Verdicts verdicts, Traces traces);  // speed.cpp
  SubmissionGrade finish(Setup s, Verdicts verdicts);                           // grader.cpp

  // Symbols and includes the student's objects may not use; "" if none.
  // fresh_only: after a failed build, skip objects older than their source.
  // cpu_mode: the objects of the CPU-mode build (<lab>-tests-cpu).
  std::string policy_problems(const LabSpec& lab, int slot, bool fresh_only = false, bool cpu_mode = false);
  // The instructions lab.toml's forbid excludes, in one student file's PTX
  // (its compile command `compile_argv`, with -ptx) and, where cuobjdump is
  // found, its object's SASS, both confined like the build; one line per
  // problem (pipeline/check_instructions.cpp, grader/run/instructions.h).
  std::vector<std::string> instruction_problems(const LabSpec& lab, int slot, const std::string& file,
                                                const std::vector<std::string>& compile_argv,
                                                const std::filesystem::path& object);

  // Builds the reference's test binary of a lab for GPU or CPU mode (once per
  // grader); "" or why it could not.
  std::string build_reference(const LabSpec& lab, bool cpu_mode);
  // Any of its lab's targets ("<lab>-tests-traffic"), the same way.
  std::string build_reference_target(const LabSpec& lab, const std::string& target);
  // The reference's evidence for a check at this seed and mode: run once and
  // kept (a batch reuses it), rebuilt when the reference binary is newer.
  // Empty with `error` set if there is none.
  // `seconds`: that run's wall time, kept beside the evidence (<check>.seconds):
  // the student's limit on the check is a multiple of it (time_time_limits.h check_limit).
  std::filesystem::path reference_evidence(const RunContext& ctx, const LabSpec& lab, const CheckSpec& check,
                                           bool cpu_mode, std::string& error, double* seconds = nullptr);
  // The reference solution's wall time on a speed check at this seed and mode:
  // its run of the check, once and kept like the evidence; 0 if it has none
  // (then the lab's limit applies).
  double reference_speed_seconds(const RunContext& ctx, const LabSpec& lab, const CheckSpec& check,
                                 bool cpu_mode);

  // The student's compiled kernels of a lab (the .nv_fatbin of each of its
  // objects, cudalab/replay.h) written to `out`, for the speed replay; false
  // with a reason.
  bool student_device_code(const LabSpec& lab, int slot, const std::filesystem::path& out,
                           std::string& error);
  // A speed check (GPU): the student's run traces its launches; the reference
  // build times them (cudalab/replay.h). That run's result is the check's.
  // `launch` gets the student's first traced launch ("grid (...), block (...)").
  Judged run_speed_check(const RunContext& ctx, const LabSpec& lab, const CheckSpec& check, int slot,
                         std::string& launch, std::optional<Traced> traced = std::nullopt);
  // A memory check (lab.toml judge = "memory") on a GPU: whether its
  // student run traces its launcher's calls, and, where the judge passed its
  // claim, the check judged again on their replay in the reference build
  // (cudalab/replay.h, judged.h judge_memory_replay).
  static bool memory_replayed(const SubmissionGrade& g, const CheckSpec& check);
  Judged judge_memory_in_replay(const Setup& s, std::size_t lab, const CheckSpec& check,
                                const RunContext& ctx, Judged judged, const std::filesystem::path& trace,
                                const std::vector<std::string>& student_right);
  // The first half of a speed check: the student's run with its launches
  // traced (its context as the speed stage makes it, speed_context). Times
  // nothing, so it may share the GPU.
  Traced trace_speed_check(const RunContext& ctx, const LabSpec& lab, const CheckSpec& check);
  // A speed check's context: the lab's, with the reference's time at the
  // speed seed as its limit's base.
  RunContext speed_context(const Setup& s, std::size_t lab, const CheckSpec& check);
  // A timed speed check that failed, whose lab.toml names an `explain` check:
  // that check's CPU-mode run with simt's access report gives the leading
  // diagnosis (explain.h). Diagnosis only: the result's verdict and points
  // are left as they are.
  // A correctness check failed or hung on the GPU: racecheck or CPU mode
  // where the GPU's evidence leaves the cause open (explain.h
  // second_opinion). True when that second run did not finish either.
  bool second_look(const RunContext& ctx, const LabSpec& lab, const CheckSpec& check, int slot,
                   CheckResult& r);
  void explain_slow(const RunContext& ctx, const LabSpec& lab, const CheckSpec& speed, int slot,
                    const std::string& launch, CheckResult& r);

  // What a timed speed check's words gain after its timing, CPU work only: a
  // slow check's explanation (explain_slow: its counts in CPU mode against
  // the reference's) and a roofline check's traffic count (chart_traffic).
  struct WordsAfterTiming {
    std::optional<std::vector<std::string>> failures;  // explained: the lead first
    std::optional<std::vector<std::string>> notes;     // explained: a note where it was skipped
    std::optional<Cause> cause;                        // explained: the lead's cause
    CheckResult counted;                               // chart_traffic's notes and counts
  };
  WordsAfterTiming words_after_timing(const RunContext& lc, const LabSpec& lab, const CheckSpec& check,
                                      int slot, const CheckResult& timed, const std::string& launch);
  // A speed check decided without timing: a requirement failed (its trace,
  // if any, removed unread), or CPU mode; nullopt where it is to be timed.
  static std::optional<Judged> untimed_speed_check(const SubmissionGrade& g, const CheckSpec& check,
                                                   const std::vector<Judged>& correct,
                                                   std::optional<Traced>& traced);

  // The report's roofline (traffic.h, pipeline/traffic.cpp): for a timed
  // speed check `timed` whose chart is a roofline, the global-memory traffic
  // of each kernel on it, counted in CPU mode, added to `out` (measurements
  // and a note), or a note saying why it was not. The student's from the
  // slot's access build; the others' from the reference's traffic build,
  // once per reference build. Words and the chart only: no verdict or point
  // depends on it.
  void chart_traffic(const RunContext& ctx, const LabSpec& lab, const CheckSpec& check, int slot,
                     const CheckResult& timed, CheckResult& out);
  // The reference's count of a slow check's `explain` check (explain.h), in
  // the reference's access build, once per reference build; nullopt with
  // `error` set where it cannot be had.
  std::optional<AccessCount> reference_access_count(const RunContext& ctx, const LabSpec& lab,
                                                    const CheckSpec& by, std::string& error);
  std::optional<CountedTraffic> reference_traffic(const RunContext& ctx, const LabSpec& lab,
                                                  const CheckSpec& check, const std::string& who,
                                                  std::string& error);
  // Where a step's progress goes: stderr where cfg_.progress, else nowhere.
  ProgressOptions progress_options() const;

  // The grading folder's key for the inputs' seeds (seed.h), read once.
  const GradingKey& key();
  // The seed the reference's speed runs use: no student's, fixed per folder.
  std::string reference_speed_seed();
  // Keeps the reference's evidence of the newest kKeptSeeds seeds.
  void prune_reference_evidence();

  GraderConfig cfg_;
  std::optional<GradingKey> key_;
  std::mutex key_mutex_;
  std::map<std::string, std::string> reference_built_;  // "<lab>-tests[-cpu]" -> "" or the error
  // The reference's builds are shared by every submission a batch grades at
  // once (grade_batch): one build at a time.
  std::recursive_mutex reference_mutex_;
  // Its evidence and times are one file per seed, lab and check: each is
  // computed once under its own lock, and different ones side by side (on
  // several GPUs, one lock for all of them made every GPU wait its turn).
  std::mutex& record_lock(const std::filesystem::path& file);
  std::mutex record_locks_mutex_;
  std::map<std::string, std::unique_ptr<std::mutex>> record_locks_;
  std::map<std::string, std::vector<std::string>> course_inputs_;
  std::mutex course_inputs_mutex_;
};

// The GPUs a batch grades on, from `--gpus`: "all" (every GPU the grader
// sees), a count N (the first N) or a list "0,2" (indices among those it
// sees). Each comes back as the CUDA_VISIBLE_DEVICES value that shows a check
// that GPU alone: where the grader itself runs under CUDA_VISIBLE_DEVICES
// (`visible`, e.g. "2,3" or GPU UUIDs), index i is its i-th entry. Empty with
// `error` set when the spec is malformed or asks for a GPU that is not there.
// Host-only (tested).
std::vector<std::string> parse_gpus(const std::string& spec, int visible_count, const char* visible,
                                    std::string& error);

// Grades `count` submissions, `gpus.size()` at a time (one per GPU, gpus
// empty: one, on the default device), each worker staging its next
// submission in its own second slot while its GPU runs the current one;
// worker w builds in slots slot_base + 2w and slot_base + 2w + 1 (a Slurm
// task's share of a batch has its own slots in a shared grading folder).
// `stage(k, slot)` stages submission k; `done(k, grade or nullptr, error)`
// gets each result, one call at a time (never concurrently), in the order
// they finish. A submission that throws is reported to `done` with the error
// and the batch goes on. Returns where each worker's time went.
struct BatchWorkerTime {
  std::string gpu;  // its CUDA_VISIBLE_DEVICES value ("" the default device)
  std::size_t graded = 0;
  double running_s = 0;  // grading staged submissions (checks, reference, second looks)
  double waiting_s = 0;  // waiting for the next submission's build: its GPU idle
};
std::vector<BatchWorkerTime> grade_batch(
    Grader& grader, std::size_t count, const std::vector<std::string>& gpus, int slot_base,
    const std::function<Grader::Staged(std::size_t k, int slot)>& stage,
    const std::function<void(std::size_t k, SubmissionGrade* grade, const std::string& error)>& done);

// The lines a batch prints about where its time went: per GPU, what share of
// the wall time it graded and what share it waited for builds (a batch that
// waits on builds needs cores, not GPUs). Host-only (tested).
std::string describe_batch_time(const std::vector<BatchWorkerTime>& workers, double wall_s);

// Compiler output with the grading folder's paths shown as the student's.
std::string tidy_build_log(const std::string& log, const std::string& overlay_labs, bool verbose);

// What a failed build shows: the compiler's messages (tidy_build_log), else
// ninja's own error lines, else its last lines and `how` it ended ("exit code
// 1"): never nothing. Host-only.
std::string build_failure_log(const std::string& output, const std::string& overlay_labs, bool verbose,
                              const std::string& how);

}  // namespace cudalab
