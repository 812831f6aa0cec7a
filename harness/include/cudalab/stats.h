// cudalab/stats.h: robust statistics for timing samples, and the rule that
// decides when enough samples have been taken. Host-only.
#pragma once

#include <cstddef>
#include <vector>

namespace cudalab {

struct Summary {
  std::size_t n = 0;
  double median = 0, min = 0, max = 0, mad = 0;
  // Standard error of the median relative to the median, from the MAD:
  // 1.2533 x 1.4826 x MAD / sqrt(n) / |median|. 0.005 means +-0.5%.
  double rel_noise = 0;
};

double median(std::vector<double> values);
Summary summarize(const std::vector<double>& values);

struct StopRule {
  std::size_t min_samples = 10;
  std::size_t max_samples = 200;
  double target_rel_noise = 0.005;
  double budget_s = 4.0;  // wall-clock time for one measurement
};

// True once at least min_samples were taken and either the noise target is
// met, max_samples is reached, or the budget is spent.
bool enough_samples(const std::vector<double>& samples, double elapsed_s, const StopRule& rule);

}  // namespace cudalab
