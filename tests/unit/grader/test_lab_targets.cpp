// Which of the course build's targets `cudalab test` builds
// (grader/run/lab_targets.h): a first `./cudalab test 03_tiling` builds lab 03's
// one binary for where its checks run, and no other lab's.
#include <string>
#include <vector>

#include "cudalab/catch.h"
#include "run/lab_targets.h"

using namespace cudalab;

TEST_CASE("A lab's binaries are named by where its checks run", "[lab-targets][grader]") {
  CHECK(lab_target("03_tiling", LabBinary::gpu) == "03_tiling-tests");
  CHECK(lab_target("03_tiling", LabBinary::cpu) == "03_tiling-tests-cpu");
  CHECK(lab_target("03_tiling", LabBinary::access) == "03_tiling-tests-access");
}

TEST_CASE("cudalab test 03_tiling builds lab 03's binary for where its checks run, and no other lab's",
          "[lab-targets][grader]") {
  const std::vector<std::string> others = {"01_coalescing", "02_naive_matmul", "04_transpose",
                                           "05_reduction"};
  for (const LabBinary binary : {LabBinary::gpu, LabBinary::cpu, LabBinary::access}) {
    const std::vector<std::string> targets = test_targets({"03_tiling"}, binary);
    CAPTURE(static_cast<int>(binary));
    REQUIRE(targets.size() == 1);
    CHECK(targets.front() == lab_target("03_tiling", binary));
    // Lab 02's solution reaches lab 03 as a reference compiled into its own
    // binary (labs/meson.build), never as lab 02's binary.
    for (const auto& other : others)
      for (const auto& t : targets) CHECK(t.find(other) == std::string::npos);
  }
  // Without a GPU: the CPU-mode binary, not the GPU one as well.
  CHECK(test_targets({"03_tiling"}, LabBinary::cpu) == std::vector<std::string>{"03_tiling-tests-cpu"});
}

TEST_CASE("cudalab test with several labs builds each one's binary, in the order named",
          "[lab-targets][grader]") {
  CHECK(test_targets({"04_transpose", "01_coalescing"}, LabBinary::cpu) ==
        std::vector<std::string>{"04_transpose-tests-cpu", "01_coalescing-tests-cpu"});
  CHECK(test_targets({}, LabBinary::gpu).empty());
}
