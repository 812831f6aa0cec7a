#include "score.h"

#include <fmt/format.h>

#include <cmath>

namespace cudalab {

CheckScore score_check(const CheckSpec& spec, const CheckResult& result,
                       const std::vector<CheckResult>& all) {
  CheckScore s;
  s.max_points = spec.points;
  std::vector<std::string> missing;
  for (const auto& id : spec.required) {
    bool ok = false;
    for (const auto& r : all)
      if (r.id == id) ok = r.passed();
    if (!ok) missing.push_back("'" + id + "'");
  }
  if (!missing.empty()) {
    s.why = fmt::format("counts only when {} pass{}", fmt::join(missing, " and "),
                        missing.size() == 1 ? "es" : "");
    s.gated = true;
    return s;
  }
  if (result.verdict == "not_run" || result.verdict == "skipped") {
    s.why = "not run";
    return s;
  }
  const Measurement* ratio = result.find("ratio");
  if (spec.kind == "speed" && spec.credit && ratio && std::isfinite(ratio->value) &&
      (result.verdict == "pass" || result.verdict == "fail")) {
    // The ratio to 0.01 first: run-to-run noise (about 0.1%) must not move the score.
    const double f = spec.credit->fraction(std::round(ratio->value * 100) / 100);
    // Whole hundredths of a point: the same ratio always gives the same score.
    s.points = std::round(spec.points * f * 100) / 100;
    if (f < 1)
      s.why = fmt::format("ratio {:.2f}: full credit from {:.2f}, none at {:.2f} or below", ratio->value,
                          spec.credit->full_at, spec.credit->zero_at);
    return s;
  }
  s.points = result.passed() ? spec.points : 0;
  return s;
}

}  // namespace cudalab
