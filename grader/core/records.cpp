#include "core/records.h"

#include <cmath>

namespace cudalab {

const Measurement* CheckResult::find(const std::string& key) const {
  for (const auto& m : measurements)
    if (m.key == key) return &m;
  return nullptr;
}

namespace {
constexpr const char* kRatioKey = "ratio";  // cudalab/timing.h's name for it in a record
}  // namespace

std::optional<double> CheckResult::recorded_ratio() const {
  const Measurement* m = find(kRatioKey);
  if (!m || !std::isfinite(m->value)) return std::nullopt;
  return m->value;
}

bool is_recorded_ratio(const Measurement& m) {
  return m.key == kRatioKey;
}

}  // namespace cudalab
