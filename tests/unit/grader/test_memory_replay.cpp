// The memory check judged again on its replay (judged.h judge_memory_replay):
// evidence files written as the test processes write them, the reference's
// (expected values), the student's own run's and the replay's.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "core/judged.h"
#include "cudalab/buffer.h"
#include "cudalab/catch.h"
#include "cudalab/evidence.h"

using namespace cudalab;
namespace ev = cudalab::evidence;
namespace fs = std::filesystem;

namespace {

// The output poison: a value no kernel wrote (cudalab/buffer.h is_poison).
float testbed_poison() {
  const std::uint32_t bits = 0xFFFFFFFFu;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

struct Launch {
  std::string label = "matmul_tiled(M=2 N=3 K=4)";
  std::vector<float> got = {1, 2, 3, 4, 5, 6};
  std::vector<std::uint8_t> guard_after = guard_zone("C", true, 64);
  std::uint64_t input_hash = 42;
};

// One check's evidence, as a test process writes it, in a file of its own.
fs::path write(const std::vector<Launch>& launches, const std::string& tag, bool expected) {
  const fs::path file = fs::temp_directory_path() / ("cudalab-memory-replay-" + tag + ".evidence");
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  REQUIRE(fd >= 0);
  ev::set_sink(fd);
  ev::set_enabled(true);
  ev::set_write_expected(expected);
  for (const auto& l : launches) {
    ev::set_label(l.label);
    ev::BufferState a;
    a.name = "A", a.input = true, a.count = 8, a.elem_size = 4, a.content_hash = l.input_hash;
    a.guard_before = guard_zone("A", false, 64), a.guard_after = guard_zone("A", true, 64);
    ev::BufferState c;
    c.name = "C", c.count = 6, c.elem_size = 4;
    c.guard_before = guard_zone("C", false, 64), c.guard_after = l.guard_after;
    ev::record_memory({a, c});
    CompareOptions options;
    options.tolerance.atol = 1e-3, options.tolerance.rtol = 0;
    ev::record_compared("C", l.got, {1, 2, 3, 4, 5, 6}, 2, 3, options);
  }
  ev::set_enabled(false);
  ev::set_sink(-1);
  ::close(fd);
  return file;
}

CheckSpec memory_check() {
  CheckSpec c;
  c.id = "memory", c.kind = CheckKind::correctness, c.judge = "memory", c.points = 10;
  return c;
}

CheckResult passed() {
  CheckResult r;
  r.id = "memory", r.kind = CheckKind::correctness, r.verdict = Verdict::pass;
  return r;
}

// The student's run as given, judged, then its replay as given.
Judged judge(const Launch& student, const Launch& replay, const std::string& tag,
             CheckResult replay_said = passed()) {
  const fs::path reference = write({Launch{}}, tag + "-reference", true);
  std::vector<std::string> right;
  Judged j = judge_correctness(Claim{passed(), write({student}, tag + "-student", false)}, reference,
                               memory_check(), &right);
  Judged out = judge_memory_replay(
      std::move(j), Testimony{replay_said, write({replay}, tag + "-replay", false)}, reference, right);
  fs::remove(reference);
  return out;
}

}  // namespace

TEST_CASE(
    "A memory check passes its replay only where the replayed kernels left every buffer as the student's "
    "run did",
    "[judged][trust][grader]") {
  const Judged same = judge(Launch{}, Launch{}, "same");
  CHECK(same.passed());
  CHECK_THAT(same.result().notes.back(), Catch::Contains("replayed on guarded buffers"));

  // The bytes past C that the student's launcher put back stay written in the replay.
  Launch past_end;
  past_end.guard_after[4] = 0;
  const Judged restored = judge(Launch{}, past_end, "past-end");
  CHECK(restored.verdict() == Verdict::fail);
  CHECK_THAT(restored.result().failures.front(), Catch::Contains("past the end of C"));
  CHECK_THAT(restored.result().failures.back(), Catch::Contains("found in the grader's replay"));

  // An input changed and put back.
  Launch changed;
  changed.input_hash = 7;
  CHECK_THAT(judge(Launch{}, changed, "input").result().failures.front(),
             Catch::Contains("changed the input A"));

  // Right in the student's run, wrong replayed alone: the kernel depends on the host.
  Launch only_first;
  only_first.got = {
      1, testbed_poison(), testbed_poison(), testbed_poison(), testbed_poison(), testbed_poison()};
  const Judged flagged = judge(Launch{}, only_first, "flag");
  CHECK(flagged.verdict() == Verdict::fail);
  CHECK_THAT(flagged.result().failures.front(),
             Catch::StartsWith("Diagnosis: your kernels computed something else"));
  // One cause: the replay's evidence does not offer its own (gallery 81 on an H200: "Likely
  // cause: ... the grid does not cover all of C" under this diagnosis).
  for (const auto& f : flagged.result().failures) CHECK_THAT(f, !Catch::Contains("Likely cause"));
  CHECK(std::any_of(flagged.result().failures.begin(), flagged.result().failures.end(),
                    [](const std::string& f) { return f.rfind("in the replay: ", 0) == 0; }));
}

TEST_CASE("A replay never raises a verdict, and its own failure leads with its words",
          "[judged][trust][grader]") {
  // Wrong in the student's run and in the replay alike: the values are another check's.
  Launch wrong;
  wrong.got = {9, 9, 9, 9, 9, 9};
  CHECK(judge(wrong, wrong, "wrong").passed());

  CheckResult crashed = passed();
  crashed.verdict = Verdict::fail;
  crashed.failures = {"Diagnosis: the launch fails at M=17 N=33 K=9 (an illegal memory access)."};
  crashed.cause = Cause::launch_fails;
  const Judged j = judge(Launch{}, Launch{}, "crashed", crashed);
  CHECK(j.verdict() == Verdict::fail);
  CHECK(j.result().failures.front() == crashed.failures.front());
  // Its cause with its words (gallery 80 on an H200: "Diagnosis: the boundary checks" under cause none).
  CHECK(j.result().cause == Cause::launch_fails);
  CHECK_THAT(j.result().failures.back(), Catch::Contains("cannot be replayed"));

  // A claim that failed stays the failure it is, replay or not.
  const fs::path reference = write({Launch{}}, "claim-reference", true);
  CheckResult failed = passed();
  failed.verdict = Verdict::crash;
  Judged claim = judge_correctness(Claim{failed, {}}, reference, memory_check(), nullptr);
  CHECK(judge_memory_replay(std::move(claim), Testimony{passed(), {}}, reference, {}).verdict() ==
        Verdict::crash);
  fs::remove(reference);
}
