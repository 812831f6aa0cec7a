// The evidence a correctness check leaves and the grader's judge of it
// (cudalab/evidence.h): written through a descriptor as the test process
// does, read back and judged as the grader does.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cudalab/buffer.h"
#include "cudalab/catch.h"
#include "cudalab/evidence.h"
#include "testbed.h"

namespace ev = cudalab::evidence;
namespace fs = std::filesystem;

namespace {

struct Launch {
  std::string label = "matmul(M=2 N=3 K=4)";
  std::vector<float> got = {1, 2, 3, 4, 5, 6};
  std::vector<double> expected = {1, 2, 3, 4, 5, 6};
  std::vector<std::uint8_t> guard_after = cudalab::guard_zone("C", true, 64);
  std::uint64_t input_hash = 42;
};

// Whose run writes the evidence: the reference's writes the expected values
// in place of its outputs (the test main's --evidence-expected).
enum class Run { student, reference };

// Writes one check's evidence as the harness does, for these launches.
ev::Evidence write_and_read(const std::vector<Launch>& launches, const std::string& tag, Run run) {
  const bool with_expected = run == Run::reference;
  const fs::path file = fs::temp_directory_path() / ("cudalab-evidence-" + tag + ".bin");
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  REQUIRE(fd >= 0);
  ev::set_sink(fd);
  ev::set_enabled(true);
  ev::set_write_expected(with_expected);
  for (const auto& l : launches) {
    ev::set_label(l.label);
    ev::BufferState a;
    a.name = "A", a.input = true, a.count = 8, a.elem_size = 4, a.content_hash = l.input_hash;
    a.guard_before = cudalab::guard_zone("A", false, 64);
    a.guard_after = cudalab::guard_zone("A", true, 64);
    ev::BufferState c;
    c.name = "C", c.count = 6, c.elem_size = 4;
    c.guard_before = cudalab::guard_zone("C", false, 64);
    c.guard_after = l.guard_after;
    ev::record_memory({a, c});
    cudalab::CompareOptions options;
    options.tolerance.atol = 1e-3;
    options.tolerance.rtol = 0;
    ev::record_compared("C", l.got, l.expected, 2, 3, options);
  }
  ev::set_enabled(false);
  ev::set_sink(-1);
  ::close(fd);
  ev::Evidence out;
  std::string error;
  REQUIRE(ev::read(file.string(), out, error));
  CHECK(error.empty());
  fs::remove(file);
  return out;
}

std::string all(const ev::Verdict& v) {
  std::string s;
  for (const auto& f : v.failures) s += f + "\n";
  return s;
}

}  // namespace

TEST_CASE("evidence written through a descriptor reads back record for record", "[evidence][harness]") {
  Launch l;
  const ev::Evidence e = write_and_read({l, l}, "roundtrip", Run::student);
  REQUIRE(e.records.size() == 4);
  CHECK(e.records[0].kind == ev::Record::Kind::memory);
  CHECK(e.records[0].memory.label == "matmul(M=2 N=3 K=4)");
  REQUIRE(e.records[0].memory.buffers.size() == 2);
  CHECK(e.records[0].memory.buffers[0].content_hash == 42);
  CHECK(e.records[1].kind == ev::Record::Kind::compared);
  CHECK(e.records[1].compared.got == l.got);
  CHECK(e.records[1].compared.expected.empty());
  CHECK(e.records[1].compared.atol == 1e-3);
  // The reference's run writes what its outputs were held to instead of them.
  const ev::Evidence r = write_and_read({l}, "roundtrip-reference", Run::reference);
  REQUIRE(r.records.size() == 2);
  CHECK(r.records[1].compared.got.empty());
  CHECK(r.records[1].compared.expected == l.expected);
  CHECK(r.records[1].compared.rows == 2);
  CHECK(r.records[1].compared.cols == 3);
}

TEST_CASE("a reference's evidence judged as a student's is refused: it holds no outputs",
          "[evidence][harness]") {
  const Launch l;
  const auto r = write_and_read({l}, "r-as-s", Run::reference);
  const auto v = ev::judge(r, r, "values");
  CHECK_FALSE(v.ok);
  CHECK(all(v).find("not run the check as written") != std::string::npos);
}

