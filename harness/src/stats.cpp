#include "cudalab/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace cudalab {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  const std::size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + mid, v.end());
  const double hi = v[mid];
  if (v.size() % 2) return hi;
  return (*std::max_element(v.begin(), v.begin() + mid) + hi) / 2;
}

Summary summarize(const std::vector<double>& values) {
  Summary s;
  s.n = values.size();
  if (values.empty()) return s;
  s.median = median(values);
  s.min = *std::min_element(values.begin(), values.end());
  s.max = *std::max_element(values.begin(), values.end());
  std::vector<double> dev(values.size());
  std::transform(values.begin(), values.end(), dev.begin(),
                 [&](double v) { return std::fabs(v - s.median); });
  s.mad = median(dev);
  // 1.4826 x MAD estimates the standard deviation of normal data; the
  // median's standard error is 1.2533 sigma / sqrt(n).
  s.rel_noise =
      s.median != 0 ? 1.2533 * 1.4826 * s.mad / std::sqrt(static_cast<double>(s.n)) / std::fabs(s.median) : 0;
  return s;
}

bool enough_samples(const std::vector<double>& samples, double elapsed_s, const StopRule& rule) {
  if (samples.size() >= rule.max_samples) return true;
  if (samples.size() < rule.min_samples) return false;
  if (elapsed_s >= rule.budget_s) return true;
  return summarize(samples).rel_noise <= rule.target_rel_noise;
}

}  // namespace cudalab
