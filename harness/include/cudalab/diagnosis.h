// cudalab/diagnosis.h: one leading diagnosis per failing check, from all of
// its evidence. Host-only.
//
// A check runs its launcher on several shapes. Each shape alone suggests a
// cause ("only the last partial tile is wrong"), and shapes can disagree: a
// race looks like an index error at one shape and like a boundary error at
// another. So the harness collects the facts of every shape of the running
// check (launch outcome and configuration, error pattern of each output,
// writes outside the buffers, whether a rerun on the same inputs changed the
// output) and, when the check fails, puts one cause first, with the fact that
// decides it:
//
//   Diagnosis: the boundary checks. Right on every shape where M, N and K are
//   multiples of 16, wrong on every shape where one is not (K=9 at M=17 N=33 K=9): ...
//
// The per-shape messages follow as supporting detail, without causes of their
// own (Comparison::describe omits its "Likely cause" while a check collects).
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "cudalab/compare.h"
#include "cudalab/vocabulary.h"

namespace cudalab::diagnosis {

// A lab's words for the fix of each cause (lab.toml's [diagnosis]): where a
// lead names a fix, the lab's words for its cause replace the general ones
// (a histogram lab never hears of tiles or of M, N and K).
using Words = std::map<Cause, std::string>;

// What one launch of a check showed. `label` is the launch's
// "launcher(M=17 N=33 K=9)"; its "name=value" pairs are the shape's dimensions.
struct ShapeFacts {
  std::string label;
  std::vector<std::pair<std::string, long long>> dims;
  bool launch_failed = false;
  bool not_implemented = false;
  std::string launch_error;                  // "invalid argument (cudaErrorInvalidValue)"
  std::string launch_advice;                 // the cause for that error, the launch configuration named
  Cause launch_cause = Cause::launch_fails;  // what the launch's values and error say it was
  bool compared = false;
  bool values_ok = true;
  std::string output;  // the first wrong output's name
  ErrorPattern pattern = ErrorPattern::none;
  std::size_t elements = 0, wrong = 0, unwritten = 0;
  std::size_t wrong_zero = 0;  // written, wrong, and exactly 0
  // Written, wrong and NaN (or Inf); of those, NaNs with a guard zone's bits
  // and with CPU mode's shared-memory fill's (Comparison); the first one.
  std::size_t non_finite = 0, guard_nan = 0, shared_nan = 0;
  std::size_t first_nan_row = 0, first_nan_col = 0;
  // The launch's inputs ("A", "B"), and whether they hold a NaN or Inf: -1
  // not known (the grader's evidence has only their hashes), 0 none, 1 some.
  std::vector<std::string> inputs;
  int inputs_nan = -1;
  bool unwritten_trailing = false;           // the unwritten elements are whole last rows or columns
  std::size_t rows = 0, cols = 0;            // of that output
  std::size_t last_rows = 0, last_cols = 0;  // with unwritten_trailing: how many of each
  // Every unwritten element in a wholly unwritten row (column): how many, the first.
  std::size_t whole_rows = 0, whole_cols = 0, first_row = 0, first_col = 0;
  std::string launch;  // the launcher's last launch: "kernel<<<grid (3, 2, 1), block (16, 16, 1)>>>"
  // The reference solution's launch at this shape, where the lab's test ran it
  // to tell a short grid from a bound that stops threads (Run::note_reference_launch).
  std::string reference_launch;
  // A loop over a dimension that stops before its last, partial tile: the
  // tile sizes for which the output is exactly the sum over that dimension
  // rounded down to a multiple of the tile. Not tested: the grader's
  // evidence has no inputs, a shape may be too big to multiply again.
  bool short_loop_tested = false;
  std::vector<long long> short_loop_tiles;
  std::string short_loop_dim;
  std::vector<std::string> memory;  // writes outside the buffers, inputs changed
  long long rerun_changed = -1;     // -1: not rerun; else elements that changed on a rerun
  bool rerun_reordered = false;     // CPU mode: the rerun ran the threads in another order
  std::string barrier_skip;         // CPU mode: threads returned before a __syncthreads others reached
  bool accumulates = false;         // right when the output starts at 0 (Run::check_accumulates)
  // The most values any output of this shape held when it was compared: 1 at
  // every shape of a check makes it a one-value check (a sum), whose lead
  // speaks of the value, not of elements, rows or columns.
  std::size_t values = 0;
  // A single value that is wrong: what came back, what was expected, and the
  // largest difference the tolerance accepts there.
  double got = 0, expected = 0, allowed = 0;
};

// Starts collecting for a check (the record's begin_check calls it) and stops.
void begin();
void end();
// True while a check collects: per-shape messages then leave the cause to the lead.
bool collecting();
// A rerun made to tell a race apart is not a shape of its own.
void pause(bool paused);
// Whether a wrong output's message lists its first wrong elements: once per
// check (the first shape that fails), then one line per other shape, so
// that a failing check reads in one screen. Always outside a check.
bool list_samples();

// In CPU mode, the words of simt's launch error for a store past the end of a
// kernel's shared memory (simt/src/scheduler.cpp shared_overrun): such a
// launch's advice is what simt saw, and it leads.
inline constexpr const char* kSharedOverrun = "wrote past the end of the kernel's";
// The last sentence of a race's lead: where the grader runs racecheck itself,
// its report follows in its place (grader/run/explain.h). LAB is the lab's id
// where the test process knows it (set_lab), and CPU mode, where --sanitize
// cannot run, says it is for a GPU.
inline constexpr const char* kRacecheckAdvice = " `./cudalab test LAB --sanitize=racecheck` names the line";
// The advice as this process says it: " On a GPU, `./cudalab test 03_tiling
// --sanitize=racecheck` names the line." in CPU mode.
std::string racecheck_advice();
// The lab the running test binary checks, and whether it runs in CPU mode
// (the test main sets them; the grader judging evidence leaves them).
void set_lab(const std::string& lab_id, bool cpu_mode, Words words = {});
// In CPU mode, the words that begin simt's launch error for a __syncthreads()
// that not every thread of a block reaches (simt/src/scheduler.cpp
// barrier_not_reached): such a launch leads with that barrier, as a barrier
// that threads skipped by returning does.
inline constexpr const char* kBarrierNotReached = "a __syncthreads() that some threads never reach";

// The hooks (run.cpp, compare.cpp): each adds to the shape of its label.
void launch_failed(const std::string& label, const std::string& error, const std::string& advice,
                   bool not_implemented, Cause cause = Cause::launch_fails);
void compared(const std::string& label, const Comparison& c);
void memory(const std::string& label, const std::vector<std::string>& problems);
// An input of the launch, and whether its values hold a NaN or Inf (-1: not known).
void input(const std::string& label, const std::string& name, int holds_nan);
void rerun(const std::string& label, long long changed, bool reordered = false);
void barrier_skipped(const std::string& label, const std::string& what);
void launched(const std::string& label, const std::string& launch);
void reference_launched(const std::string& label, const std::string& launch);
// The lab's test multiplied the inputs again over `dim` rounded down to a
// multiple of each tile size it tried, and found the output exactly that
// for `tiles` (none: for no tile size).
void loop_stops_short(const std::string& label, const std::string& dim, const std::vector<long long>& tiles);
// What Run::check_accumulates found at this shape; it probes once per check
// (a whole launch each, seconds in CPU mode), as the rerun.
void accumulation_probed(const std::string& label, bool accumulates);
bool accumulation_probe_done();
bool accumulation_found();  // at some shape of the running check
// Whether a shape of the running check was rerun already: one rerun per check
// tells a race, and each costs a whole launch (seconds at 1000^3 in CPU mode).
bool rerun_done();

// The collected facts, in the order the shapes ran.
const std::vector<ShapeFacts>& facts();

// The leading diagnosis: its cause from the closed list (vocabulary.h) and
// the sentence a student reads, with the facts that decide it. Views group by
// the cause and print the text; nothing reads the cause back out of the text.
struct Lead {
  Cause cause = Cause::none;
  std::string text;  // no "Diagnosis: " prefix, no final period
};
// The leading diagnosis for these facts (no text when there is nothing to
// add: none where nothing failed, not_implemented where the launcher still
// says so, its message says what to do). Pure: unit-tested on made-up facts.
// Whether a lead of `cause` ends with a fix that a lab's words replace: the
// causes lab.toml's [diagnosis] may name (the others' words are facts: a
// launch's configuration, a value never written).
bool takes_words(Cause cause);
// `words`: the lab's (nullptr: the test process's, set_lab).
Lead diagnose(const std::vector<ShapeFacts>& facts, const Words* words = nullptr);
// Its text alone.
std::string lead(const std::vector<ShapeFacts>& facts);

// "M=17 N=33 K=9" -> {{"M",17},{"N",33},{"K",9}} (anything else is skipped).
std::vector<std::pair<std::string, long long>> parse_dims(const std::string& label);

}  // namespace cudalab::diagnosis
