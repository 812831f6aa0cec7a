// The leading diagnosis of a speed check too slow, from CPU mode's access
// report (grader/explain.h): bank conflicts, uncoalesced accesses, or
// neither (then the launch), each from a report written the way simt writes it.
#include <fmt/format.h>

#include <string>

#include "cudalab/catch.h"
#include "cudalab/replay.h"
#include "explain.h"

using namespace cudalab;

namespace {

// One line of simt's JSON access report.
std::string line(const char* space, const char* op, int at, double conflicts, double sectors, double ideal) {
  const double requests = 1000;
  return fmt::format(
      "{{\"file\": \"/home/s/labs/04_transpose/transpose.cu\", \"function\": \"transpose_kernel\", \"line\": "
      "{}, "
      "\"space\": \"{}\", \"op\": \"{}\", \"bytes\": 4, \"requests\": {}, \"threads\": 32000, \"sectors\": "
      "{}, "
      "\"ideal_sectors\": {}, \"wavefronts\": 0, \"ideal_wavefronts\": 0, \"sectors_per_request\": {}, "
      "\"bank_conflicts_per_request\": {}}}",
      at, space, op, requests, sectors * requests, ideal * requests, sectors, conflicts);
}

std::string report(std::initializer_list<std::string> lines) {
  std::string s = "{\"lines\": [";
  bool first = true;
  for (const auto& l : lines) s += (first ? "" : ",") + l, first = false;
  return s + "]}";
}

const std::string kLaunch = "grid (256, 256, 1), block (32, 32, 1)";

}  // namespace

TEST_CASE("an unpadded tile leads with its bank conflicts, at the line that has them") {
  const std::string lead =
      access_lead(report({line("global", "load", 48, 0, 4, 4), line("shared", "store", 48, 0, 0, 0),
                          line("global", "store", 59, 0, 4, 4), line("shared", "load", 59, 31, 0, 0)}),
                  kLaunch);
  CHECK(lead.rfind(
            "shared-memory bank conflicts: the shared load at transpose.cu:59 in transpose_kernel averages "
            "31.0 bank conflicts per request",
            0) == 0);
  CHECK(lead.find("tile[TILE][TILE + 1]") != std::string::npos);
}

TEST_CASE("a padded tile with no conflicts and coalesced accesses points at the launch, naming it") {
  const std::string lead =
      access_lead(report({line("global", "load", 48, 0, 4, 4), line("shared", "store", 48, 0, 0, 0),
                          line("global", "store", 59, 0, 4, 4), line("shared", "load", 59, 0, 0, 0)}),
                  kLaunch);
  CHECK(lead.rfind("not the memory pattern: CPU mode counts no bank conflicts", 0) == 0);
  CHECK(lead.find("your launch: grid (256, 256, 1), block (32, 32, 1)") != std::string::npos);
  CHECK(lead.find("bank conflicts:") == std::string::npos);
}

TEST_CASE("global accesses far above their ideal sectors lead as uncoalesced when shared memory is clean") {
  const std::string lead =
      access_lead(report({line("global", "load", 48, 0, 4, 4), line("global", "store", 50, 0, 32, 4),
                          line("shared", "load", 59, 0.02, 0, 0)}),
                  "");
  CHECK(lead.rfind("uncoalesced global memory accesses: the global store at transpose.cu:50", 0) == 0);
  CHECK(lead.find("32.0 32-byte sectors per request where 4.0 would do") != std::string::npos);
  CHECK(lead.find("your launch") == std::string::npos);
}

TEST_CASE("no report, an empty one or a malformed one gives no lead") {
  CHECK(access_lead("", kLaunch).empty());
  CHECK(access_lead("{\"lines\": []}", kLaunch).empty());
  CHECK(access_lead("not json", kLaunch).empty());
  CHECK(access_lead("{\"lines\": 3}", kLaunch).empty());
}

TEST_CASE("the traced launch is described by its grid and block") {
  replay::Trace t;
  replay::Launch l;
  l.kernel = "_Z16transpose_kernelPKfPfii";
  l.grid[0] = 256, l.grid[1] = 256;
  l.block[0] = 32, l.block[1] = 32;
  t.launches = {l, l};
  CHECK(describe_traced_launch(replay::to_json(t)) ==
        "grid (256, 256, 1), block (32, 32, 1), and 1 more launches");
  CHECK(describe_traced_launch("{}").empty());
}
