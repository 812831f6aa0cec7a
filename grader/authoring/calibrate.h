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

#include "authoring/calibration_rules.h"
#include "cudalab/manifest.h"

namespace cudalab::calibration {

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
