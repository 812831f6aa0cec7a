// grader/authoring/calibration_rules.h: the rules of docs/calibration.md as
// pure host functions: the margins, a variant's measured ratios, the
// thresholds proposed from them (propose), and the lab.toml edit that sets
// them (apply_to_lab_toml). `cudalab calibrate` (calibrate.h) runs the
// variants and applies them; a GPU's table (calibration_table.h) re-derives
// its thresholds with them. Unit-tested in tests/unit/grader/test_calibrate.cpp.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cudalab/manifest.h"

namespace cudalab::calibration {

// Exit codes of `cudalab calibrate`.
constexpr int kCalibrated = 0;  // every check got a proposal
constexpr int kNotMet = 1;      // some check's rules cannot be met (or a run failed): nothing proposed for it
constexpr int kUsage = 2;       // usage, manifest, or not the instructor's tree (no tests/variants)
constexpr int kNeedsGpu = 3;    // no usable GPU: nothing timed (as `cudalab test`/`grade` use 3)

// The margins of docs/calibration.md ("How the thresholds follow from the
// measurements"), as fractions.
struct Margins {
  // min_ratio <= (1 - correct) x the slowest correct alternative's slowest run
  double correct = 0.10;
  // the fastest foil's fastest run <= (1 - foil) x min_ratio
  double foil = 0.10;
  // full credit (credit.full_at) <= (1 - full_credit) x the slowest correct run
  double full_credit = 0.05;
};

// One variant on one speed check.
struct Measured {
  std::string variant;            // tests/variants/<lab>/<variant>
  bool correct = false;           // expect.toml: "pass" (a correct alternative) or "fail" (a foil)
  std::vector<double> ratios;     // the `ratio` measurement of each run that recorded one
  std::vector<double> noise;      // the `noise` measurement (percent) of those runs
  std::vector<Verdict> verdicts;  // each run's verdict under the thresholds of the time
  std::string problem;            // why a run recorded no ratio (the first such), empty if none
  int runs = 0;                   // runs attempted (records found)

  double median() const;
  double lowest() const;
  double highest() const;
};

struct Proposal {
  bool feasible = false;
  std::string why_not;  // when not feasible: which foil and which correct alternative, and why
  // The range the rules allow for min_ratio: [lo, hi] (lo 0 without foils).
  double lo = 0, hi = 0;
  double min_ratio = 0;
  std::optional<Credit> credit;  // none where lab.toml has no credit curve
  bool min_changed = false, credit_changed = false;
  std::string slowest_correct, fastest_foil;  // variant names ("" without foils)
  double slowest_correct_ratio = 0, fastest_foil_ratio = 0;
  std::string reference;  // "solution" where measured
  double reference_ratio = 0;
  std::vector<std::string> notes;  // foils without a ratio, noisy runs, ...

  // "the slowest correct alternative (solution, 0.998) 15% above; the fastest foil (chunked, 0.074) 91%
  // below"
  std::string margins_line() const;
};

// The rules of docs/calibration.md applied to measured ratios, starting from
// the check's current min_ratio and credit (kept where they meet the rules).
Proposal propose(const std::vector<Measured>& measured, double current_min_ratio,
                 const std::optional<Credit>& current_credit, const Margins& margins = {});

// The value nearest to `current` in [lo, hi]: `current` itself where it lies
// in the range, else the range's nearer end rounded inwards to a multiple of
// 0.05 (or 0.01, or 0.001) where that stays in the range.
double nearest_in_range(double current, double lo, double hi);

// A number as lab.toml writes it: "0.85", "1.30", "0.875".
std::string format_number(double v);
// A fraction as a whole percentage: 0.25 -> "25%".
std::string pct(double f);

// lab.toml's text with check `check_id`'s min_ratio and credit numbers set
// (nothing else of the file changes: formatting and comments stay). Throws
// std::runtime_error where the check or its numbers are not found.
std::string apply_to_lab_toml(const std::string& text, const std::string& check_id, double min_ratio,
                              const std::optional<Credit>& credit);

// "NVIDIA H100 80GB HBM3 (sm_90)" from a record's gpu line
// ("NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, ...)").
std::string gpu_label(const std::string& record_gpu);

}  // namespace cudalab::calibration
