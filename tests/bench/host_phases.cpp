// The host work of the two longest correctness checks, phase by phase, with
// no GPU: lab 01's `vector` at its largest length (2^26) and lab 04's
// `multiples` at its largest shape (8192 x 8192, also 2^26 values). On a GPU
// host these phases, not the kernels, are most of those checks' time, and the
// longest check is the warm grade's critical path.
//
//   ninja -C build tests/host-phases-bench && build/tests/host-phases-bench [log2 n]
//
// Each phase runs as the check runs it (the same harness calls; the CPU
// references are the labs' loops, the same code as their test files'), on a
// temporary folder for the evidence files. CUDALAB_HOST_THREADS=1 times the
// serial loops. Prints one line per phase; writes no file that outlives it.
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "cudalab/compare.h"
#include "cudalab/diagnosis.h"
#include "cudalab/evidence.h"
#include "cudalab/parallel.h"
#include "cudalab/random.h"

namespace ev = cudalab::evidence;
namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

double total_s = 0, total_cpu_s = 0;

// This process's CPU time (all its threads): on a shared machine, where the
// wall time says more about the neighbours, the work itself.
double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

template <class Fn>
void phase(const std::string& what, Fn fn) {
  const auto t0 = Clock::now();
  const double c0 = cpu_seconds();
  fn();
  const double s = std::chrono::duration<double>(Clock::now() - t0).count(), cpu = cpu_seconds() - c0;
  total_s += s;
  total_cpu_s += cpu;
  fmt::print("  {:<56} {:7.3f} s  (CPU {:6.3f} s)\n", what, s, cpu);
}

// labs/01_coalescing/test_coalescing.cpp add_cpu.
std::vector<double> add_cpu(const std::vector<float>& a, const std::vector<float>& b) {
  std::vector<double> c(a.size());
  cudalab::parallel_for(a.size(), 1 << 20, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) c[i] = static_cast<double>(a[i]) + b[i];
  });
  return c;
}

// labs/04_transpose/test_transpose.cpp transpose_cpu.
std::vector<double> transpose_cpu(const std::vector<float>& in, int rows, int cols) {
  const std::size_t R = static_cast<std::size_t>(rows), C = static_cast<std::size_t>(cols), kTile = 32;
  std::vector<double> out(in.size());
  const std::size_t bands = (R + kTile - 1) / kTile,
                    bands_per_chunk =
                        std::max<std::size_t>(1, (1 << 20) / (kTile * std::max<std::size_t>(C, 1)));
  cudalab::parallel_for(bands, bands_per_chunk, [&](std::size_t first, std::size_t last) {
    for (std::size_t r0 = first * kTile; r0 < std::min(R, last * kTile); r0 += kTile)
      for (std::size_t c0 = 0; c0 < C; c0 += kTile)
        for (std::size_t r = r0; r < std::min(R, r0 + kTile); ++r)
          for (std::size_t c = c0; c < std::min(C, c0 + kTile); ++c) out[c * R + r] = in[r * C + c];
  });
  return out;
}

// Run::input's host part (harness/src/run.cpp): the copy it keeps and the
// scan for non-finite values.
void keep_input(const std::vector<float>& data) {
  std::vector<float> original = data;
  bool holds_nan = false;
  for (char part : cudalab::map_chunks<char>(data.size(), 1 << 20, [&](std::size_t begin, std::size_t end) {
         return std::any_of(data.begin() + begin, data.begin() + end,
                            [](float v) { return !std::isfinite(v); });
       }))
    holds_nan = holds_nan || part;
  if (holds_nan) fmt::print("(an input holds a NaN)\n");
}

// Run::memory_problems' host part for one input: its hash and the element
// by element comparison with the copy kept.
std::uint64_t check_input(const std::vector<float>& now, const std::vector<float>& original) {
  const std::uint64_t h = ev::hash_bytes(now.data(), now.size() * sizeof(float));
  std::size_t changed = 0;
  for (std::size_t part :
       cudalab::map_chunks<std::size_t>(now.size(), 1 << 20, [&](std::size_t begin, std::size_t end) {
         std::size_t c = 0;
         for (std::size_t k = begin; k < end; ++k)
           c += std::memcmp(&now[k], &original[k], sizeof(float)) != 0;
         return c;
       }))
    changed += part;
  if (changed) fmt::print("(an input changed)\n");
  return h;
}

// One process's evidence: the compared output (and, for the reference's, the
// expected values), written through a descriptor as the test main's is.
void write_evidence(const fs::path& file, const std::string& label, const std::vector<float>& got,
                    const std::vector<double>& expected, std::size_t rows, std::size_t cols,
                    const cudalab::Tolerance& tolerance, bool with_expected, const char* what) {
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  ev::set_sink(fd);
  ev::set_write_expected(with_expected);
  ev::set_enabled(true);
  ev::set_label(label);
  cudalab::CompareOptions options;
  options.tolerance = tolerance;
  phase(fmt::format("{}: evidence written", what),
        [&] { ev::record_compared("out", got, expected, rows, cols, options); });
  ::close(fd);
  ev::set_sink(-1);
  ev::set_enabled(false);
}

