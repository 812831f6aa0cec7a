// grader/authoring/calibration_table.h: one GPU's calibration of the speed checks as
// data, calibration/<gpu>-<sm>.toml (docs/calibration.md). Per lab and speed
// check: when and on what it was timed, each variant's ratios (the reference
// and the correct alternatives must pass, the foils must fail) and the
// thresholds calibrate.h's rules derived from them. `cudalab calibrate --write`
// writes it; the framework's tests check every lab.toml against every table
// (tests/unit/grader/test_calibration_tables.cpp). Host-only; nothing that grades
// reads it.
//
//   [gpu]
//   name = "NVIDIA H100 80GB HBM3"
//   sm = "sm_90"
//
//   [[check]]
//   lab = "04_transpose"
//   id = "speed"
//   date = "2026-11-24"
//   runs = 3
//   device = "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, ..., driver 13.0, runtime 13.0)"
//   nvcc = "13.0.88"                  # absent where the run did not record it
//   source = "..."                    # where the measurements are (records, a log)
//   margins = { correct = 0.10, foil = 0.10, full_credit = 0.05 }
//   min_ratio = 0.80                  # derived
//   credit = { zero_at = 0.60, full_at = 0.90 }
//   allowed_min_ratio = [0.663, 0.895]
//   margin = "threshold 20% below the slowest correct alternative ..."
//   variants = [
//     { name = "solution", expect = "pass", median = 0.998, ratios = [0.998, 1.003, 0.994], max_noise_pct =
//     0.48 }, { name = "memoized", expect = "fail", ratios = [], no_ratio = "speed not measured: ..." },
//   ]
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "authoring/calibration_rules.h"
#include "cudalab/manifest.h"

namespace cudalab::calibration {

struct TableEntry {
  std::string lab, check;  // "03_tiling", "faster-than-naive"
  std::string date;        // when it was timed, "2026-11-23"
  int runs = 0;            // separate runs of each variant
  std::string device;      // the records' GPU line: SMs, peak DRAM, L2, CUDA driver and runtime
  std::string nvcc;        // the nvcc that built the timed binaries ("" where not recorded)
  std::string source;      // where the measurements came from
  Margins margins;         // the rules' margins of that run
  double min_ratio = 0;    // the thresholds derived
  std::optional<Credit> credit;
  double lo = 0, hi = 0;           // the range the rules allowed for min_ratio
  std::string margin;              // Proposal::margins_line() of the derived thresholds
  std::vector<Measured> variants;  // correct = must pass; ratios, noise (the largest), no-ratio problem
};

struct Table {
  std::string gpu;                  // "NVIDIA H100 80GB HBM3"
  std::string sm;                   // "sm_90"
  std::vector<TableEntry> entries;  // sorted by lab, then check

  const TableEntry* find(const std::string& lab, const std::string& check) const;
  // Adds `e`, in place of the entry of the same lab and check.
  void put(TableEntry e);
};

// calibrate.h's gpu_label split: "NVIDIA H100 80GB HBM3 (sm_90)" -> the
// name and "sm_90" ("" where the label has none).
std::pair<std::string, std::string> split_gpu_label(const std::string& label);

// "nvidia-h100-80gb-hbm3-sm90.toml": the name lower-cased, runs of anything
// but letters and digits as one '-', then the compute capability.
std::string table_file_name(const std::string& gpu, const std::string& sm);

// Throws ManifestError("FILE:LINE: ...") on a malformed table.
Table parse_table(const std::string& text, const std::string& source);
Table load_table(const std::filesystem::path& path);
// The table as its file holds it (parse_table(format_table(t)) gives t back,
// numbers rounded as written: ratios to 4 decimals, noise to 2).
std::string format_table(const Table& t);

// An entry from one calibration's measurements and proposal (feasible).
TableEntry make_entry(const std::string& lab, const std::string& check, const std::vector<Measured>& measured,
                      const Proposal& p, const Margins& margins);

// What is wrong with thresholds `min_ratio` and `credit` by the rules of the
// entry's own measurements and margins (calibrate.h's propose): empty when
// `cudalab calibrate` would keep them unchanged on this GPU. One sentence
// each, naming the rule and the numbers.
std::vector<std::string> threshold_problems(const TableEntry& e, double min_ratio,
                                            const std::optional<Credit>& credit);

}  // namespace cudalab::calibration
