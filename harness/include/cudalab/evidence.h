// cudalab/evidence.h: what a check's kernels produced, for a judge outside the
// test process.
//
// The test process runs the student's native code, so nothing it decides
// about itself can be trusted: host code can call the harness, corrupt its
// memory or end the process early. So while a correctness check runs, the
// harness writes its *evidence* to a file descriptor the grader opened: every
// output it compared (the raw floats) and, after each launch, each buffer's
// guard zones and a hash of each input. The grader runs the same check with
// the reference solution (the same seed, a process with no student code),
// whose evidence holds the expected values (in place of its own outputs,
// which the judge never reads) and the tolerance, and judges
// the student's evidence against it with the same comparison the harness
// uses. The student process's own verdict can then only lower a score.
//
// How a check is judged comes from its lab.toml (`judge`), read by the
// grader, never from the evidence of the student:
//   values  (default) every compared output must match the reference's
//           expected values within the reference's tolerance;
//   memory  guard zones intact, inputs unchanged, and some of each output
//           written (its values are the other checks' business).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cudalab/compare.h"

namespace cudalab::evidence {

struct Compared {
  std::string label;  // the launch it belongs to: "matmul_tiled(M=17 N=33 K=9)"
  std::string name;   // the output: "C"
  std::uint64_t rows = 0, cols = 0;
  std::vector<float> got;        // the outputs (a student's evidence; empty in the reference's)
  std::vector<double> expected;  // what the harness compared with (the reference's evidence)
  double atol = 0, rtol = 0;
  std::vector<int> tiles;
};

struct BufferState {
  std::string name;
  bool input = false;
  std::uint64_t count = 0, elem_size = 0;
  std::vector<std::uint8_t> guard_before, guard_after;  // raw guard zones after the launch
  std::uint64_t content_hash = 0;                       // inputs: the contents after the launch
};

struct Memory {
  std::string label;
  std::vector<BufferState> buffers;
};

struct Record {
  enum class Kind : std::uint8_t { compared = 1, memory = 2 } kind = Kind::compared;
  Compared compared;
  Memory memory;
};

struct Evidence {
  std::vector<Record> records;
};

// --- writing (the test process) ---------------------------------------------

// Evidence goes to this descriptor (the test main's --evidence-fd); -1: none.
void set_sink(int fd);
// Whether the expected values go in place of the outputs: the reference's
// run (the test main's --evidence-expected); a student's writes its outputs.
void set_write_expected(bool on);
// Whether the running check writes evidence (only correctness checks do).
void set_enabled(bool on);
bool enabled();
// The launch whose outputs and buffers the next records describe.
void set_label(const std::string& label);
const std::string& label();
// Called by cudalab::compare and cudalab::Run::memory_problems.
void record_compared(const std::string& name, const std::vector<float>& got,
                     const std::vector<double>& expected, std::size_t rows, std::size_t cols,
                     const CompareOptions& options);
void record_memory(const std::vector<BufferState>& buffers);

// The memory check's failure for a launch that wrote none of its output (the
// same words in the test process and from the judge).
std::string nothing_written(const std::string& name, std::size_t elements);

// The inputs' contents, compared with the reference's: FNV-1a over 8-byte
// words, in blocks hashed on up to cudalab::kMaxThreads threads (2^26 floats
// are a quarter of a GiB). The same value for the same bytes in every
// process and with any number of threads; any change to one word changes it.
std::uint64_t hash_bytes(const void* data, std::size_t bytes);

// --- reading and judging (the grader) ---------------------------------------

// Parses an evidence file; false with a reason if it is malformed or cut short.
bool read(const std::string& path, Evidence& out, std::string& error);

struct Verdict {
  bool ok = true;
  std::vector<std::string> failures;  // for the student: what, where, the likely cause
};

// Judges the student's evidence against the reference's for one check;
// judge_mode is the check's lab.toml `judge` ("values" or "memory").
Verdict judge(const Evidence& student, const Evidence& reference, const std::string& judge_mode);

// The launches (labels) whose every compared output matches the reference's
// expected values, as judge's "values" would find them.
std::vector<std::string> labels_right(const Evidence& student, const Evidence& reference);
// The records of these launches only.
Evidence only_labels(const Evidence& evidence, const std::vector<std::string>& labels);

}  // namespace cudalab::evidence
