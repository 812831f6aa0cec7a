// course/include/common/bandwidth.h: what the memory-bound labs (01 coalescing, 04
// transpose) share: 2-D shapes, turning one guarded run into a verdict, and
// recording a side-by-side timing as bandwidth.
//
// These kernels do (almost) no arithmetic: their speed is the number of bytes
// they move divided by their time, compared with the GPU's peak DRAM
// bandwidth (cudalab::gpu().peak_dram_gbs). Expected outputs come from the CPU:
// an addition or a transpose of 2^26 floats takes it well under a second, and
// unlike a reference kernel's output it cannot share a GPU bug.
#pragma once

#include <fmt/format.h>

#include <functional>
#include <string>
#include <vector>

#include "cudalab/evidence.h"
#include "cudalab/replay.h"
#include "cudalab/testing.h"

namespace bandwidth {

// A rows x cols matrix, row-major; a vector of n elements is 1 x n.
struct Shape {
  int rows, cols;
  std::size_t count() const { return static_cast<std::size_t>(rows) * cols; }
  std::string str() const { return fmt::format("{}x{}", rows, cols); }
  std::string args() const { return fmt::format("rows={} cols={}", rows, cols); }
};

struct Outcome {
  bool launched = false;
  bool not_implemented = false;  // the launcher still ends in CUDALAB_TODO
  bool values_ok = false;
  std::string message;              // why values_ok is false
  std::vector<std::string> memory;  // guard zones written, inputs changed
};

// The verdict on one launch into `run`: its output `output` (shape `s`)
// compared with `expected`, and the guard zones and inputs checked.
// `reference` (the reference solution's launcher on the same inputs, into
// the buffer it is given) runs only where whole last rows or columns are
// missing: its launch tells a short grid from a bound that stops threads.
inline Outcome judge(cudalab::Run& run, const cudalab::LaunchOutcome& launched, const std::string& output,
                     Shape s, const std::vector<double>& expected, const cudalab::Tolerance& tolerance,
                     const std::function<void(float* out)>& reference = {}) {
  Outcome out;
  if (!launched.ok) {
    out.not_implemented = launched.not_implemented;
    out.message = launched.message;
    if (!launched.context_lost) out.memory = run.memory_problems();
    return out;
  }
  out.launched = true;
  out.memory = run.memory_problems();
  cudalab::CompareOptions options;
  options.tolerance = tolerance;
  const cudalab::Comparison c =
      cudalab::compare(output, run.result(output), expected, s.rows, s.cols, options);
  out.values_ok = c.ok();
  if (!out.values_ok) out.message = fmt::format("{}({}): {}", run.launcher(), run.shape(), c.describe());
  // Wrong: the same inputs once more tell a race (different results) apart.
  if (!out.values_ok && c.unwritten < c.rows * c.cols) run.rerun_changed(output);
  run.note_reference_launch(c, reference);
  // All of it unwritten or NaN: right when the output starts at 0 (+= into it)?
  const bool accumulates = run.check_accumulates(c, expected, tolerance);
  // Writing nothing outside the output proves nothing for a launch that wrote
  // nothing (one that added to it did write it).
  if (c.unwritten == c.rows * c.cols && !accumulates)
    out.memory.push_back(cudalab::evidence::nothing_written(output, c.unwritten));
  return out;
}

// True when trying further shapes is pointless: the launcher is not written
// yet (one "not implemented yet" says it all), or the GPU context is gone.
inline bool stop_after(const Outcome& o) {
  return o.not_implemented || cudalab::context_lost();
}

// Fails the running check once for each message.
inline void report(const std::vector<std::string>& failures) {
  for (const auto& f : failures) cudalab::require(false, f);
}

// GB/s (10^9 bytes per second) of a kernel that moves `bytes` in `ms`.
inline double gbs(double bytes, double ms) {
  return bytes / (ms * 1e-3) / 1e9;
}

// Device buffers of `count` floats each for a timing, which writes the
// inputs itself (fresh ones every round): nothing to upload.
struct Buffers {
  std::vector<cudalab::GuardedBuffer> all;
  std::size_t count;
  Buffers(const std::vector<std::string>& names, std::size_t n) : count(n) {
    all.reserve(names.size());
    for (const auto& name : names) all.emplace_back(name, n, sizeof(float));
  }
  float* operator[](std::size_t i) const { return static_cast<float*>(all[i].data()); }
};

// The timing's description of `bytes` of compulsory traffic per call, for
// the physical limit: a measured rate above the peak DRAM bandwidth fails.
inline cudalab::Work dram_work(double bytes) {
  cudalab::Work w;
  w.dram_bytes = bytes;
  return w;
}

// Records a side-by-side timing (student against `other`) of kernels that
// each move `bytes`: both times, the ratio, the student's GB/s and its share
// of the peak DRAM bandwidth. Returns the ratio other time / student time, or
// a negative value, with the check failed, when the timing is invalid (a
// timed output was wrong, or the rate impossible): then nothing is recorded,
// the ratio least of all (the grader's partial credit reads it even from a
// failed check).
inline double record_speed(const cudalab::SideBySide& t, double bytes, const std::string& other,
                           double flops = 0) {
  if (!t.valid()) {
    cudalab::require(false, "speed not measured: " + t.invalid);
    return -1;
  }
  const double student_gbs = gbs(bytes, t.student_ms.median);
  cudalab::measure("student_ms", t.student_ms.median, "ms");
  cudalab::measure(other + "_ms", t.reference_ms.median, "ms");
  cudalab::measure("ratio", t.ratio.median, "x");
  cudalab::measure("gbs", student_gbs, "GB/s");
  cudalab::measure(other + "_gbs", gbs(bytes, t.reference_ms.median), "GB/s");
  if (const double peak = cudalab::gpu().peak_dram_gbs; peak > 0)
    cudalab::measure("pct_peak_dram", 100 * student_gbs / peak, "%");
  cudalab::measure("noise", 100 * t.ratio.rel_noise, "%");
  cudalab::measure("rounds", static_cast<double>(t.ratio.n));
  cudalab::chart_work(bytes, flops);
  if (!t.remark.empty()) cudalab::note(t.remark);
  return t.ratio.median;
}

// "2700 GB/s, 81% of this GPU's peak DRAM bandwidth" (or without the share
// when the peak is unknown).
inline std::string describe_gbs(double value) {
  const double peak = cudalab::gpu().peak_dram_gbs;
  if (peak <= 0) return fmt::format("{:.0f} GB/s", value);
  return fmt::format("{:.0f} GB/s, {:.0f}% of this GPU's peak DRAM bandwidth", value, 100 * value / peak);
}

// A shorter timing, for comparisons shown as notes (a foil against the
// reference, a copy kernel): a second or so, to a few percent. Only the
// course's kernels: a student's launcher is timed with its outputs verified.
inline cudalab::SideBySide time_briefly(const std::function<void()>& foil, const std::function<void()>& other,
                                        const std::vector<cudalab::FreshInput>& inputs) {
  cudalab::StopRule rule;
  rule.min_samples = 5;
  rule.max_samples = 50;
  rule.target_rel_noise = 0.02;
  rule.budget_s = 1.0;
  cudalab::Timed timed;
  timed.inputs = inputs;
  return cudalab::time_side_by_side(foil, other, timed, rule);
}

}  // namespace bandwidth
