#include "common.h"

#include <fmt/format.h>

#include <algorithm>

#include "run/sandbox.h"

namespace fs = std::filesystem;

namespace cudalab {

const fs::path kSourceRoot = CUDALAB_SOURCE_ROOT;
const fs::path kBuildRoot = CUDALAB_BUILD_ROOT;

std::vector<std::string> all_labs() {
  std::vector<std::string> labs;
  for (const auto& e : fs::directory_iterator(kSourceRoot / "labs"))
    if (e.is_directory() && fs::exists(e.path() / "lab.toml")) labs.push_back(e.path().filename().string());
  std::sort(labs.begin(), labs.end());
  return labs;
}

bool sandbox_missing() {
  if (!sandbox_launcher().empty()) return false;
  fmt::print(stderr, "cudalab: {}. Nothing was graded.\n", sandbox_missing_message());
  return true;
}

}  // namespace cudalab
