// What kind of run this process is: CPU mode, a counting run. Apart from
// testing.cpp, which needs Catch2, so that code linking the harness without
// a test main (the primer's example) can still use cudalab::Run, whose
// launches ask it.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <stdexcept>
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

namespace {
bool g_reference_linked = true;  // programs without a lab's test main: as they always were
std::FILE* g_launches_out = nullptr;
std::map<std::string, std::string>& reference_launches() {
  static std::map<std::string, std::string> table;
  return table;
}
}  // namespace

bool reference_linked() {
  return g_reference_linked;
}
void set_reference_linked(bool linked) {
  g_reference_linked = linked;
}

void reference_absent(const char* name) {
  throw std::runtime_error(std::string("ref::") + name +
                           " is not in this process: the grader runs the reference solution in a process "
                           "of its own");
}

void set_launches_fd(int fd) {
  if (g_launches_out) std::fclose(g_launches_out);
  g_launches_out = fd < 0 ? nullptr : fdopen(fd, "w");
}

void note_launch_for_table(const std::string& label, const std::string& launch) {
  // One line a launch: a tab or newline of its own would break the table
  // (labels and launches are the harness's words; none has one).
  if (!g_launches_out || launch.empty() || label.find_first_of("\t\n") != std::string::npos ||
      launch.find_first_of("\t\n") != std::string::npos)
    return;
  std::fprintf(g_launches_out, "%s\t%s\n", label.c_str(), launch.c_str());
  std::fflush(g_launches_out);
}

void load_reference_launches(const std::string& table) {
  std::istringstream in(table);
  for (std::string line; std::getline(in, line);)
    if (const auto tab = line.find('\t'); tab != std::string::npos)
      reference_launches()[line.substr(0, tab)] = line.substr(tab + 1);  // the last launch of a label
}

std::string reference_launch(const std::string& label) {
  const auto& table = reference_launches();
  const auto it = table.find(label);
  return it == table.end() ? "" : it->second;
}

const std::string& traffic_of() {
  static const std::string who = [] {
    const char* env = std::getenv("CUDALAB_TRAFFIC");
    return std::string(cpu_mode() && env ? env : "");
  }();
  return who;
}

}  // namespace cudalab