TEST_CASE("outputs of millions of values are written, read back in parts and judged", "[evidence][harness]") {
  // More than two of the reader's 16 MiB parts, with a tail; the writer sends
  // the arrays from where they are.
  Launch big;
  const std::size_t n = (std::size_t{9} << 20) + 3;
  big.got.resize(n);
  big.expected.resize(n);
  for (std::size_t i = 0; i < n; ++i) big.got[i] = static_cast<float>(i % 4099) * 0.25f;
  for (std::size_t i = 0; i < n; ++i) big.expected[i] = big.got[i];
  const auto write = [&](const fs::path& file, bool reference) {
    const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    REQUIRE(fd >= 0);
    ev::set_sink(fd);
    ev::set_enabled(true);
    ev::set_write_expected(reference);
    ev::set_label("big(n)");
    ev::record_compared("C", big.got, big.expected, 1, n, {});
    ev::set_enabled(false);
    ev::set_sink(-1);
    ::close(fd);
  };
  const fs::path s = fs::temp_directory_path() / "cudalab-evidence-big-s.bin";
  const fs::path r = fs::temp_directory_path() / "cudalab-evidence-big-r.bin";
  write(s, false);
  write(r, true);
  ev::Evidence mine, theirs;
  std::string error;
  REQUIRE(ev::read(s.string(), mine, error));
  REQUIRE(ev::read(r.string(), theirs, error));
  REQUIRE(mine.records.size() == 1);
  CHECK(mine.records[0].compared.got == big.got);
  CHECK(theirs.records[0].compared.expected == big.expected);
  CHECK(ev::judge(mine, theirs, "values").ok);
  big.got[n - 1] += 1.0f;  // the last element, in the reader's last part
  write(s, false);
  mine = {};
  REQUIRE(ev::read(s.string(), mine, error));
  const auto v = ev::judge(mine, theirs, "values");
  CHECK_FALSE(v.ok);
  CHECK(all(v).find("1 of") != std::string::npos);
  // Cut in the middle of the outputs: refused, not read as a shorter output.
  fs::resize_file(s, fs::file_size(s) / 2);
  mine = {};
  CHECK_FALSE(ev::read(s.string(), mine, error));
  CHECK(error.find("cut short") != std::string::npos);
  fs::remove(s);
  fs::remove(r);
}

TEST_CASE("the inputs' hash changes with any one word, wherever it lies", "[evidence][harness]") {
  // Blocks of 1 MiB hashed on their own: words in the first, at the edges of
  // a block, in the last, and the bytes past the last whole 32.
  std::vector<unsigned char> bytes((std::size_t{3} << 20) + 37);
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<unsigned char>(i * 131 + 7);
  const std::uint64_t h = ev::hash_bytes(bytes.data(), bytes.size());
  CHECK(h == ev::hash_bytes(bytes.data(), bytes.size()));
  const std::size_t block = std::size_t{1} << 20;
  for (std::size_t at : {std::size_t{0}, std::size_t{9}, block - 1, block, 2 * block + 8, bytes.size() - 40,
                         bytes.size() - 5, bytes.size() - 1}) {
    CAPTURE(at);
    for (unsigned char flip : {0x01, 0x80}) {
      bytes[at] ^= flip;
      CHECK(ev::hash_bytes(bytes.data(), bytes.size()) != h);
      bytes[at] ^= flip;
    }
  }
  // Two words swapped, and the same bytes one shorter.
  std::swap(bytes[8], bytes[16]);
  CHECK(ev::hash_bytes(bytes.data(), bytes.size()) != h);
  std::swap(bytes[8], bytes[16]);
  CHECK(ev::hash_bytes(bytes.data(), bytes.size() - 1) != h);
  CHECK(ev::hash_bytes(bytes.data(), 0) != ev::hash_bytes(bytes.data(), 1));
}

TEST_CASE("outputs that match the reference's expected values are judged correct", "[evidence][harness]") {
  const Launch ref;
  Launch mine;
  mine.got[4] += 1e-4f;  // within the reference's tolerance
  // A student's run does not write the expected values; the reference's does.
  const ev::Evidence s = write_and_read({mine}, "s1", Run::student);
  CHECK(s.records[1].compared.expected.empty());
  const auto v = ev::judge(s, write_and_read({ref}, "r1", Run::reference), "values");
  CHECK(v.ok);
  CHECK(v.failures.empty());
  // A reference's evidence without them cannot judge anything.
  CHECK_FALSE(ev::judge(s, write_and_read({ref}, "r1b", Run::student), "values").ok);
}

TEST_CASE("a wrong output fails however the test process judged it, with the harness's own diagnosis",
          "[evidence][harness]") {
  const Launch ref;
  Launch mine;
  mine.got[5] = 0;
  const auto v = ev::judge(write_and_read({mine}, "s2", Run::student),
                           write_and_read({ref}, "r2", Run::reference), "values");
  CHECK_FALSE(v.ok);
  REQUIRE(v.failures.size() == 1);
  CHECK(v.failures[0].find("matmul(M=2 N=3 K=4)") == 0);
  CHECK(v.failures[0].find("1 of 6 elements are wrong") != std::string::npos);
}

TEST_CASE("the tolerance comes from the reference's evidence, never from the student's",
          "[evidence][harness]") {
  Launch ref;
  Launch mine;
  mine.got[0] = 1.5f;  // far outside 1e-3
  ev::Evidence s = write_and_read({mine}, "s3", Run::student);
  s.records[1].compared.atol = 1e9;  // a forged tolerance
  s.records[1].compared.expected = {1.5, 2, 3, 4, 5, 6};
  const auto v = ev::judge(s, write_and_read({ref}, "r3", Run::reference), "values");
  CHECK_FALSE(v.ok);
}

