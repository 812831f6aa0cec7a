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

constexpr Table<Cause, 46> kCauses{{
    {Cause::none, "none"},
    {Cause::not_implemented, "not_implemented"},
    {Cause::launch_fails, "launch_fails"},
    {Cause::empty_grid, "empty_grid"},
    {Cause::block_too_large, "block_too_large"},
    {Cause::illegal_address, "illegal_address"},
    {Cause::hang, "hang"},
    {Cause::timeout, "timeout"},
    {Cause::crash, "crash"},
    {Cause::race, "race"},
    {Cause::barrier_skipped, "barrier_skipped"},
    {Cause::unwritten_shared, "unwritten_shared"},
    {Cause::shared_overrun, "shared_overrun"},
    {Cause::grid_short, "grid_short"},
    {Cause::off_by_one_store, "off_by_one_store"},
    {Cause::index_misses_end, "index_misses_end"},
    {Cause::block_left_out, "block_left_out"},
    {Cause::rows_skipped, "rows_skipped"},
    {Cause::misplaced_stores, "misplaced_stores"},
    {Cause::dims_mixed_up, "dims_mixed_up"},
    {Cause::transposed, "transposed"},
    {Cause::index_arithmetic, "index_arithmetic"},
    {Cause::boundary_checks, "boundary_checks"},
    {Cause::loop_stops_short, "loop_stops_short"},
    {Cause::reads_past_end, "reads_past_end"},
    {Cause::edge_threads_store, "edge_threads_store"},
    {Cause::writes_outside, "writes_outside"},
    {Cause::writes_input, "writes_input"},
    {Cause::input_end, "input_end"},
    {Cause::never_written, "never_written"},
    {Cause::scattered_unwritten, "scattered_unwritten"},
    {Cause::stores_zero, "stores_zero"},
    {Cause::accumulates, "accumulates"},
    {Cause::one_tile_only, "one_tile_only"},
    {Cause::one_block_only, "one_block_only"},
    {Cause::stores_per_block, "stores_per_block"},
    {Cause::large_shapes_only, "large_shapes_only"},
    {Cause::wrong_values, "wrong_values"},
    {Cause::replay_differs, "replay_differs"},
    {Cause::sanitizer_report, "sanitizer_report"},
    {Cause::slow_conflicts, "slow_conflicts"},
    {Cause::slow_uncoalesced, "slow_uncoalesced"},
    {Cause::slow_traffic, "slow_traffic"},
    {Cause::slow_launch, "slow_launch"},
    {Cause::slow, "slow"},
    {Cause::unrecorded, "unrecorded"},
}};

constexpr Table<Cause, 46> kCauseTitles{{
    {Cause::none, "no diagnosis"},
    {Cause::not_implemented, "not implemented yet"},
    {Cause::launch_fails, "the launch fails"},
    {Cause::empty_grid, "a grid dimension of 0"},
    {Cause::block_too_large, "a block too large to launch"},
    {Cause::illegal_address, "an illegal address"},
    {Cause::hang, "a loop that never ends"},
    {Cause::timeout, "ran past its time limit"},
    {Cause::crash, "the test process crashed"},
    {Cause::race, "a race between threads"},
    {Cause::barrier_skipped, "a __syncthreads() that some threads never reach"},
    {Cause::unwritten_shared, "reads shared memory that no thread wrote"},
    {Cause::shared_overrun, "an access past a __shared__ array"},
    {Cause::grid_short, "the grid does not cover the output"},
    {Cause::off_by_one_store, "an off-by-one before the store"},
    {Cause::index_misses_end, "the index never reaches the end of the output"},
    {Cause::block_left_out, "the index leaves out the block"},
    {Cause::rows_skipped, "whole rows or columns never written"},
    {Cause::misplaced_stores, "stores land in the wrong places"},
    {Cause::dims_mixed_up, "dimensions mixed up in an index"},
    {Cause::transposed, "the output holds the transpose"},
    {Cause::index_arithmetic, "the index arithmetic"},
    {Cause::boundary_checks, "the boundary checks"},
    {Cause::loop_stops_short, "a loop that stops before its last, partial tile"},
    {Cause::reads_past_end, "a load past the end of an input"},
    {Cause::edge_threads_store, "threads past the edge store"},
    {Cause::writes_outside, "writes outside the buffers"},
    {Cause::writes_input, "the kernel writes into its inputs"},
    {Cause::input_end, "the end of the input is lost"},
    {Cause::never_written, "the output is never written"},
    {Cause::scattered_unwritten, "elements never written here and there"},
    {Cause::stores_zero, "0 stored instead of the result"},
    {Cause::accumulates, "adds to the output instead of storing"},
    {Cause::one_tile_only, "only one tile's worth counts"},
    {Cause::one_block_only, "only one block's result counts"},
    {Cause::stores_per_block, "a slot per block past a one-value output"},
    {Cause::large_shapes_only, "only the larger shapes are wrong"},
    {Cause::wrong_values, "a few values wrong"},
    {Cause::replay_differs, "wrong when the grader replays the launches"},
    {Cause::sanitizer_report, "compute-sanitizer reports an error"},
    {Cause::slow_conflicts, "shared-memory bank conflicts"},
    {Cause::slow_uncoalesced, "uncoalesced global accesses"},
    {Cause::slow_traffic, "more global memory traffic than needed"},
    {Cause::slow_launch, "the launch configuration"},
    {Cause::slow, "slower than the pass line"},
    {Cause::unrecorded, "cause not recorded (graded by an older cudalab)"},
}};

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
  return spell(kCauses, c);
}
std::string_view title(Cause c) {
  return spell(kCauseTitles, c);
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
  return parse(kCauses, s);
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
  return all(kCauses);
}

}  // namespace cudalab
