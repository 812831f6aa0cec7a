#include "cudalab/testing.h"

#include <fmt/format.h>

#include <cstdlib>

#include "cudalab/random.h"

namespace cudalab {

namespace detail {
// Set by the test main (catch_main.cpp).
std::string lab_toml_path;
std::uint64_t seed_value = 2026;
}  // namespace detail

const LabSpec& this_lab() {
  static const LabSpec lab = load_lab(detail::lab_toml_path);
  return lab;
}

const CheckSpec& this_check() {
  const std::string& name = current_check();
  if (const CheckSpec* c = this_lab().find_by_name(name)) return *c;
  throw ManifestError(fmt::format("{}: no [[check]] has the name \"{}\" (the test case's name)",
                                  this_lab().file.string(), name));
}

std::uint64_t seed() {
  return detail::seed_value;
}

std::vector<float> random_floats(std::size_t n, std::uint64_t stream, float lo, float hi) {
  return uniform_floats(n, seed(), stream, lo, hi);
}

std::vector<double> to_double(const std::vector<float>& values) {
  return std::vector<double>(values.begin(), values.end());
}

const std::string& sanitizer() {
  static const std::string tool = [] {
    const char* env = std::getenv("CUDALAB_SANITIZER");
    return std::string(env ? env : "");
  }();
  return tool;
}

namespace {
// One note per check for a skip that may repeat over its shapes; noted_for is
// the caller's own (which check it last noted for).
template <typename Message>
void note_once_per_check(std::string& noted_for, Message message) {
  if (noted_for == current_check()) return;
  noted_for = current_check();
  note(message());
}

bool quick_look() {
  static const bool on = std::getenv("CUDALAB_QUICK_LOOK") != nullptr;
  return on;
}
}  // namespace

bool too_big_for_sanitizer(double elements) {
  if (sanitizer().empty() && !quick_look()) return false;
  // racecheck tracks every shared-memory access and is by far the slowest.
  const double limit = sanitizer() == "racecheck" || quick_look() ? double(1 << 18) : double(1 << 22);
  if (elements <= limit) return false;
  static std::string noted_for;
  note_once_per_check(noted_for, [&] {
    return sanitizer().empty()
               ? fmt::format("in this second look the shapes with more than {:.0f} values are skipped", limit)
               : fmt::format(
                     "under compute-sanitizer ({}) the shapes with more than {:.0f} values are skipped",
                     sanitizer(), limit);
  });
  return true;
}

bool too_big_for_cpu_mode(double buffer_elements) {
  constexpr double kLimit = double(1 << 24);
  if (!cpu_mode() || buffer_elements <= kLimit) return false;
  static std::string noted_for;
  note_once_per_check(noted_for, [&] {
    return fmt::format(
        "in CPU mode the inputs of more than {:.0f} values (2^24) are skipped: their memory alone "
        "takes seconds to simulate; a GPU runs them",
        kLimit);
  });
  return true;
}

bool left_to_grader(double work) {
  static const bool on = [] {
    const char* env = std::getenv("CUDALAB_LARGE_SHAPES");
    return env && std::string(env) == "grader";
  }();
  return on && cpu_mode() && work > kCpuTestWork;
}

void note_left_to_grader(const std::vector<std::string>& shapes) {
  if (shapes.empty()) return;
  note(fmt::format(
      "run smaller here: {} (the same sides equal and ragged; the full shapes take seconds each on simulated "
      "threads). CPU mode runs a block's threads one after another between barriers, so a missing "
      "__syncthreads shows at the smaller shapes already. The grader runs every shape as it is; `./cudalab "
      "test --all-shapes` runs them here",
      fmt::join(shapes, ", ")));
}

bool speed_not_measurable() {
  if (cpu_mode()) {
    mark_not_run("speed is not measured in CPU mode: run on a GPU for the speed checks");
    return true;
  }
  if (!sanitizer().empty()) {
    mark_not_run("speed is not measured under compute-sanitizer");
    return true;
  }
  return false;
}

void chart_work(double dram_bytes, double flops) {
  measure("chart_bytes", dram_bytes, "B");
  measure("chart_flops", flops, "FLOP");
  const GpuInfo& g = gpu();
  if (g.peak_dram_gbs > 0) measure("chart_peak_dram_gbs", g.peak_dram_gbs, "GB/s");
  if (g.peak_fp32_gflops > 0) measure("chart_peak_fp32_gflops", g.peak_fp32_gflops, "GFLOP/s");
}

void require(bool ok, const std::string& message) {
  if (!ok) FAIL_CHECK(message);
}

}  // namespace cudalab