TEST_CASE("a check that stops early or compares other launches is not judged correct",
          "[evidence][harness]") {
  const Launch ref;
  Launch other;
  other.label = "matmul(M=1 N=1 K=1)";
  const auto r = write_and_read({ref, ref}, "r4", Run::reference);
  const auto short_run = ev::judge(write_and_read({ref}, "s4", Run::student), r, "values");
  CHECK_FALSE(short_run.ok);
  CHECK(all(short_run).find("ended before") != std::string::npos);
  const auto wrong_launch = ev::judge(write_and_read({ref, other}, "s5", Run::student), r, "values");
  CHECK_FALSE(wrong_launch.ok);
  CHECK(all(wrong_launch).find("not run the check as written") != std::string::npos);
  const auto nothing = ev::judge(ev::Evidence{}, r, "values");
  CHECK_FALSE(nothing.ok);
}

TEST_CASE("the memory judge finds writes past the end and changed inputs, not wrong values",
          "[evidence][harness]") {
  const Launch ref;
  Launch wrong_values;
  wrong_values.got = {9, 9, 9, 9, 9, 9};
  CHECK(ev::judge(write_and_read({wrong_values}, "s6", Run::student),
                  write_and_read({ref}, "r6", Run::reference), "memory")
            .ok);

  Launch past_end;
  past_end.guard_after[4] = 0;  // the second float after C
  const auto v = ev::judge(write_and_read({past_end}, "s7", Run::student),
                           write_and_read({ref}, "r7", Run::reference), "memory");
  CHECK_FALSE(v.ok);
  CHECK(all(v).find("past the end of C") != std::string::npos);

  Launch changed;
  changed.input_hash = 7;
  const auto w = ev::judge(write_and_read({changed}, "s8", Run::student),
                           write_and_read({ref}, "r8", Run::reference), "memory");
  CHECK_FALSE(w.ok);
  CHECK(all(w).find("changed the input A") != std::string::npos);
}

TEST_CASE("a memory check does not pass for a launch that wrote none of its output", "[evidence][harness]") {
  const Launch ref;
  Launch nothing;
  nothing.got.assign(6, testbed::poison());
  const auto v = ev::judge(write_and_read({nothing}, "s9", Run::student),
                           write_and_read({ref}, "r9", Run::reference), "memory");
  CHECK_FALSE(v.ok);
  CHECK(all(v).find("wrote none of the 6 elements of C") != std::string::npos);
  Launch some;
  some.got[0] = testbed::poison();  // partly written: its values are another check's business
  CHECK(ev::judge(write_and_read({some}, "s10", Run::student), write_and_read({ref}, "r10", Run::reference),
                  "memory")
            .ok);
}

TEST_CASE("a replay's outputs are judged only at the launches where the student's own run was right",
          "[evidence][harness]") {
  const Launch ref;
  Launch small = ref, large = ref;
  small.label = "matmul(M=2 N=3 K=4)";
  large.label = "matmul(M=20 N=30 K=40)";
  Launch large_wrong = large;
  large_wrong.got[3] = 100;
  const auto reference = write_and_read({small, large}, "r11", Run::reference);
  const auto student = write_and_read({small, large_wrong}, "s11", Run::student);
  const auto right = ev::labels_right(student, reference);
  REQUIRE(right.size() == 1);
  CHECK(right[0] == small.label);
  // Only that launch's records: memory and compared, as written.
  const auto kept = ev::only_labels(reference, right);
  REQUIRE(kept.records.size() == 2);
  for (const auto& r : kept.records)
    CHECK((r.kind == ev::Record::Kind::compared ? r.compared.label : r.memory.label) == small.label);
  // A replay wrong where the student's run was right fails there; wrong
  // where it was wrong too is not this judgement's business.
  Launch small_wrong = small;
  small_wrong.got[0] = -7;
  const auto replay_bad = write_and_read({small_wrong, large}, "s12", Run::student);
  CHECK_FALSE(ev::judge(ev::only_labels(replay_bad, right), kept, "values").ok);
  const auto replay_same = write_and_read({small, large_wrong}, "s13", Run::student);
  CHECK(ev::judge(ev::only_labels(replay_same, right), kept, "values").ok);
}

TEST_CASE("evidence cut short or of another format is refused with a reason", "[evidence][harness]") {
  const fs::path file = fs::temp_directory_path() / "cudalab-evidence-bad.bin";
  {
    std::ofstream out(file, std::ios::binary);
    out << "cudalab-record/1\n";
  }
  ev::Evidence e;
  std::string error;
  CHECK_FALSE(ev::read(file.string(), e, error));
  CHECK(error.find("format") != std::string::npos);
  // A whole file, then cut in the middle of its last record.
  const Launch l;
  (void)write_and_read({l}, "cut", Run::student);
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ev::set_sink(fd);
  ev::set_enabled(true);
  ev::record_compared("C", l.got, l.expected, 2, 3, {});
  ev::set_sink(-1);
  ::close(fd);
  fs::resize_file(file, fs::file_size(file) - 5);
  error.clear();
  CHECK_FALSE(ev::read(file.string(), e, error));
  CHECK(error.find("cut short") != std::string::npos);
  CHECK_FALSE(ev::read((fs::temp_directory_path() / "cudalab-no-such-evidence").string(), e, error));
  fs::remove(file);
}
