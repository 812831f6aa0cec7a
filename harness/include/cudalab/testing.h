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
// Whether namespace ref holds the reference solutions (a student's own build,
// the grader's reference build), or the labs' skeletons in their place (the
// grader's builds of submissions, -Dreference_code=absent: no process that
// runs a student's code holds a solution). Where it does not, a check takes
// its expected values from the CPU and the reference's launch configuration
// from the table the reference's own run wrote (reference_launch), and calls
// nothing in namespace ref.
bool reference_linked();
void set_reference_linked(bool linked);
// What a function of namespace ref does where the reference is not linked
// (tools/ref_stubs.py writes them): throws, naming it.
[[noreturn]] void reference_absent(const char* name);
// The reference's launches: its run (the grader's, --launches-fd) writes
// each launcher call's label ("matmul_tiled(M=17 N=33 K=9)") and its last
// launch ("matmul_tiled_kernel<<<grid (2, 2, 1), block (16, 16, 1)>>>"), a
// line each; a student's run (--reference-launches-fd) reads them back.
// Words for the diagnosis only: nothing is judged by them.
void set_launches_fd(int fd);
void note_launch_for_table(const std::string& label, const std::string& launch);
void load_reference_launches(const std::string& table);
// The reference's launch for a label, or "" where none is known.
std::string reference_launch(const std::string& label);
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

// A student's `cudalab test` in CPU mode (CUDALAB_LARGE_SHAPES=grader; its
// --all-shapes turns it off) leaves the shapes of more than 2^26 units of work
// (a matmul's M*N*K) to the grader: they take seconds each on simulated threads,
// every edit, and find nothing the smaller ones miss there, since CPU mode runs
// a block's threads one after another between barriers (a missing
// __syncthreads shows at 64x64x64; on a GPU only from 513x257x129 up). True for
// such a shape, which the check should run smaller (a stand-in that keeps
// what decides its diagnosis: course/include/common/matmul.h cpu_stand_in)
// and name in note_left_to_grader. The grader, in CPU mode too, runs every
// shape as it is.
inline constexpr double kCpuTestWork = double(1 << 26);
bool left_to_grader(double work);
// One note for the shapes a check ran smaller ("1000x1000x1000 as 333x333x333"); none for none.
void note_left_to_grader(const std::vector<std::string>& shapes);

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

// For the report's roofline (grader/views/report_html.cpp): what one call of the
// timed launcher must move and compute (compulsory DRAM bytes, FP32 FLOP),
// and this GPU's peaks, as measurements named chart_* (the text report does
// not print them).
void chart_work(double dram_bytes, double flops);

// Fails the running check with a message for the student (and keeps going).
void require(bool ok, const std::string& message);

}  // namespace cudalab
