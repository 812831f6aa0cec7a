#include <signal.h>
#include <sys/resource.h>

#include <algorithm>
#include <string>

#include "cudalab/catch.h"
#include "run/process.h"

using namespace cudalab;

namespace {
ProcessResult run(std::vector<std::string> argv) {
  ProcessOptions o;
  o.argv = std::move(argv);
  return run_process(o);
}
}  // namespace

TEST_CASE("A command's output and exit code are captured", "[process][grader]") {
  const auto r = run({"sh", "-c", "echo hello; echo oops >&2; exit 3"});
  CHECK(r.started);
  CHECK(r.exit_code == 3);
  CHECK_THAT(r.output, Catch::Contains("hello") && Catch::Contains("oops"));
  CHECK(r.describe() == "exit code 3");
}

TEST_CASE("A command can run at a lower priority (builds that overlap timed checks do)",
          "[process][grader]") {
  ProcessOptions o;
  o.argv = {"sh", "-c", "nice"};  // prints its own nice value
  o.niceness = 10;
  const auto r = run_process(o);
  REQUIRE(r.ok());
  const int ours = getpriority(PRIO_PROCESS, 0);
  CHECK(std::stoi(r.output) == std::min(ours + 10, 19));
  CHECK(std::stoi(run({"sh", "-c", "nice"}).output) == ours);
}

TEST_CASE("A command that hangs is killed at its timeout, with the children it started",
          "[process][grader]") {
  ProcessOptions o;
  o.argv = {"sh", "-c", "sleep 30 & sleep 30; echo never"};
  o.timeout_s = 0.5;
  const auto r = run_process(o);
  CHECK(r.timed_out);
  CHECK(r.seconds < 5);
  CHECK_THAT(r.describe(), Catch::Contains("timed out"));
}

TEST_CASE("A crash is reported with the signal's name", "[process][grader]") {
  const auto r = run({"sh", "-c", "kill -SEGV $$"});
  CHECK(r.signal == SIGSEGV);
  CHECK_THAT(r.describe(), Catch::Contains("SIGSEGV"));
}

TEST_CASE("A printf flood is capped, keeping its beginning and its end", "[process][grader]") {
  ProcessOptions o;
  o.argv = {"sh", "-c", "echo FIRST; yes flood | head -c 5000000; echo; echo LAST"};
  o.output_cap = 4096;
  const auto r = run_process(o);
  CHECK(r.exit_code == 0);
  CHECK(r.output.size() < 5000);
  CHECK(r.output_bytes > 5000000);
  CHECK_THAT(r.output,
             Catch::StartsWith("FIRST") && Catch::Contains("LAST") && Catch::Contains("bytes of output cut"));
}

TEST_CASE("A command that does not exist is reported, not thrown", "[process][grader]") {
  const auto r = run({"/nonexistent/cudalab-test-binary"});
  CHECK(r.exit_code == 127);
  CHECK_THAT(r.output, Catch::Contains("cannot run"));
}

TEST_CASE("The minimal environment keeps PATH and drops the grader's secrets", "[process][grader]") {
  setenv("CUDALAB_SECRET_SEED", "12345", 1);
  const auto env = minimal_environment();
  CHECK(env.count("PATH") == 1);
  CHECK(env.count("CUDALAB_SECRET_SEED") == 0);
  ProcessOptions o;
  o.argv = {"sh", "-c", "echo \"[$CUDALAB_SECRET_SEED]\""};
  o.env = env;
  CHECK_THAT(run_process(o).output, Catch::Contains("[]"));
}

TEST_CASE("Checks run with malloc's huge pages, keeping the tunables the user set", "[process][grader]") {
  CHECK(with_huge_pages("") == "glibc.malloc.hugetlb=1");
  CHECK(with_huge_pages("glibc.malloc.arena_max=2") == "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1");
  // The user's own choice of huge pages stands, even "none".
  CHECK(with_huge_pages("glibc.malloc.hugetlb=0") == "glibc.malloc.hugetlb=0");
}

TEST_CASE("A command gets the memory limit it is given, and its children too", "[process][grader]") {
  ProcessOptions o;
  o.argv = {"sh", "-c", "sh -c 'ulimit -d'"};
  o.memory_limit_bytes = 256ull << 20;
  const auto r = run_process(o);
  CHECK(r.ok());
  CHECK_THAT(r.output, Catch::Contains("262144"));  // KiB
}

TEST_CASE("A command that dies of its memory limit is told apart from one that fails", "[process][grader]") {
  ProcessOptions o;
  // What a compiler does when an allocation fails: says so and exits.
  o.argv = {"python3", "-c", "x = bytearray(1 << 30)"};
  o.memory_limit_bytes = 256ull << 20;
  const auto r = run_process(o);
  CHECK_FALSE(r.ok());
  CHECK(ran_out_of_memory(o, r));
  CHECK(describe_memory_limit("the build", o.memory_limit_bytes) ==
        "the build ran out of its 0.25 GiB memory limit");
  CHECK(describe_memory_limit("the build", 8ull << 30) == "the build ran out of its 8 GiB memory limit");
  // The same failure without a limit, or an ordinary failure with one: not the limit's.
  ProcessOptions unlimited = o;
  unlimited.memory_limit_bytes = 0;
  CHECK_FALSE(ran_out_of_memory(unlimited, r));
  o.argv = {"sh", "-c", "echo 'error: expected ;'; exit 1"};
  CHECK_FALSE(ran_out_of_memory(o, run_process(o)));
}
