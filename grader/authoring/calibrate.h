// grader/authoring/calibrate.h: `cudalab calibrate [LAB...]`: times, on the course's
// GPU, every speed check's reference and the foils the framework keeps
// (tests/variants/<lab>/: correct alternatives that must pass the check, and
// the mistakes it is about, which must fail it), and proposes each check's
// min_ratio and credit curve by the rules of docs/calibration.md. With
// --write it records the measurements and the proposal in the GPU's table,
// calibration/<gpu>.toml (calibration_table.h), and sets the numbers in
// lab.toml.
//
// The proposal (propose) and the lab.toml edit (apply_to_lab_toml) are pure
// host functions, unit-tested in tests/unit/grader/test_calibrate.cpp;
// run_calibration runs the variants' test binaries (or, with from_records,
// reads the records of an earlier run: a dry run that needs no GPU).
#pragma once

#include <filesystem>
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

// lab.toml's text with check `check_id`'s min_ratio and credit numbers set
// (nothing else of the file changes: formatting and comments stay). Throws
// std::runtime_error where the check or its numbers are not found.
std::string apply_to_lab_toml(const std::string& text, const std::string& check_id, double min_ratio,
                              const std::optional<Credit>& credit);

// "NVIDIA H100 80GB HBM3 (sm_90)" from a record's gpu line
// ("NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, ...)").
std::string gpu_label(const std::string& record_gpu);

// A variant that takes part in calibrating a speed check.
struct Participant {
  std::string variant;
  bool correct = false;  // expect.toml "pass": a correct alternative; "fail": a foil
};

// Those of <variants_dir>/<lab.id>/ whose expect.toml gives `check` the
// verdict "pass" or "fail", less those expected to fail a correctness check it
// requires (the skeleton); sorted by name. Throws ManifestError on a
// malformed expect.toml.
std::vector<Participant> participants(const LabSpec& lab, const CheckSpec& check,
                                      const std::filesystem::path& variants_dir);

struct Options {
  std::filesystem::path source_root, build_root;
  std::vector<std::string> labs;   // none: every lab
  std::filesystem::path labs_dir;  // <lab>/lab.toml (default source_root/labs): --write edits these
  std::filesystem::path
      tables_dir;  // the GPUs' tables (default source_root/calibration): --write updates one
  std::filesystem::path variants_dir;  // default source_root/tests/variants
  std::filesystem::path from_records;  // a dry run: read these records, run nothing
  std::filesystem::path records_dir;   // where the runs' records go (default build_root/calibration/<time>)
  int runs = 3;
  bool write = false;  // the GPU's table and the lab.toml numbers
  bool no_build = false, verbose = false;
  bool build_only = false;  // check the GPU, build the variant binaries, time nothing
  Margins margins;
};

int run_calibration(const Options& options);

}  // namespace cudalab::calibration
