// One-value checks (a sum, a maximum): the output is a single value, and the
// lead speaks of it, never of elements, rows or columns. What tells the
// shapes apart is the value (how far off, by what), the launch's grid, and
// whether a rerun gives the same.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "diagnosis_rules.h"

namespace cudalab::diagnosis::detail {

namespace {

// "out = 12.5, expected 14.1" (or "out is never written") of a wrong value.
std::string value_fact(const ShapeFacts& f) {
  if (f.unwritten) return fmt::format("{} is never written (it holds the NaN it was filled with)", f.output);
  return fmt::format("{} = {:.6g}, expected {:.6g}", f.output, f.got, f.expected);
}

// The blocks of a shape's launch (grid x * y * z); 0 where none was seen.
long long grid_blocks(const ShapeFacts& f) {
  const auto at = f.launch.rfind("grid (");
  long long x = 0, y = 0, z = 0;
  if (at == std::string::npos ||
      std::sscanf(f.launch.c_str() + at, "grid (%lld, %lld, %lld", &x, &y, &z) != 3)
    return 0;
  return x * y * z;
}

// Where the NaN came from, as its bits tell in CPU mode.
std::string nan_evidence(const ShapeFacts& f) {
  return f.guard_nan > 0 ? " (in CPU mode its bits are those of the NaN the checks put past the end of every "
                           "buffer)"
                         : " (the checks put NaN past the end of every buffer)";
}

// The shapes' first dimension ("n") split by a modulus m: right on every
// shape where it is a multiple of m, wrong on every other. m is tried at the
// block's size and at two and four times it (two or four loads per thread);
// 0 where none splits them.
long long dividing_length(const std::vector<ShapeFacts>& facts) {
  long long side = 0;
  for (const auto& f : facts) side = std::max(side, block_side(f));
  if (side <= 1) return 0;
  for (long long m : {side, 2 * side, 4 * side}) {
    bool split = true, any_multiple = false, any_other = false;
    for (const auto& f : facts) {
      if (f.dims.empty() || f.launch_failed) return 0;
      const bool multiple = f.dims.front().second % m == 0;
      if (multiple == failed(f)) split = false;
      (multiple ? any_multiple : any_other) = true;
    }
    if (split && any_multiple && any_other) return m;
  }
  return 0;
}

// ", nor at the 2 other failing sizes"
std::string others(const std::vector<const ShapeFacts*>& bad, const char* lead_in) {
  return bad.size() > 1 ? fmt::format("{} the {} other failing size{}", lead_in, bad.size() - 1,
                                      bad.size() > 2 ? "s" : "")
                        : std::string();
}

// Whether at every failing shape the value was compared wrong, with `pred`.
template <class Pred>
bool all_wrong(const std::vector<const ShapeFacts*>& bad, Pred pred) {
  for (const auto* f : bad)
    if (f->launch_failed || f->values_ok || !pred(*f)) return false;
  return true;
}

// The example: the first failing shape whose value was compared wrong.
const ShapeFacts* first_wrong(const std::vector<const ShapeFacts*>& bad) {
  for (const auto* f : bad)
    if (!f->launch_failed && !f->values_ok) return f;
  return nullptr;
}

// A rule that speaks of the value: of `ex`, the first failing shape whose
// value was compared wrong.
using ValueRule = std::optional<Lead> (*)(const Shapes&, const ShapeFacts& ex);

std::optional<Lead> launch_fails(const Shapes& s) {
  for (const auto* f : s.bad)
    if (f->launch_failed) return Lead{f->launch_cause, launch_failure(*f)};
  return std::nullopt;
}

// Right only when out starts at 0: added to, never set.
std::optional<Lead> added_to_not_set(const Shapes& s) {
  for (const auto* f : s.bad)
    if (f->accumulates)
      return Lead{
          Cause::accumulates,
          fmt::format(
              "{0} is right only when it starts at 0: at {1} {0} came back {2}, and the same launch with {0} "
              "set "
              "to 0 gives the right value. The kernel adds to what {0} held (atomicAdd(out, ...) or `{0} += "
              "...`) and nothing sets it first; the checks fill {0} with NaN before a launch, as memory from "
              "cudaMalloc may hold anything. {3}",
              f->output, args_of(*f), f->unwritten ? "as it was (NaN plus anything is NaN)" : "NaN",
              fix(Cause::accumulates,
                  "Set it to 0 in a kernel launched before the one that adds to it (not with cudaMemset: the "
                  "speed checks replay only your kernels)"))};
  return std::nullopt;
}

// Threads that skip a barrier the rest of their block reaches (CPU mode).
std::optional<Lead> barrier_skipped_by_some(const Shapes& s) {
  for (const auto* f : s.bad)
    if (!f->barrier_skip.empty() && !f->values_ok)
      return Lead{
          Cause::barrier_skipped,
          fmt::format(
              "a __syncthreads() that some threads never reach: at {}, {}. Those threads skipped the barrier "
              "inside an `if` (`if (threadIdx.x < s) {{ ...; __syncthreads(); }}`) or returned early, so the "
              "block's threads no longer wait for each other there and some read shared memory that is not "
              "written yet. Every thread of a block must reach every __syncthreads(): {}",
              args_of(*f), f->barrier_skip,
              fix(Cause::barrier_skipped, "keep it out of any `if` that depends on the thread's index"))};
  return std::nullopt;
}

// Right values, but writes outside the buffers or inputs changed.
Lead right_but_writes_outside(const Shapes& s) {
  const ShapeFacts& ex = *s.bad.front();
  return {Cause::writes_outside,
          fmt::format("{} is right, but at {} {}. {} is one value: only it may be written (an index like "
                      "{}[blockIdx.x] stores past it), and the inputs are read-only",
                      ex.output.empty() ? "the value" : ex.output, args_of(ex), ex.memory.front(),
                      ex.output.empty() ? "The output" : ex.output, ex.output.empty() ? "out" : ex.output)};
}

// Never written (or NaN) wherever it is wrong.
std::optional<Lead> never_set(const Shapes& s, const ShapeFacts& ex) {
  if (!all_wrong(s.bad, [](const ShapeFacts& f) { return f.unwritten > 0; })) return std::nullopt;
  return Lead{
      Cause::never_written,
      fmt::format(
          "{0} is never written at {1}{2}: it still holds the NaN it was filled with before the launch{3}. "
          "Either no thread stores into {0} (a condition no thread meets, or the store left out), or what "
          "is "
          "stored was computed from a NaN: shared memory that no thread filled (a step that reads past "
          "what "
          "the threads stored, or before they stored it)",
          ex.output, args_of(ex), others(s.bad, ", nor at"),
          ex.launch.empty() ? "" : fmt::format(", though the kernel ran (your launch: {})", ex.launch))};
}

// Different values on the same inputs.
std::optional<Lead> changes_on_rerun(const Shapes& s, const ShapeFacts&) {
  for (const auto* f : s.bad)
    if (f->rerun_changed > 0)
      return Lead{
          Cause::race,
          fmt::format(
              "a race: at {} the value changed when the same inputs ran again{}; the first time {}. {}",
              args_of(*f),
              f->rerun_reordered ? " (the second time with the threads of each block in another order)" : "",
              value_fact(*f),
              fix(Cause::race,
                  fmt::format(
                      "The threads read shared memory before the others have written it (a __syncthreads() "
                      "missing after the loads or between the steps of the tree), or blocks update {} "
                      "without atomicAdd, so that the sums of blocks that read it at the same time are lost",
                      f->output)))};
  return std::nullopt;
}

// Wrong, and stores past the one value: a slot per block or thread.
std::optional<Lead> stores_past_value(const Shapes& s, const ShapeFacts& ex) {
  if (!all_wrong(s.bad, [](const ShapeFacts& f) {
        return !f.memory.empty() && f.memory.front().rfind("wrote ", 0) == 0;
      }))
    return std::nullopt;
  const std::string& m = ex.memory.front();
  return Lead{
      Cause::stores_per_block,
      fmt::format("stores past {0}: at {1} the kernel {2}, and {3}. {4}", ex.output, args_of(ex),
                  m.substr(0, m.find(')') + 1), value_fact(ex),
                  fix(Cause::stores_per_block,
                      fmt::format("{0} holds one value: each block must add its partial result to it (one "
                                  "thread of each block, with atomicAdd), not store it in a slot of its own "
                                  "({0}[blockIdx.x])",
                                  ex.output)))};
}

// NaN where the input holds none: loads outside the input.
std::optional<Lead> nan_read_past_end(const Shapes& s, const ShapeFacts& ex) {
  if (!all_wrong(s.bad, [](const ShapeFacts& f) { return !f.unwritten && read_nan(f); })) return std::nullopt;
  return Lead{
      Cause::reads_past_end,
      fmt::format(
          "loads outside the input: at {} {} is NaN{}{}, so a load read past the end of {} (or before its "
          "start){}. {}",
          args_of(ex), ex.output, though_inputs_hold_none(ex), nan_evidence(ex), inputs_or(ex),
          others(s.bad, "; likewise at"),
          fix(Cause::reads_past_end,
              "Threads whose index lies past the end must add nothing: check the bound of every load (`i < "
              "n`), "
              "a second load at i + blockDim.x included"))};
}

// NaN computed from shared memory no thread wrote (CPU mode's fill).
std::optional<Lead> nan_from_unwritten_shared(const Shapes& s, const ShapeFacts& ex) {
  if (!all_wrong(s.bad, [](const ShapeFacts& f) { return !f.unwritten && f.shared_nan > 0; }))
    return std::nullopt;
  return Lead{
      Cause::unwritten_shared,
      fmt::format(
          "{0} is NaN at {1}{2}, computed from shared memory that no thread wrote (CPU mode fills shared "
          "memory "
          "with a NaN of its own before each block, and {0} holds that NaN, not the one it was filled "
          "with: "
          "it was written). {3}",
          ex.output, args_of(ex), others(s.bad, ", and at"),
          fix(Cause::unwritten_shared,
              "A step of the tree reads a slot past what the threads stored, or before they stored it: "
              "check the "
              "loop's bounds and the __syncthreads() between its steps"))};
}

// 0 wherever it is wrong: a result never stored, or cleared after.
std::optional<Lead> zero_where_wrong(const Shapes& s, const ShapeFacts& ex) {
  if (!all_wrong(s.bad, [](const ShapeFacts& f) { return f.unwritten == 0 && f.got == 0; }))
    return std::nullopt;
  return Lead{
      Cause::stores_zero,
      fmt::format(
          "{0} is 0 at {1}{2} (expected {3:.6g} there): the result is never stored into {0}, or {0} is set "
          "to "
          "0 "
          "after it is (the kernel that sets {0} to 0 must run before the one that adds to it, both on the "
          "same stream)",
          ex.output, args_of(ex), others(s.bad, ", and at"), ex.expected)};
}

// Right where the grid has one block, wrong where it has several.
std::optional<Lead> one_block_counts(const Shapes& s, const ShapeFacts& ex) {
  bool split = true, one = false, several = false;
  for (const auto& f : s.all) {
    const long long blocks = grid_blocks(f);
    if (blocks <= 0 || f.launch_failed) {
      split = false;
      break;
    }
    if ((blocks == 1) == failed(f)) split = false;
    (blocks == 1 ? one : several) = true;
  }
  if (!(split && one && several)) return std::nullopt;
  return Lead{
      Cause::one_block_only,
      fmt::format(
          "only one block's sum reaches {0}: right wherever the grid has one block ({1}), wrong wherever "
          "it "
          "has several (at {2}, {3}; your launch: {4}). {5}",
          ex.output, right_examples(s.good), args_of(ex), value_fact(ex), ex.launch,
          fix(Cause::one_block_only,
              fmt::format("Every block must add its partial result to {}, one thread of each block with "
                          "atomicAdd: not a store (the last block's wins), nor a condition that lets "
                          "only block 0 "
                          "add",
                          ex.output)))};
}

// Right where n is a multiple of the block (or of two or four blocks).
std::optional<Lead> input_end_lost(const Shapes& s, const ShapeFacts& ex) {
  const long long m = dividing_length(s.all);
  if (!m || s.good.empty()) return std::nullopt;
  return Lead{
      Cause::input_end,
      fmt::format(
          "the end of the input: right on every length that is a multiple of {0} ({1}), wrong on every "
          "other (at {2}, {3}). The values past the last multiple of {0} are lost or counted wrong: check "
          "that the grid covers the whole input (ceiling division) and the bound of every load (`i < n`, a "
          "second load at i + blockDim.x included)",
          m, right_examples(s.good), args_of(ex), value_fact(ex))};
}

// Only the larger shapes fail.
std::optional<Lead> larger_lengths_only(const Shapes& s, const ShapeFacts& ex) {
  if (s.good.empty() || ex.dims.empty()) return std::nullopt;
  long long largest_good = 0, smallest_bad = -1;
  for (const auto* g : s.good)
    if (!g->dims.empty()) largest_good = std::max(largest_good, g->dims.front().second);
  for (const auto* f : s.bad)
    if (!f->dims.empty() && (smallest_bad < 0 || f->dims.front().second < smallest_bad))
      smallest_bad = f->dims.front().second;
  if (!(largest_good > 1 && smallest_bad > largest_good)) return std::nullopt;
  return Lead{
      Cause::large_shapes_only,
      fmt::format(
          "only the larger lengths are wrong (from {} up; every smaller one is right; at {}, {}): a race "
          "that "
          "needs many blocks at once to show (blocks adding to {} without atomicAdd), or an index "
          "computed "
          "in "
          "int that overflows",
          args_of(*s.bad.front()), args_of(ex), value_fact(ex), ex.output)};
}

// How far off the value is, and what to check.
Lead wrong_value(const Shapes& s, const ShapeFacts& ex) {
  const bool off = !ex.unwritten && std::isfinite(ex.got);
  return {
      Cause::wrong_values,
      fmt::format(
          "{} at {}{}{}. {} is one value computed from many: {}", value_fact(ex), args_of(ex),
          off ? fmt::format(": {:.3g} too {} (the tolerance at this length is {:.2g})",
                            std::fabs(ex.got - ex.expected), ex.got < ex.expected ? "small" : "large",
                            ex.allowed)
              : std::string(),
          others(s.bad, "; wrong too at"), ex.output,
          fix(Cause::wrong_values,
              fmt::format(
                  "check that every input value is added exactly once (the start and step of the loop over "
                  "the input, the bound of every load), that the threads of a block wait for each other "
                  "(__syncthreads) before they read what others wrote, and that every block's partial "
                  "result reaches {} (atomicAdd)",
                  ex.output)))};
}

}  // namespace

bool single_value_check(const std::vector<ShapeFacts>& facts) {
  bool any = false;
  for (const auto& f : facts) {
    if (!f.compared) continue;
    if (f.values != 1) return false;
    any = true;
  }
  return any;
}

Lead single_value_lead(const Shapes& s) {
  // What the runs saw happen, whatever the value: first, as each explains
  // the value (or its absence) rather than being read off it.
  const Rule seen[] = {
      // A launch that fails computed nothing: its error is the cause.
      launch_fails,
      // The probe ran the same launch with the value set to 0 and got it
      // right: whatever the value was otherwise (NaN, or the fill as it
      // was), adding to it is why.
      added_to_not_set,
      // CPU mode saw threads skip a barrier: what they then read is what
      // made the value wrong.
      barrier_skipped_by_some,
  };
  for (const Rule rule : seen)
    if (auto lead = rule(s)) return *lead;
  // No value came out wrong: the shapes failed on their memory alone, and
  // the rules below have no value to speak of.
  const ShapeFacts* wrong = first_wrong(s.bad);
  if (!wrong) return right_but_writes_outside(s);
  const ValueRule by_value[] = {
      // Nothing stored (or NaN): no value to read anything else from.
      never_set,
      // A value that changes on the same inputs: one run's value says
      // nothing the rules below could read, as a race makes it up.
      changes_on_rerun,
      // The stores past the value were seen: the slot per block is why it
      // is wrong, before any guess from the value itself.
      stores_past_value,
      // NaN, by where it came from: a read past an input's end (the guard
      // zones' NaN), then CPU mode's shared-memory fill. Before the value's
      // size, which NaN does not have.
      nan_read_past_end,
      nan_from_unwritten_shared,
      // 0 wherever wrong: the result never reached the value.
      zero_where_wrong,
      // The shapes split by their launches' grids: one block right, several
      // wrong. Before the split by length, which the grid follows.
      one_block_counts,
      // The shapes split by length, at multiples of the block: the input's
      // end. Before the split by size, which it says more exactly.
      input_end_lost,
      // Only the larger lengths wrong: the last split the shapes can show.
      larger_lengths_only,
  };
  for (const ValueRule rule : by_value)
    if (auto lead = rule(s, *wrong)) return *lead;
  return wrong_value(s, *wrong);
}

}  // namespace cudalab::diagnosis::detail
