// grader/core/time_limits.h: every wall-clock limit the grader sets, and the one rule
// for a check's. A check's limit starts from lab.toml (the check's timeout_s,
// else the lab's) and course.toml (check_timeout_s caps a student's check);
// check_run_limit turns that into the limit of one run of its process, for
// whoever runs it (RunRole). Nothing else changes a check's limit.
#pragma once

#include <map>
#include <mutex>
#include <string>

namespace cudalab {

// Whose run of a check's process it is.
enum class RunRole {
  student,      // graded: capped by the course, and from the reference's time where known
  reference,    // the reference solution's run: the lab's own limit (the course's cap is for students)
  second_look,  // a look that only finds words for a verdict (explain.h): never holds a grade for long
  hang_look,    // CPU mode's look at a check that hung on the GPU: its small shapes only
};

// A graded check's wall-clock limit from the reference solution's time on it:
// factor x the reference's seconds, at least the floor, at most
// cap_s (lab.toml's timeout_s, capped by course.toml's check_timeout_s).
// A submission whose kernel never returns then costs about ten reference
// runs, not minutes. Correctness: 10 x, at least 10 s: a correct kernel ten
// times slower than the reference's still finishes (the checks' time is
// mostly the process, the inputs and the CPU's expected values, which do not
// grow with a slow kernel), and the floor absorbs a reference timed on a
// quiet machine against a student run on a busy one. Speed: 20 x, at least
// 20 s: the timing repeats until the noise is small, so a slow but correct
// kernel is timed for longer than the reference (the credit curve still
// gives points at a fraction of its speed). reference_s <= 0 (no reference
// time): cap_s. A cap below twice the reference's own time yields to that
// (kCapMargin): the reference must fit with room for a busy machine, or
// every correct submission times out (CI: a course's 20 s against a CPU-mode
// reference of 24 s took a solution's 20 points).
struct LimitRule {
  double factor, floor_s;
};
inline constexpr LimitRule kCorrectnessLimit{10, 10}, kSpeedLimit{20, 20};
inline constexpr double kCapMargin = 2;
double check_limit(double reference_s, double cap_s, bool speed);

// compute-sanitizer runs a check's kernels ten to a hundred times slower:
// under it, the check gets this many times its limit.
inline constexpr double kSanitizerFactor = 10;
// A second look says why; it never changes a verdict, so it never holds a
// grade for long, a sanitizer's included.
inline constexpr double kSecondLookLimit_s = 90;
// CPU mode's look at a check that hung on the GPU: a submission that hangs in
// every check of a lab should cost about 30 s.
inline constexpr double kHangLookLimit_s = 10;

struct RunLimitInputs {
  double lab_s = 0;         // the check's timeout_s in lab.toml, else the lab's
  double course_cap_s = 0;  // course.toml's check_timeout_s (<= 0: none)
  double reference_s = 0;   // the reference solution's time on this check (<= 0: unknown)
  bool speed = false;       // a speed check (kSpeedLimit)
  bool sanitizer = false;   // run under compute-sanitizer (kSanitizerFactor); never from reference_s
  RunRole role = RunRole::student;
};
// The limit of one run of a check's process: the lab's, capped by the course
// (students' runs and looks), check_limit from the reference's time (a
// student's run without a sanitizer), times kSanitizerFactor under a
// sanitizer, at most kSecondLookLimit_s or kHangLookLimit_s for a look.
// Host-only (tested).
double check_run_limit(const RunLimitInputs& in);

// "12 s (10 x the reference solution's 1.2 s)", "10 s (the least a check gets;
// the reference solution took 0.3 s)", "20 s (the lab's or course's limit; the
// reference solution took 9.1 s)", "48 s (twice the reference solution's 24 s:
// the lab's or course's limit is less)"; "120 s" without a reference time.
// Host-only (tested).
std::string describe_limit(double limit_s, double reference_s, bool speed);

// The words' allowance: what all of one submission's runs and builds that only
// find words may take together (second looks, a slow speed check's explanation
// in CPU mode, a roofline's traffic count, and their builds). Each such run's
// own limit is at most what is left (WordsAllowance::limit), so a kernel that
// never ends in CPU mode (gallery 70: one left spinning on a side stream)
// costs the allowance once, not 90 s per look and per speed check (an H200
// was still grading one after 347 s). Spent, the looks still to come are
// skipped with a note; no verdict depends on them.
// The default: an honest explanation in CPU mode costs a few seconds to
// about 15 s (its counting run at a small shape, 128^3 for lab 03), and a
// lab's access build, shared by its explanations and traffic counts, is
// its student file compiled once more (lab 03's file took 26 s through nvcc
// here, on 2 loaded cores, 2026-11-28; a GPU host's cores take a few). A
// slow lab's two speed checks, explained and charted, fit in 60 s; a
// hostile submission then costs at most a minute more than its honest twin,
// and never holds the next submission of a batch longer. A submission slow
// in several labs may see its last labs' leads skipped (with the note); a
// course that wants them all raises words_allowance_s in course.toml.
inline constexpr double kWordsAllowance_s = 60;

// One submission's allowance (kWordsAllowance_s or course.toml's), spent by
// the runs and builds that find words. Shared by the looks before the speed
// checks and the speed checks' words job beside them: thread-safe.
class WordsAllowance {
 public:
  explicit WordsAllowance(double total_s) : total_s_(total_s) {}
  // The limit of one run or build whose own limit is own_s (<= 0: none):
  // at most what is left. 0 when nothing is left: do not start it.
  double limit(double own_s) const;
  // What a run or build took: counted against the allowance.
  void charge(double seconds);
  // Nothing left: a run cut short by limit() leaves it so, and its words
  // (a timeout that is the allowance's, not the kernel's) are not used.
  bool spent() const;
  double total_s() const { return total_s_; }
  double left_s() const;
  // A build for words that failed or timed out, and its log: the next speed
  // check of the same submission does not build it again.
  void build_failed(const std::string& target, const std::string& log);
  const std::string* failed_build(const std::string& target) const;

 private:
  const double total_s_;
  mutable std::mutex mutex_;
  double used_s_ = 0;
  std::map<std::string, std::string> failed_builds_;
};

// The note of a look skipped because the allowance is spent (what it would
// have said, e.g. "why this check was slow").
std::string words_skipped_note(double allowance_s, const std::string& what);

// The grader's own tools, whose time does not depend on a submission's kernels.
inline constexpr double kGpuProbeLimit_s = 60;       // cudalab-gpuinfo, once per submission
inline constexpr double kIncludeListLimit_s = 120;   // the compiler listing a student file's includes
inline constexpr double kSymbolListLimit_s = 120;    // nm over a submission's objects
inline constexpr double kCompilerQueryLimit_s = 30;  // c++ -print-file-name
inline constexpr double kNinjaQueryLimit_s = 60;     // ninja -t query
inline constexpr double kExtractLimit_s = 120;       // unpacking a submitted archive
inline constexpr double kSandboxProbeLimit_s = 30;   // cudalab-sandbox --probe
inline constexpr double kToolVersionLimit_s = 30;    // `nvcc --version` and the like (cudalab doctor)
inline constexpr double kSlurmSubmitLimit_s = 120;   // sbatch
// `cudalab test --access-report` on a GPU: the check run again under Nsight
// Compute, which replays each kernel once per group of metrics.
inline constexpr double kAccessCountLimit_s = 600;

}  // namespace cudalab
