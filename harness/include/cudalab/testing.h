// cudalab/testing.h: what a lab's test file includes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cudalab/catch.h"
#include "cudalab/check.h"
#include "cudalab/compare.h"
#include "cudalab/gpu.h"
#include "cudalab/manifest.h"
#include "cudalab/record.h"
#include "cudalab/run.h"
#include "cudalab/timing.h"

namespace cudalab {

// The lab being tested (its lab.toml: --lab-toml, CUDALAB_LAB_TOML, or the
// one next to the test source at build time).
const LabSpec& this_lab();
// The running test case's entry in lab.toml.
const CheckSpec& this_check();

// The seed for random inputs: --seed, CUDALAB_SEED, or 2026. Printed in the record.
std::uint64_t seed();

// Uniform floats in [lo, hi) from the seed and a stream number, so each input
// of each shape differs but the whole run is reproducible.
std::vector<float> random_floats(std::size_t n, std::uint64_t stream, float lo = -1.f, float hi = 1.f);
std::vector<double> to_double(const std::vector<float>& values);

// CPU mode: the build ran the kernels on simulated threads (CUDALAB_CPU_MODE).
bool cpu_mode();
// The compute-sanitizer tool the checks run under (CUDALAB_SANITIZER, set by
// `cudalab test --sanitize`), or "" when none.
const std::string& sanitizer();
// Under a sanitizer a kernel runs 10 to 1000 times slower: true (with a note,
// once per check) for inputs of more than `elements` values that the check
// should skip. The same, with racecheck's limit, in a quick look
// (CUDALAB_QUICK_LOOK, set by the grader for its short CPU-mode run of a check
// that hung on the GPU: only words come of it, and the small shapes show them).
bool too_big_for_sanitizer(double elements);
// In CPU mode every buffer is host memory that the CPU faults in page by page
// (a 2^26-element vector check took 10 to 25 s, mostly in the kernel's page
// faults): true (with a note, once per check) for a buffer of more than 2^24
// values, which the check should skip. Only memory: work (a matmul's M*N*K)
// is not limited, the simulated kernels are.
bool too_big_for_cpu_mode(double buffer_elements);

// Speed means nothing in CPU mode or under a sanitizer: there this marks the
// running check "not run" and returns true, and the check should return.
bool speed_not_measurable();

// The kernel whose global-memory traffic this run counts for the report's
// roofline, or "" (then the checks run as always). The grader sets
// CUDALAB_TRAFFIC in a CPU-mode run with simt's access report on: "student"
// for the launcher under test, or the name a speed check gives the kernel it
// compares with ("naive", "reference"). A speed check then runs that kernel
// once at a small shape of the same kind, records the shape's work as
// traffic_flops, and nothing else; the access report counts the sectors.
// Always "" outside CPU mode.
const std::string& traffic_of();
// In such a run each call's launch leaves a note (kCountedLaunch,
// cudalab/vocabulary.h).

// For the report's roofline (grader/report_html.cpp): what one call of the
// timed launcher must move and compute (compulsory DRAM bytes, FP32 FLOP),
// and this GPU's peaks, as measurements named chart_* (the text report does
// not print them).
void chart_work(double dram_bytes, double flops);

// Fails the running check with a message for the student (and keeps going).
void require(bool ok, const std::string& message);

}  // namespace cudalab
