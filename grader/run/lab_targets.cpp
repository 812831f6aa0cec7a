#include "run/lab_targets.h"

namespace cudalab {

std::string lab_target(const std::string& lab, LabBinary binary) {
  switch (binary) {
    case LabBinary::gpu:
      return lab + "-tests";
    case LabBinary::cpu:
      return lab + "-tests-cpu";
    case LabBinary::access:
      return lab + "-tests-access";
  }
  return lab + "-tests";
}

std::vector<std::string> test_targets(const std::vector<std::string>& labs, LabBinary binary) {
  std::vector<std::string> targets;
  for (const auto& lab : labs) targets.push_back(lab_target(lab, binary));
  return targets;
}

}  // namespace cudalab
