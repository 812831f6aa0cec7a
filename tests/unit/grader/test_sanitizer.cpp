// Turning compute-sanitizer's reports into a message for the student.
#include <algorithm>

#include "cudalab/catch.h"
#include "run/checks.h"

using namespace cudalab;

TEST_CASE("A memcheck report names the kernel, the access and the summary", "[sanitizer][grader]") {
  const std::string out = R"(========= COMPUTE-SANITIZER
cudalab: NVIDIA H100 80GB HBM3; seed 2026
========= Invalid __global__ write of size 4 bytes
=========     at matmul_naive_kernel(const float *, const float *, float *, int, int, int)+0x1c0 in /x/matmul_naive.cu:30
=========     by thread (1,0,0) in block (1,0,0)
=========     Address 0x7f3a00000844 is out of bounds
=========     and is 4 bytes after the nearest allocation at 0x7f3a00000800 of size 68 bytes
=========     Saved host backtrace up to driver entry point at kernel launch time
=========         Host Frame: [0x2dfbef] in libcuda.so.1
=========
========= Invalid __global__ write of size 4 bytes
=========     at matmul_naive_kernel(const float *, const float *, float *, int, int, int)+0x1c0 in /x/matmul_naive.cu:30
=========
========= ERROR SUMMARY: 800 errors were not printed. Use --print-limit option to adjust the number of printed errors
========= ERROR SUMMARY: 12 errors
)";
  const std::string s = summarize_sanitizer("memcheck", out);
  CHECK_THAT(s, Catch::Contains("compute-sanitizer (memcheck) reported an error in matmul_naive_kernel"));
  CHECK_THAT(s, Catch::Contains("Invalid __global__ write of size 4 bytes"));
  CHECK_THAT(s, Catch::Contains("matmul_naive.cu:30"));
  CHECK_THAT(s, Catch::Contains("4 bytes after the nearest allocation"));
  CHECK_THAT(s, Catch::Contains("ERROR SUMMARY: 12 errors"));
  CHECK_THAT(s, !Catch::Contains("not printed"));
  CHECK_THAT(s, !Catch::Contains("Host Frame"));
  // Folded: the kernel's name without its parameters or offset, the file without its folder.
  CHECK_THAT(s, Catch::Contains("at matmul_naive_kernel in matmul_naive.cu:30"));
  CHECK_THAT(s, !Catch::Contains("+0x"));
  CHECK_THAT(s, !Catch::Contains("/x/"));
}

TEST_CASE("A sanitizer's output that is no report is folded to its last lines, without offsets",
          "[unit][sanitizer]") {
  std::string out = "========= COMPUTE-SANITIZER\n";
  for (int i = 0; i < 40; ++i)
    out += "=========     at k(int, float *)+0x" + std::to_string(100 + i) +
           " in /x/k.cu:" + std::to_string(i) + "\n";
  const std::string s = fold_sanitizer_output(out, 8);
  CHECK_THAT(s, !Catch::Contains("+0x"));
  CHECK_THAT(s, Catch::Contains("at k in k.cu:39"));
  CHECK_THAT(s, Catch::Contains("earlier lines left out"));
  CHECK(std::count(s.begin(), s.end(), '\n') <= 8);
}

TEST_CASE("A racecheck report quotes the first race", "[sanitizer][grader]") {
  const std::string out = R"(========= COMPUTE-SANITIZER
========= Error: Race reported between Write access at matmul_tiled_kernel(const float *, const float *, float *, int, int, int)+0x2a0 in /x/matmul_tiled.cu:40
=========     and Read access at matmul_tiled_kernel(const float *, const float *, float *, int, int, int)+0x3b0 in /x/matmul_tiled.cu:48 [2048 hazards]
=========
========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)
)";
  const std::string s = summarize_sanitizer("racecheck", out);
  CHECK_THAT(s, Catch::StartsWith("compute-sanitizer (racecheck) reported a race in matmul_tiled_kernel: 1 "
                                  "hazard (1 error, 0 warnings), between:"));
  CHECK_THAT(s, Catch::Contains("Write at matmul_tiled.cu:40 and Read at matmul_tiled.cu:48, 2048 hazards"));
  CHECK_THAT(s, !Catch::Contains("+0x"));
}

TEST_CASE("A clean sanitizer run reports nothing", "[sanitizer][grader]") {
  CHECK(summarize_sanitizer("memcheck", "========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n")
            .empty());
  CHECK(summarize_sanitizer("racecheck",
                            "========= COMPUTE-SANITIZER\n========= RACECHECK SUMMARY: 0 hazards displayed "
                            "(0 errors, 0 warnings)\n")
            .empty());
}
