#include "time_limits.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace cudalab {

double check_limit(double reference_s, double cap_s, bool speed) {
  if (reference_s <= 0) return cap_s;
  const LimitRule rule = speed ? kSpeedLimit : kCorrectnessLimit;
  const double limit = std::max(rule.floor_s, rule.factor * reference_s);
  if (cap_s <= 0) return limit;
  return std::min(limit, std::max(cap_s, kCapMargin * reference_s));
}

double check_run_limit(const RunLimitInputs& in) {
  double s = in.lab_s;
  if (in.role != RunRole::reference && in.course_cap_s > 0) s = std::min(s, in.course_cap_s);
  if (in.role == RunRole::student && !in.sanitizer && in.reference_s > 0)
    s = check_limit(in.reference_s, s, in.speed);
  if (in.sanitizer) s *= kSanitizerFactor;
  if (in.role == RunRole::second_look) s = std::min(s, kSecondLookLimit_s);
  if (in.role == RunRole::hang_look) s = std::min(s, kHangLookLimit_s);
  return s;
}

std::string describe_limit(double limit_s, double reference_s, bool speed) {
  // Whole seconds, as the limit is meant; tenths for a short reference.
  const auto secs = [](double s) { return s < 10 ? fmt::format("{:.1f} s", s) : fmt::format("{:.0f} s", s); };
  const std::string limit = fmt::format("{:.0f} s", limit_s);
  if (reference_s <= 0) return limit;
  const LimitRule rule = speed ? kSpeedLimit : kCorrectnessLimit;
  if (std::abs(limit_s - kCapMargin * reference_s) < 1e-9 && kCapMargin < rule.factor)
    return fmt::format("{} (twice the reference solution's {}: the lab's or course's limit is less)", limit,
                       secs(reference_s));
  if (limit_s < rule.factor * reference_s - 1e-9)
    return fmt::format("{} (the lab's or course's limit; the reference solution took {})", limit,
                       secs(reference_s));
  if (limit_s > rule.factor * reference_s + 1e-9)
    return fmt::format("{} (the least a check gets; the reference solution took {})", limit,
                       secs(reference_s));
  return fmt::format("{} ({:g} x the reference solution's {})", limit, rule.factor, secs(reference_s));
}

}  // namespace cudalab
