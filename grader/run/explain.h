// Why a kernel is too slow, measured against the reference: a speed check
// that names an `explain` check in lab.toml gets, when it fails, one leading
// diagnosis from what CPU mode counted in that check's run, once in the
// student's access build and once in the reference's (bank conflicts per
// shared-memory request, sectors per global request, the global bytes
// requested, and each call's launch). Speed alone cannot tell an unpadded
// tile from a padded one launched with 32 x 32 threads; the counts can.
//
// The student's count comes from a process that ran the student's code: it
// changes the words of a failed check, never its verdict or points.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/time_limits.h"
#include "cudalab/vocabulary.h"

namespace cudalab {

struct CheckResult;
struct CheckSpec;
struct LabSpec;
struct RunContext;

// What CPU mode counted in one run of an `explain` check in an access build
// (the student's file instrumented), with CUDALAB_TRAFFIC=student: a check
// that names itself then makes one call at a small shape (its counting run,
// cudalab::traffic_of).
struct AccessCount {
  std::string report;  // simt's access report, JSON
  // Each call's launch, in order, from the run's notes (kCountedLaunch):
  // ("transpose(1024x1024)", "grid (32, 32, 1), block (32, 8, 1)").
  std::vector<std::pair<std::string, std::string>> launches;
  // The counting run was stopped at its time limit: the kernel did not
  // finish in CPU mode (a spinner, a wait on another block), so there is no
  // count, and the lead says so instead of guessing.
  bool timed_out = false;
};
// From a run's result (its notes) and its report. Host-only (tested).
AccessCount access_count_of(const CheckResult& run, std::string report_json);
// Runs `by` with `binary` in `ctx` (its evidence and timing cleared), the
// report written to `report` and removed after.
AccessCount count_accesses(const RunContext& ctx, const LabSpec& lab, const CheckSpec& by,
                           const std::filesystem::path& binary, const std::filesystem::path& report);
// As the grader keeps the reference's count, and back (nullopt for anything
// else or a count without accesses).
std::string access_count_json(const AccessCount& c);
std::optional<AccessCount> access_count_from_json(const std::string& text);

// The cause a slow kernel's counts name, in the order tried:
//  conflicts    a shared-memory line with >= 1 bank conflict per request,
//               where the reference has < 1 everywhere
//  uncoalesced  a global line at >= 1.5 x its ideal sectors per request (and
//               2 sectors more), carrying >= 10% of the kernel's sectors, more
//               scattered than the reference's worst by 1.5 x
//  traffic      >= 1.5 x the reference's global bytes for the same calls
//  launch       none of those: a call both made, launched otherwise
//  matches      none of those, launched alike: the counts see no cause
// Without the reference's count only the first two are tried.
enum class SlowCause { none, conflicts, uncoalesced, traffic, launch, matches };
const char* to_string(SlowCause c);
// The closed list's cause for a slow kernel's (vocabulary.h): none and
// matches are `slow`, a kernel slower than its pass line for no cause the
// counts see.
Cause cause_of(SlowCause c);
struct SlowLead {
  SlowCause cause = SlowCause::none;
  std::string where;  // "transpose.cu:41" for conflicts and uncoalesced
  std::string text;   // no "Diagnosis: " prefix, no final period; empty for none
};
// The lead from the student's count and the reference's (nullptr: not
// available), in the lab's words (lab.toml's [explain]: the fix for each
// cause, else a general one); `gpu_launch` describes the student's timed
// launch ("grid (256, 256, 1), block (32, 32, 1)") or is empty. Host-only (tested).
SlowLead slow_lead(const AccessCount& yours, const AccessCount* reference,
                   const std::map<std::string, std::string>& words, const std::string& gpu_launch);

// "grid (G, G, G), block (B, B, B)" of the first launch in a launch trace
// (cudalab/replay.h), plus "(and N more launches)"; empty if none.
std::string describe_traced_launch(const std::string& trace_json);

// A speed check's result that measured a ratio and failed: one that an
// `explain` check may explain (a failure without a time has its own message).
bool timed_and_failed(const CheckResult& r);

// The first sentence of a message's first line: "transpose runs at 0.59x
// the speed of the padded reference kernel; this check needs 0.80x." of a
// speed check's message, without the causes it goes on to offer.
std::string first_sentence(const std::string& message);

// Whether the lab's launcher strides over the grid (its skeleton or solution
// says gridDim): only then does a hang's lead speak of grid-stride loops.
bool grid_stride_lab(const LabSpec& lab);

// Runs `by` (the speed check's `explain` check) with the lab's access build
// `access_binary` in `ctx` as a second look, the report written to `report`
// and removed after, and puts slow_lead's lead (against `reference`, the
// reference's count of the same check, or nullptr) first in r's failures as
// "Diagnosis: ...", each failure after it cut to its first sentence (the
// lab's message offers every cause; the lead names the one). Where nothing
// was recorded r is left as it was.
void explain_by_access(const RunContext& ctx, const LabSpec& lab, const CheckSpec& by,
                       const std::filesystem::path& access_binary, const AccessCount* reference,
                       const std::filesystem::path& report, const std::string& launch, CheckResult& r);
// Its host-only part (tested): `lead` (slow_lead's text; "" leaves r as it was)
// first, the failures after it cut to their first sentence.
void lead_by_access(const std::string& lead, CheckResult& r);

// A correctness check that failed on the GPU, where the GPU's evidence
// leaves the cause open: a second run that sees what the first
// could not.
//  - racecheck: the lead is a race and compute-sanitizer is installed. The
//    check again under racecheck (the harness runs only its small shapes
//    then), and the line it names goes right under the lead. Where it names
//    none and the race was a rerun's (the output changed), the check runs in
//    CPU mode too (merge_unconfirmed_race): stale shared memory also changes
//    from run to run.
//  - cpu_mode: any other lead but a failed launch (whose error and
//    configuration say it all) or "not implemented yet". The check again in
//    CPU mode, where simt sees the threads of a block that skip a
//    __syncthreads() the others reach (`return` before the tile loop, the loop
//    inside `if (row < M && col < N)`): on a GPU they only leave stale shared
//    memory, which reads as a boundary or coverage problem. Where CPU mode
//    sees that, it becomes the lead; so does a race CPU mode sees (its rerun
//    runs the threads of each block in another order) that bit the same way
//    twice on the GPU. Otherwise the GPU's lead stands. A correctness check
//    that timed out on the GPU gets this look too, with a short limit
//    (kHangLookLimit_s): a block whose threads wait at a __syncthreads() that
//    others skipped can hang there (an unseen tiled matmul with its tile
//    loads and first barrier inside `if (row < M && col < N)`, H100
//    2026-11-25), where simt names the barrier and finishes. Where CPU mode
//    does not finish either, nothing was seen of a barrier: the loop that
//    never ends leads.
enum class SecondOpinion { none, racecheck, cpu_mode };
// Which one a failed check's result calls for. Host-only (tested).
SecondOpinion second_opinion_for(const CheckResult& r, bool have_racecheck);
// The merges, host-only (tested): racecheck's result `s` (its first failure
// is the sanitizer's report) under r's lead; CPU mode's result `cpu` whose
// lead, where it is the skipped barrier or a race, replaces r's. True if r changed.
bool merge_racecheck(const CheckResult& s, CheckResult& r);
// A hang's lead speaks of grid-stride loops only with `grid_stride`
// (grid_stride_lab). A lead for a hang takes kHangCauses out of r.
bool merge_cpu_mode(const CheckResult& cpu, CheckResult& r, bool grid_stride = false);
// A race that only a rerun saw (the output changed) and racecheck did not:
// r's lead is the race and no racecheck report follows it. Reading shared
// memory that no thread wrote changes the output from run to run too (an
// unseen transpose whose store's bounds check is not swapped, H100
// 2026-11-25: "a race" on one run of two), and CPU mode, where such memory
// holds NaN, tells the two apart. Host-only (tested).
bool race_unconfirmed(const CheckResult& r);
// CPU mode's result `cpu` for an unconfirmed race: its skipped barrier, or
// its shared memory that no thread filled, replaces the race; otherwise a line
// under the race says racecheck found none and what else changes an output
// from run to run. True if r changed. Host-only (tested).
bool merge_unconfirmed_race(const CheckResult& cpu, CheckResult& r);
// A correctness check that ran out of time in CPU mode itself (no GPU, or a
// course with cpu_mode): simt names a barrier that some threads skip rather
// than wait at it for ever, so the loop leads. True if r changed. Host-only (tested).
bool lead_hang_in_cpu_mode(CheckResult& r, bool grid_stride);
// A correctness check that timed out on the GPU and was spared its CPU-mode
// look because `hung`, another check of its lab, hung in CPU mode too: the
// loop leads, saying so. True if r changed. Host-only (tested).
bool lead_hang_like(const std::string& hung, CheckResult& r, bool grid_stride);
// Runs the second opinion `kind` of `check` in `ctx` (its evidence and timing
// fields cleared; for CPU mode its binary replaced by what `cpu_binary`
// returns, built on demand: "" where it cannot be) and merges it into r; an
// unconfirmed race after racecheck gets CPU mode's look as well. True when
// that run itself did not finish (a hung check's CPU-mode look): the caller
// may spare the lab's other hung checks theirs.
bool second_opinion(const RunContext& ctx, const LabSpec& lab, const CheckSpec& check, SecondOpinion kind,
                    const std::function<std::filesystem::path()>& cpu_binary, CheckResult& r);

}  // namespace cudalab
