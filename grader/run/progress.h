// grader/run/progress.h: what a long step (a build, a configure, a lab's checks)
// tells whoever waits on it, on stderr: what it builds or runs, how far it is
// and about how long is left. On a terminal, one line redrawn in place with a
// bar; elsewhere (CI logs, autograders) a line at least every
// kProgressLineInterval_s, so that a log never looks hung. A step that ends
// within kProgressDelay_s says nothing: a build with nothing to do stays
// silent. CUDALAB_PROGRESS=0 silences it all; stdout never carries it.
//
// tools/progress.py is the same for the ./cudalab script's first configure
// and build, before this program exists: keep the two lines' words alike.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

namespace cudalab {

// Under ten seconds with the ticker's quarter second to spare: "a line at
// least every ten seconds" is what a CI log's reader (and a job that kills a
// silent one) needs.
inline constexpr double kProgressLineInterval_s = 9;
// Nothing before this: most builds after the first have nothing to do.
inline constexpr double kProgressDelay_s = 1;
// An estimate from fewer steps than this is noise (the first ones are
// Meson's regeneration and the quickest compiles).
inline constexpr std::size_t kProgressEstimateAfter = 3;

// What ninja prints per step with NINJA_STATUS set to this: "[12/40] "
// (steps finished / steps in all), then the step's description.
inline constexpr const char* kNinjaStatus = "[%f/%t] ";

struct NinjaStep {
  std::size_t finished = 0, total = 0;
  std::string description;  // "Compiling C++ object labs/...", "Linking target ..."
};

// One line of ninja's output as kNinjaStatus makes it; nullopt for anything
// else (a compiler's message, "ninja: Entering directory ...").
std::optional<NinjaStep> parse_ninja_status(std::string_view line);

// "about 40 s left", "about 3 min left", from the rate so far; "" until
// kProgressEstimateAfter steps are done, and once none is left.
std::string time_left_text(std::size_t done, std::size_t total, double elapsed_s);

// Where a Progress writes and when; for_stderr() is the program's, tests
// make their own with a clock they move and a string they read.
struct ProgressOptions {
  bool show = true;        // false: nothing at all
  bool terminal = false;   // one line redrawn in place (a bar), not a line per interval
  std::size_t width = 80;  // the terminal's columns
  double line_interval_s = kProgressLineInterval_s;
  double delay_s = kProgressDelay_s;
  std::function<double()> clock;                  // seconds, monotonic; steady_clock where empty
  std::function<void(const std::string&)> write;  // stderr where empty
  // A thread that keeps the lines coming while nothing moves (one long
  // compile, one long check); tests call tick() themselves instead.
  bool ticker = true;

  // stderr: a terminal or not, its width, CUDALAB_PROGRESS=0.
  static ProgressOptions for_stderr();
};

// One step's progress: `what` it does ("building 03_tiling-tests-cpu"), in
// `unit`s ("steps", "checks"). Thread-safe: checks finish on several threads.
// Steps nest (a grade's reference runs build the references first): while a
// newer one shows, an older one keeps quiet, so that a terminal's one line is
// the innermost step's and a log does not say both every interval.
class Progress {
 public:
  Progress(std::string what, std::string unit, ProgressOptions options = ProgressOptions::for_stderr());
  ~Progress();  // finish(true) where not finished
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // `done` of `total` units (total 0: not known yet); detail: the last one's name.
  void update(std::size_t done, std::size_t total, const std::string& detail = {});
  // A child's output as it comes (ninja's, with NINJA_STATUS=kNinjaStatus):
  // its status lines move the count; the rest is the caller's to keep. A
  // command that counts nothing (Meson's configure) shows its last line.
  void feed(std::string_view output);
  // Time passed: a line where one is due. The ticker calls it.
  void tick();
  // The last line: "...: done, 40 steps in 105 s" or "...: failed after 105 s",
  // only where anything was shown. Nothing is written after it.
  void finish(bool ok = true);

  // The text the line would have now (without the terminal's controls).
  std::string text() const;

 private:
  std::string text_locked(double now) const;
  void show_locked(double now, bool force);
  // A step newer than this one is under way and showing.
  bool inner_shown() const;
  double now() const;

  std::string what_, unit_;
  ProgressOptions options_;
  mutable std::mutex mutex_;
  double start_ = 0, last_line_ = 0;
  // The rate's reference: ninja's count restarts after it regenerated the
  // build files ("[1/1] Regenerating build files"), then counts the build.
  double series_start_ = 0, last_update_ = 0;
  std::size_t done_before_ = 0;  // in the counts before this one: the end says all
  std::size_t done_ = 0, total_ = 0;
  std::string detail_, pending_;
  // Read by the steps it encloses (see above), under their own locks.
  std::atomic<bool> shown_{false};
  bool finished_ = false;
  std::condition_variable stop_;
  std::thread ticker_;
};

}  // namespace cudalab
