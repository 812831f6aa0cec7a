#include "cudalab/vocabulary.h"

#include <array>
#include <utility>

namespace cudalab {

namespace {

// One table per enum: the spelling of each value, in declaration order.
template <typename E, std::size_t N>
using Table = std::array<std::pair<E, std::string_view>, N>;

constexpr Table<Verdict, 8> kVerdicts{{
    {Verdict::pass, "pass"},
    {Verdict::fail, "fail"},
    {Verdict::not_run, "not_run"},
    {Verdict::skipped, "skipped"},
    {Verdict::timeout, "timeout"},
    {Verdict::crash, "crash"},
    {Verdict::error, "error"},
    {Verdict::running, "running"},
}};

constexpr Table<CheckKind, 2> kCheckKinds{{
    {CheckKind::correctness, "correctness"},
    {CheckKind::speed, "speed"},
}};

constexpr Table<LabStatus, 5> kLabStatuses{{
    {LabStatus::graded, "graded"},
    {LabStatus::missing, "missing"},
    {LabStatus::build_failed, "build_failed"},
    {LabStatus::rejected, "rejected"},
    {LabStatus::not_run, "not_run"},
}};

// Each cause with its id (grade.json, lab.toml's [diagnosis] keys) and its
// title (the class view's groups, the handouts' tables): one row per cause,
// so that a cause cannot have one without the other.
struct CauseWords {
  Cause cause;
  std::string_view id, title;
};
constexpr std::array<CauseWords, 46> kCauses{{
    {Cause::none, "none", "no diagnosis"},
    {Cause::not_implemented, "not_implemented", "not implemented yet"},
    {Cause::launch_fails, "launch_fails", "the launch fails"},
    {Cause::empty_grid, "empty_grid", "a grid dimension of 0"},
    {Cause::block_too_large, "block_too_large", "a block too large to launch"},
    {Cause::illegal_address, "illegal_address", "an illegal address"},
    {Cause::hang, "hang", "a loop that never ends"},
    {Cause::timeout, "timeout", "ran past its time limit"},
    {Cause::crash, "crash", "the test process crashed"},
    {Cause::race, "race", "a race between threads"},
    {Cause::barrier_skipped, "barrier_skipped", "a __syncthreads() that some threads never reach"},
    {Cause::unwritten_shared, "unwritten_shared", "reads shared memory that no thread wrote"},
    {Cause::shared_overrun, "shared_overrun", "an access past a __shared__ array"},
    {Cause::grid_short, "grid_short", "the grid does not cover the output"},
    {Cause::off_by_one_store, "off_by_one_store", "an off-by-one before the store"},
    {Cause::index_misses_end, "index_misses_end", "the index never reaches the end of the output"},
    {Cause::block_left_out, "block_left_out", "the index leaves out the block"},
    {Cause::rows_skipped, "rows_skipped", "whole rows or columns never written"},
    {Cause::misplaced_stores, "misplaced_stores", "stores land in the wrong places"},
    {Cause::dims_mixed_up, "dims_mixed_up", "dimensions mixed up in an index"},
    {Cause::transposed, "transposed", "the output holds the transpose"},
    {Cause::index_arithmetic, "index_arithmetic", "the index arithmetic"},
    {Cause::boundary_checks, "boundary_checks", "the boundary checks"},
    {Cause::loop_stops_short, "loop_stops_short", "a loop that stops before its last, partial tile"},
    {Cause::reads_past_end, "reads_past_end", "a load past the end of an input"},
    {Cause::edge_threads_store, "edge_threads_store", "threads past the edge store"},
    {Cause::writes_outside, "writes_outside", "writes outside the buffers"},
    {Cause::writes_input, "writes_input", "the kernel writes into its inputs"},
    {Cause::input_end, "input_end", "the end of the input is lost"},
    {Cause::never_written, "never_written", "the output is never written"},
    {Cause::scattered_unwritten, "scattered_unwritten", "elements never written here and there"},
    {Cause::stores_zero, "stores_zero", "0 stored instead of the result"},
    {Cause::accumulates, "accumulates", "adds to the output instead of storing"},
    {Cause::one_tile_only, "one_tile_only", "only one tile's worth counts"},
    {Cause::one_block_only, "one_block_only", "only one block's result counts"},
    {Cause::stores_per_block, "stores_per_block", "a slot per block past a one-value output"},
    {Cause::large_shapes_only, "large_shapes_only", "only the larger shapes are wrong"},
    {Cause::wrong_values, "wrong_values", "a few values wrong"},
    {Cause::replay_differs, "replay_differs", "wrong when the grader replays the launches"},
    {Cause::sanitizer_report, "sanitizer_report", "compute-sanitizer reports an error"},
    {Cause::slow_conflicts, "slow_conflicts", "shared-memory bank conflicts"},
    {Cause::slow_uncoalesced, "slow_uncoalesced", "uncoalesced global accesses"},
    {Cause::slow_traffic, "slow_traffic", "more global memory traffic than needed"},
    {Cause::slow_launch, "slow_launch", "the launch configuration"},
    {Cause::slow, "slow", "slower than the pass line"},
    {Cause::unrecorded, "unrecorded", "cause not recorded (graded by an older cudalab)"},
}};

// In declaration order, every value once: the row of a cause is its value.
constexpr bool in_order() {
  for (std::size_t i = 0; i < kCauses.size(); ++i)
    if (static_cast<std::size_t>(kCauses[i].cause) != i) return false;
  return true;
}
static_assert(in_order(), "kCauses must list every Cause once, in the order vocabulary.h declares them");

template <typename E, std::size_t N>
std::string_view spell(const Table<E, N>& table, E value) {
  for (const auto& [e, s] : table)
    if (e == value) return s;
  return "?";
}

template <typename E, std::size_t N>
std::optional<E> parse(const Table<E, N>& table, std::string_view text) {
  for (const auto& [e, s] : table)
    if (s == text) return e;
  return std::nullopt;
}

template <typename E, std::size_t N>
std::string all(const Table<E, N>& table) {
  std::string out;
  for (const auto& [e, s] : table) {
    if (!out.empty()) out += ", ";
    out += s;
  }
  return out;
}

}  // namespace

std::string_view spelling(Verdict v) {
  return spell(kVerdicts, v);
}
std::string_view spelling(CheckKind k) {
  return spell(kCheckKinds, k);
}
std::string_view spelling(LabStatus s) {
  return spell(kLabStatuses, s);
}

std::string_view spelling(Cause c) {
  const auto i = static_cast<std::size_t>(c);
  return i < kCauses.size() ? kCauses[i].id : "?";
}
std::string_view title(Cause c) {
  const auto i = static_cast<std::size_t>(c);
  return i < kCauses.size() ? kCauses[i].title : "?";
}

std::optional<Verdict> parse_verdict(std::string_view s) {
  return parse(kVerdicts, s);
}
std::optional<CheckKind> parse_check_kind(std::string_view s) {
  return parse(kCheckKinds, s);
}
std::optional<LabStatus> parse_lab_status(std::string_view s) {
  return parse(kLabStatuses, s);
}

std::optional<Cause> parse_cause(std::string_view s) {
  for (const auto& w : kCauses)
    if (w.id == s) return w.cause;
  return std::nullopt;
}

std::string spellings_of_verdicts() {
  return all(kVerdicts);
}
std::string spellings_of_check_kinds() {
  return all(kCheckKinds);
}
std::string spellings_of_lab_statuses() {
  return all(kLabStatuses);
}
std::string spellings_of_causes() {
  std::string out;
  for (const auto& w : kCauses) out += (out.empty() ? "" : ", ") + std::string(w.id);
  return out;
}

}  // namespace cudalab