void judge(const fs::path& student, const fs::path& reference) {
  ev::Evidence mine, theirs;
  std::string error;
  phase("grader: the reference's evidence read", [&] {
    if (!ev::read(reference.string(), theirs, error)) fmt::print("(unreadable: {})\n", error);
  });
  phase("grader: the student's evidence read", [&] {
    if (!ev::read(student.string(), mine, error)) fmt::print("(unreadable: {})\n", error);
  });
  ev::Verdict v;
  phase("grader: judged", [&] {
    cudalab::diagnosis::begin();
    v = ev::judge(mine, theirs, "values");
    cudalab::diagnosis::end();
  });
  if (!v.ok) fmt::print("(judged wrong: {})\n", v.failures.empty() ? "" : v.failures.front());
}

void vector_check(std::size_t n, const fs::path& dir) {
  fmt::print("lab 01 vector, n = {}:\n", n);
  const double t0 = total_s, c0 = total_cpu_s;
  std::vector<float> a, b;
  phase("random inputs (2 x n)", [&] {
    a = cudalab::uniform_floats(n, 2026, 2 * n);
    b = cudalab::uniform_floats(n, 2026, 2 * n + 1);
  });
  phase("inputs kept and scanned (Run::input, 2 x n)", [&] {
    keep_input(a);
    keep_input(b);
  });
  std::vector<double> expected;
  phase("CPU reference (add_cpu)", [&] { expected = add_cpu(a, b); });
  // The kernel's output: the float sums, as a GPU writes them.
  std::vector<float> got(n);
  for (std::size_t i = 0; i < n; ++i) got[i] = a[i] + b[i];
  phase("inputs hashed and compared (memory_problems, 2 x n)", [&] {
    check_input(a, a);
    check_input(b, b);
  });
  const cudalab::Tolerance tolerance = cudalab::Tolerance::for_sum(2);
  write_evidence(dir / "reference.evidence", "vector_add(n)", got, expected, 1, n, tolerance, true,
                 "reference's process");
  write_evidence(dir / "student.evidence", "vector_add(n)", got, expected, 1, n, tolerance, false,
                 "student's process");
  phase("student's process: compared in process", [&] {
    cudalab::CompareOptions options;
    options.tolerance = tolerance;
    if (!cudalab::compare("c", got, expected, 1, n, options).ok()) fmt::print("(wrong)\n");
  });
  judge(dir / "student.evidence", dir / "reference.evidence");
  fmt::print("  {:<56} {:7.3f} s  (CPU {:6.3f} s)\n", "all of it", total_s - t0, total_cpu_s - c0);
}

void transpose_check(int rows, int cols, const fs::path& dir) {
  const std::size_t n = static_cast<std::size_t>(rows) * cols;
  fmt::print("lab 04 multiples, {} x {}:\n", rows, cols);
  const double t0 = total_s, c0 = total_cpu_s;
  std::vector<float> in;
  phase("random input (n)",
        [&] { in = cudalab::uniform_floats(n, 2026, (static_cast<std::uint64_t>(rows) << 32) ^ cols); });
  phase("input kept and scanned (Run::input)", [&] { keep_input(in); });
  std::vector<double> expected;
  phase("CPU reference (transpose_cpu)", [&] { expected = transpose_cpu(in, rows, cols); });
  std::vector<float> got(expected.begin(), expected.end());
  phase("input hashed and compared (memory_problems)", [&] { check_input(in, in); });
  const cudalab::Tolerance exact{0, 0};
  write_evidence(dir / "reference.evidence", "transpose(n)", got, expected, cols, rows, exact, true,
                 "reference's process");
  write_evidence(dir / "student.evidence", "transpose(n)", got, expected, cols, rows, exact, false,
                 "student's process");
  phase("student's process: compared in process", [&] {
    cudalab::CompareOptions options;
    options.tolerance = exact;
    if (!cudalab::compare("out", got, expected, cols, rows, options).ok()) fmt::print("(wrong)\n");
  });
  judge(dir / "student.evidence", dir / "reference.evidence");
  fmt::print("  {:<56} {:7.3f} s  (CPU {:6.3f} s)\n", "all of it", total_s - t0, total_cpu_s - c0);
}

}  // namespace

int main(int argc, char** argv) {
  const int log2n = argc > 1 ? std::atoi(argv[1]) : 26;
  const std::size_t n = std::size_t{1} << log2n;
  fmt::print("{} hardware threads; a loop of 2^{} takes {}\n", std::thread::hardware_concurrency(), log2n,
             cudalab::loop_threads(n, 1 << 20));
  const fs::path dir = fs::temp_directory_path() / fmt::format("cudalab-host-phases-{}", ::getpid());
  fs::create_directories(dir);
  vector_check(n, dir);
  const int side = 1 << (log2n / 2);
  transpose_check(side, static_cast<int>(n / side), dir);
  fs::remove_all(dir);
  return 0;
}
