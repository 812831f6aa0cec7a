// cudalab/vocabulary.h: the words every part of cudalab shares, as types.
//
// A check's verdict, a check's kind and a lab's status are enums here, each
// with the one spelling that files (lab.toml, the record a test binary
// writes, grade.json) and people see. Code compares enums; only the functions
// below turn them into text and back, so a misspelt "not-run" is an error at
// the border, not a silent mismatch deep inside the grader.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace cudalab {

// What became of one check.
enum class Verdict {
  pass,
  fail,
  not_run,  // did not run in this mode (speed checks in CPU mode)
  skipped,  // the test binary found no GPU
  timeout,  // past its time limit
  crash,    // the process died (a signal, an exit without a verdict)
  error,    // no verdict: the test binary or its record misbehaved
  running,  // only inside a record, while the check runs: never a grade's
};

// A check of a lab: correctness (outputs judged against the reference) or
// speed (a ratio against a baseline, counted only where correctness passed).
enum class CheckKind { correctness, speed };

// What became of one lab of a submission.
enum class LabStatus {
  graded,
  missing,       // a student file is missing
  build_failed,  // it did not compile or link
  rejected,      // a forbidden call, symbol or include
  not_run,       // nothing could run its checks (no GPU and no CPU mode)
};

// Why a check failed: the closed list of causes a diagnosis names, one per
// failing check (its "Diagnosis:" line). The harness's diagnosis
// (cudalab/diagnosis.h) picks a correctness cause from a check's evidence;
// the grader's second looks and speed explanations (grader/run/explain.h) name
// the others. Views group and count by it; the words a student reads are the
// diagnosis's own text. `none`: no diagnosis (a check that passed, or one
// whose message says what to do, or a grade written before causes were kept).
enum class Cause {
  none,
  // The launch and the process.
  not_implemented,  // the launcher still throws "not implemented"
  launch_fails,     // a launch error none of the next three names
  empty_grid,       // a grid dimension of 0 (floor division for a size below the block)
  block_too_large,  // a block no GPU launches (more than 1024 threads, 64 deep, or 0)
  illegal_address,  // an access far outside the buffers stopped the kernel
  hang,             // a loop that never ends (a check past its time limit, explained)
  timeout,          // past its time limit, nothing seen of why
  crash,            // the test process died
  // Threads and barriers.
  race,              // different results on the same inputs
  barrier_skipped,   // a __syncthreads() that some threads never reach
  unwritten_shared,  // computed from shared memory that no thread wrote
  shared_overrun,    // a load or store past a __shared__ array
  // Which threads run, and where they store.
  grid_short,        // the grid does not cover the output
  off_by_one_store,  // a condition that stops the last thread(s) before the store
  index_misses_end,  // threads ran for the end of the output, their index never reaches it
  block_left_out,    // every block stores into the same elements
  rows_skipped,      // whole rows or columns between right ones never written
  misplaced_stores,  // stores land in other elements' places
  dims_mixed_up,     // right only where two dimensions are equal
  transposed,        // the output holds the transpose
  index_arithmetic,  // most elements wrong, the same on a rerun
  // The edges of the data.
  boundary_checks,     // wrong only where a dimension is not a multiple of the tile
  loop_stops_short,    // a loop over K that stops before its last, partial tile
  reads_past_end,      // NaN from the guard zones: a load without its bound
  edge_threads_store,  // threads past the edge store into the output's neighbours
  writes_outside,      // writes outside the buffers
  writes_input,        // the kernel writes into its inputs
  input_end,           // a one-value result wrong except at multiples of the block
  // What is stored.
  never_written,        // no element of the output is written
  scattered_unwritten,  // elements never written here and there
  stores_zero,          // 0 stored instead of the result
  accumulates,          // added to the output instead of stored
  one_tile_only,        // only one tile's worth counts
  one_block_only,       // only one block's sum reaches a one-value output
  stores_per_block,     // a slot per block past a one-value output
  large_shapes_only,    // only the larger shapes are wrong
  wrong_values,         // a few values wrong, no pattern that names more
  replay_differs,       // right in the student's run, wrong when the grader replays the launches
  sanitizer_report,     // right, but compute-sanitizer (the grader's --sanitize) reports an error
  // A slow kernel, counted against the reference (grader/run/explain.h).
  slow_conflicts,    // shared-memory bank conflicts
  slow_uncoalesced,  // scattered global accesses
  slow_traffic,      // more global memory traffic than the reference
  slow_launch,       // launched otherwise than the reference
  slow,              // slower than the pass line, no cause the counts see
  // A grade written before causes were kept (cudalab-grade/1).
  unrecorded,
};

std::string_view spelling(Verdict v);
std::string_view spelling(CheckKind k);
std::string_view spelling(LabStatus s);
std::string_view spelling(Cause c);
// A cause in a few words, for a class view's heading ("a race between
// threads"); the diagnosis's own text says the rest.
std::string_view title(Cause c);

// The enum a spelling names; nullopt for anything else.
std::optional<Verdict> parse_verdict(std::string_view s);
std::optional<CheckKind> parse_check_kind(std::string_view s);
std::optional<LabStatus> parse_lab_status(std::string_view s);
std::optional<Cause> parse_cause(std::string_view s);

// Every spelling of an enum, comma-separated in declaration order: for
// messages that list what is allowed.
std::string spellings_of_verdicts();
std::string spellings_of_check_kinds();
std::string spellings_of_lab_statuses();
std::string spellings_of_causes();

// The record a lab's test binary writes for the grader (cudalab/record.h):
// its `format` field. The grader refuses a record of any other format.
inline constexpr std::string_view kRecordFormat = "cudalab-record/1";

// A note of a run that counts accesses (cudalab::traffic_of): each launch of
// the harness's calls (cudalab::Run), as "counted launch
// transpose(1024x1024): transpose_kernel<<<grid (32, 32, 1), block (32, 8,
// 1)>>>". A slow kernel's diagnosis (grader/run/explain.h) holds the student's
// launches against the reference's, call for call.
inline constexpr const char* kCountedLaunch = "counted launch ";

}  // namespace cudalab
