// grader/run/lab_targets.h: the course build's targets a lab's checks run from,
// by name, and which of them `cudalab test` builds: a student's first run
// waits for what it builds, so it builds the labs named and nothing else
// (not every lab, not the framework's tests).
#pragma once

#include <string>
#include <vector>

namespace cudalab {

// A lab's test binaries (labs/meson.build): for a GPU, for CPU mode (simt),
// and CPU mode with the student's file instrumented for the access report.
enum class LabBinary { gpu, cpu, access };

// "03_tiling-tests", "03_tiling-tests-cpu", "03_tiling-tests-access".
std::string lab_target(const std::string& lab, LabBinary binary);

// What `cudalab test LABS` builds to run their checks, once it knows where
// they run: each lab's one binary for that, in the order named. Lab 03's
// binary brings what it links (the harness, simt, the solutions it names as
// references: labs/meson.build), no other lab's.
std::vector<std::string> test_targets(const std::vector<std::string>& labs, LabBinary binary);

}  // namespace cudalab
