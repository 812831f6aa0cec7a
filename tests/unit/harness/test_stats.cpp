#include <cmath>

#include "cudalab/catch.h"
#include "cudalab/stats.h"

using namespace cudalab;

TEST_CASE("The median of an odd and an even number of values", "[stats][harness]") {
  CHECK(median({3, 1, 2}) == 2);
  CHECK(median({4, 1, 3, 2}) == 2.5);
  CHECK(median({}) == 0);
}

TEST_CASE("Summaries are robust to one outlier", "[stats][harness]") {
  std::vector<double> v(21, 1.0);
  v[0] = 1000.0;
  const Summary s = summarize(v);
  CHECK(s.median == 1.0);
  CHECK(s.mad == 0.0);
  CHECK(s.max == 1000.0);
  CHECK(s.rel_noise == 0.0);
}

TEST_CASE("Relative noise is the median's standard error estimated from the MAD", "[stats][harness]") {
  std::vector<double> v;
  for (int i = 0; i < 100; ++i) v.push_back(i % 2 ? 1.01 : 0.99);
  const Summary s = summarize(v);
  CHECK(s.median == Approx(1.0));
  CHECK(s.mad == Approx(0.01));
  CHECK(s.rel_noise == Approx(1.2533 * 1.4826 * 0.01 / 10.0).epsilon(1e-6));
}

TEST_CASE("Sampling never stops before the minimum number of samples", "[stats][harness]") {
  StopRule rule;
  CHECK_FALSE(enough_samples(std::vector<double>(9, 1.0), 100.0, rule));
  CHECK(enough_samples(std::vector<double>(10, 1.0), 0.0, rule));
}

TEST_CASE("Noisy samples continue until the budget or the maximum is reached", "[stats][harness]") {
  StopRule rule;
  std::vector<double> noisy;
  for (int i = 0; i < 20; ++i) noisy.push_back(i % 2 ? 1.2 : 0.8);
  CHECK_FALSE(enough_samples(noisy, 0.1, rule));
  CHECK(enough_samples(noisy, rule.budget_s + 1, rule));
  noisy.resize(rule.max_samples, 1.0);
  CHECK(enough_samples(noisy, 0.0, rule));
}
