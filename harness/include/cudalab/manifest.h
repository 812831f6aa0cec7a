// cudalab/manifest.h: a lab's lab.toml: its files, its checks, their points
// and thresholds. Read at run time, so an instructor changes a threshold
// without recompiling. Errors name the file, line and field.
#pragma once

#include <array>
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "cudalab/vocabulary.h"

namespace cudalab {

class ManifestError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Partial credit for a speed check: no points at or below `zero_at`, all at or
// above `full_at`, linear in between (ratios, as measured by the check).
struct Credit {
  double zero_at = 0;
  double full_at = 0;
  double fraction(double ratio) const;
};

struct CheckSpec {
  std::string id;    // short, stable: "ragged", "faster-than-naive"
  std::string name;  // the Catch2 test case: a sentence
  CheckKind kind = CheckKind::correctness;
  std::string visibility = "visible";  // visible, hidden, after_due_date, after_published
  // How the grader judges a correctness check's outputs outside the test
  // process (cudalab/evidence.h): "values" or "memory".
  std::string judge = "values";
  double points = 0;
  double timeout_s = 0;               // 0: the lab's default
  std::vector<std::string> required;  // lab.toml's "requires": ids that must pass for this one to count
  // Speed checks: the check whose CPU-mode run with simt's access report
  // explains a kernel too slow, held against the reference's run (bank
  // conflicts, uncoalesced accesses, more global traffic, the launch;
  // grader/run/explain.h): an earlier correctness check, or this check itself,
  // whose counting run (cudalab::traffic_of) makes one call at a small shape.
  // Empty: none.
  std::string explain;
  std::map<std::string, double> numbers;  // thresholds: min_ratio, ...
  std::optional<Credit> credit;
  std::string source;  // "labs/03_tiling/lab.toml:27" for messages

  // A threshold; throws ManifestError naming the file and check if missing.
  double number(const std::string& key) const;
};

// lab.toml's [lab] forbid: the classes of GPU instructions a lab's lesson can
// exclude. grader/run/policy.h says which instructions each class holds and scans
// a student file's PTX (and SASS, where cuobjdump is found) for them.
inline constexpr std::array<std::string_view, 2> kForbiddenClasses = {"tensor_cores", "tma"};

struct LabSpec {
  std::string id;  // the folder name, e.g. "03_tiling"
  std::string title;
  std::filesystem::path file;  // the lab.toml it came from
  std::vector<std::string> student_files, tests, references;
  // The global-namespace functions the tests call in the student files
  // (lab.toml's launchers): all a submission may define besides its kernels.
  std::vector<std::string> launchers;
  // Instruction classes (kForbiddenClasses) the student files may not use:
  // a lab whose speed checks measure a lesson that those instructions skip.
  std::vector<std::string> forbid;
  double timeout_s = 120;
  std::vector<CheckSpec> checks;
  // lab.toml's [explain]: the lab's words for the fix of each cause a slow
  // kernel's diagnosis names (conflicts, uncoalesced, traffic, launch).
  std::map<std::string, std::string> explain_words;
  // lab.toml's [diagnosis]: the lab's words for the fix of each cause a
  // failing correctness check's diagnosis names (cudalab/vocabulary.h, keyed
  // by its spelling): they replace the general words (cudalab/diagnosis.h),
  // and the handout's table of messages is made from them.
  std::map<Cause, std::string> diagnosis_words;

  const CheckSpec* find_by_name(std::string_view name) const;
  const CheckSpec* find_by_id(std::string_view id) const;
  double total_points() const;
};

// Parses and validates; throws ManifestError("FILE:LINE: field: problem").
LabSpec parse_lab(std::string_view text, const std::string& source, const std::string& lab_id);
LabSpec load_lab(const std::filesystem::path& lab_toml);

}  // namespace cudalab
