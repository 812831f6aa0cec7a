#include "core/time_limits.h"

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

double WordsAllowance::limit(double own_s) const {
  const double left = left_s();
  if (left <= 0) return 0;
  return own_s > 0 ? std::min(own_s, left) : left;
}

void WordsAllowance::charge(double seconds) {
  const std::lock_guard<std::mutex> lock(mutex_);
  used_s_ += std::max(0.0, seconds);
}

double WordsAllowance::left_s() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return total_s_ - used_s_;
}

bool WordsAllowance::spent() const {
  return left_s() <= 0;
}

void WordsAllowance::build_failed(const std::string& target, const std::string& log) {
  const std::lock_guard<std::mutex> lock(mutex_);
  failed_builds_.emplace(target, log);
}

const std::string* WordsAllowance::failed_build(const std::string& target) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  auto it = failed_builds_.find(target);
  return it == failed_builds_.end() ? nullptr : &it->second;  // entries are never erased
}

std::string words_skipped_note(double allowance_s, const std::string& what) {
  return fmt::format(
      "{} was not looked into: this submission's {:.0f} s for second looks and explanations were spent "
      "(the grade does not depend on them)",
      what, allowance_s);
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
