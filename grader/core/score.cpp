#include "core/score.h"

#include <fmt/format.h>

#include <cmath>
#include <functional>
#include <optional>

namespace cudalab {

std::optional<SpeedOutcome> speed_outcome(const CheckSpec& spec, std::optional<double> ratio) {
  if (spec.kind != CheckKind::speed || !ratio || !std::isfinite(*ratio)) return std::nullopt;
  SpeedOutcome o;
  o.ratio = *ratio;
  if (const auto need = spec.numbers.find("min_ratio"); need != spec.numbers.end()) o.pass_at = need->second;
  o.credit = spec.credit;
  return o;
}

namespace {

// The rule, on what a verdict is: its verdict, the ratio that may give
// credit, and whether each check it requires passed.
CheckScore score(const CheckSpec& spec, Verdict verdict, std::optional<double> ratio,
                 const std::function<bool(const std::string& id)>& required_passed) {
  CheckScore s;
  s.max_points = spec.points;
  s.speed = speed_outcome(spec, ratio);
  std::vector<std::string> missing;
  for (const auto& id : spec.required)
    if (!required_passed(id)) missing.push_back("'" + id + "'");
  if (!missing.empty()) {
    s.why = fmt::format("counts only when {} pass{}", fmt::join(missing, " and "),
                        missing.size() == 1 ? "es" : "");
    s.gated = true;
    return s;
  }
  if (verdict == Verdict::not_run || verdict == Verdict::skipped) {
    s.why = "not run";
    return s;
  }
  if (spec.kind == CheckKind::speed && spec.credit && ratio && std::isfinite(*ratio) &&
      (verdict == Verdict::pass || verdict == Verdict::fail)) {
    // The ratio to 0.01 first: run-to-run noise (about 0.1%) must not move the score.
    const double f = spec.credit->fraction(std::round(*ratio * 100) / 100);
    // Whole hundredths of a point: the same ratio always gives the same score.
    s.points = std::round(spec.points * f * 100) / 100;
    if (f < 1)
      s.why = fmt::format("ratio {:.2f}: full credit from {:.2f}, none at {:.2f} or below", *ratio,
                          spec.credit->full_at, spec.credit->zero_at);
    return s;
  }
  s.points = verdict == Verdict::pass ? spec.points : 0;
  return s;
}

}  // namespace

CheckScore score_check(const CheckSpec& spec, const Judged& result, const std::vector<Judged>& all) {
  return score(spec, result.verdict(), result.timed_ratio(), [&](const std::string& id) {
    bool ok = false;
    for (const auto& r : all)
      if (r.result().id == id) ok = r.passed();
    return ok;
  });
}

CheckScore preview_check_score(const CheckSpec& spec, const CheckResult& result,
                               const std::vector<CheckResult>& all) {
  return score(spec, result.verdict, result.recorded_ratio(), [&](const std::string& id) {
    bool ok = false;
    for (const auto& r : all)
      if (r.id == id) ok = r.passed();
    return ok;
  });
}

}  // namespace cudalab
