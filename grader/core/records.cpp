#include "core/records.h"

namespace cudalab {

const Measurement* CheckResult::find(const std::string& key) const {
  for (const auto& m : measurements)
    if (m.key == key) return &m;
  return nullptr;
}

}  // namespace cudalab
