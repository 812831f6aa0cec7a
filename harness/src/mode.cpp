// What kind of run this process is: CPU mode, a counting run. Apart from
// testing.cpp, which needs Catch2, so that code linking the harness without
// a test main (the primer's example) can still use cudalab::Run, whose
// launches ask it.
#include <cstdlib>
#include <string>

#include "cudalab/testing.h"

namespace cudalab {

bool cpu_mode() {
#if defined(CUDALAB_CPU_MODE) && CUDALAB_CPU_MODE
  return true;
#else
  return false;
#endif
}

const std::string& traffic_of() {
  static const std::string who = [] {
    const char* env = std::getenv("CUDALAB_TRAFFIC");
    return std::string(cpu_mode() && env ? env : "");
  }();
  return who;
}

}  // namespace cudalab
