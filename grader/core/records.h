// grader/core/records.h: what one check's run said, as the grader reads it
// from the check's record (run/checks.h) and keeps it in a grade: the
// verdict, the messages for the student, the cause its diagnosis names, the
// measurements. Plain data; judged.h decides which of it a grade may trust.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cudalab/manifest.h"
#include "cudalab/vocabulary.h"
#include "cudalab/vocabulary_fmt.h"

namespace cudalab {

struct Measurement {
  std::string key;
  double value = 0;
  std::string unit;
};

struct CheckResult {
  std::string id, name;
  CheckKind kind = CheckKind::correctness;
  Verdict verdict = Verdict::error;   // cudalab/vocabulary.h
  std::vector<std::string> failures;  // what went wrong, for the student
  // The cause its "Diagnosis:" line names (cudalab/vocabulary.h): set with
  // that line by whoever writes it (the harness's diagnosis, the judge, a
  // second look); without one, a timeout or crash says what became of the
  // check; none where nothing names a cause.
  Cause cause = Cause::none;
  std::vector<std::string> notes;
  std::vector<Measurement> measurements;
  std::string output;  // the process's output, when it tells something
  double seconds = 0;

  bool passed() const { return verdict == Verdict::pass; }
  const Measurement* find(const std::string& key) const;
  // A speed check's timed ratio as its record names it (the harness's
  // "ratio" measurement: the student's kernels' speed relative to the
  // reference's); nullopt where it has none or it is not a finite number.
  // The one place that name is read: the scores and views take the ratio
  // from core/score.h's SpeedOutcome.
  std::optional<double> recorded_ratio() const;
};

// Whether `m` is the measurement recorded_ratio() reads (a view that lists
// the other measurements leaves it to the speed outcome).
bool is_recorded_ratio(const Measurement& m);

}  // namespace cudalab
