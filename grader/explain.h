// Why a kernel is too slow, from what CPU mode counted: a speed
// check that names an `explain` correctness check in lab.toml gets, when it
// fails, one leading diagnosis built from simt's access report of that check
// (bank conflicts per shared-memory request, sectors per global request) and
// the student's launch. Speed alone cannot tell an unpadded tile from a
// padded one launched with 32 x 32 threads; the counts can.
#pragma once

#include <filesystem>
#include <functional>
#include <string>

#include "time_limits.h"

namespace cudalab {

// The lead (no "Diagnosis: " prefix, no final period) from an access report
// in simt's JSON form; `launch` describes the student's launch ("grid (256,
// 256, 1), block (32, 32, 1)") or is empty. Empty when the report holds no
// accesses or cannot be read.
std::string access_lead(const std::string& report_json, const std::string& launch);

// "grid (G, G, G), block (B, B, B)" of the first launch in a launch trace
// (cudalab/replay.h), plus "(and N more launches)"; empty if none.
std::string describe_traced_launch(const std::string& trace_json);

struct CheckResult;
struct CheckSpec;
struct LabSpec;
struct RunContext;

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
// `access_binary` in the context `ctx` (its binary, evidence and timing
// fields are replaced), the report written to `report` and removed after,
// and puts access_lead's lead first in r's failures as "Diagnosis: ...",
// each failure after it cut to its first sentence (the lab's message offers
// every cause; the lead names the one). Where nothing was recorded r is left
// as it was.
void explain_by_access(const RunContext& ctx, const LabSpec& lab, const CheckSpec& by,
                       const std::filesystem::path& access_binary, const std::filesystem::path& report,
                       const std::string& launch, CheckResult& r);
// Its host-only part (tested): `lead` (access_lead's; "" leaves r as it was)
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
