// The evidence file (cudalab/evidence.h): written by the test process through
// a descriptor the grader opened, read and judged by the grader.
//
// Format: the magic line, then records until the end of the file. Each record
// is a kind byte and its fields; strings and arrays carry a 64-bit length
// before their bytes. Little-endian, as every machine this runs on.
#include "cudalab/evidence.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "cudalab/buffer.h"
#include "cudalab/diagnosis.h"

namespace cudalab::evidence {

namespace {

constexpr char kMagic[] = "cudalab-evidence/1\n";

struct Sink {
  int fd = -1;
  bool enabled = false;
  bool with_expected = false;
  std::string label;
};

Sink& sink() {
  static Sink s;
  return s;
}

class Writer {
 public:
  void u8(std::uint8_t v) { raw(&v, 1); }
  void u64(std::uint64_t v) { raw(&v, sizeof v); }
  void f64(double v) { raw(&v, sizeof v); }
  void str(const std::string& s) {
    u64(s.size());
    raw(s.data(), s.size());
  }
  template <class T>
  void array(const std::vector<T>& v) {
    u64(v.size());
    raw(v.data(), v.size() * sizeof(T));
  }
  void raw(const void* p, std::size_t n) { buf_.append(static_cast<const char*>(p), n); }

  // One write per record, retried until all of it is out.
  void flush() {
    const int fd = sink().fd;
    const char* p = buf_.data();
    std::size_t left = buf_.size();
    while (fd >= 0 && left > 0) {
      const ssize_t n = ::write(fd, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;  // the judge then finds the evidence cut short
      p += n;
      left -= static_cast<std::size_t>(n);
    }
    buf_.clear();
  }

 private:
  std::string buf_;
};

// Reads straight from the file into the arrays (outputs of 2^26 floats are
// evidence too): no second copy of the whole file in memory.
class Reader {
 public:
  explicit Reader(std::ifstream& in) : in_(in) {
    in_.seekg(0, std::ios::end);
    left_ = static_cast<std::uint64_t>(in_.tellg());
    in_.seekg(0);
  }
  bool at_end() const { return left_ == 0; }
  bool ok() const { return ok_; }
  bool expect(const char* s) {
    const std::size_t n = std::strlen(s);
    std::string got(n, '\0');
    raw(got.data(), n);
    return ok_ = ok_ && got == s;
  }
  std::uint8_t u8() {
    std::uint8_t v = 0;
    raw(&v, 1);
    return v;
  }
  std::uint64_t u64() {
    std::uint64_t v = 0;
    raw(&v, sizeof v);
    return v;
  }
  double f64() {
    double v = 0;
    raw(&v, sizeof v);
    return v;
  }
  std::string str() {
    const std::uint64_t n = u64();
    if (!fits(n, 1)) return {};
    std::string s(n, '\0');
    raw(s.data(), n);
    return s;
  }
  template <class T>
  std::vector<T> array() {
    const std::uint64_t n = u64();
    if (!fits(n, sizeof(T))) return {};
    std::vector<T> v(n);
    raw(v.data(), n * sizeof(T));
    return v;
  }

 private:
  bool fits(std::uint64_t n, std::size_t size) {
    if (!ok_ || n > left_ / size) return ok_ = false;
    return true;
  }
  void raw(void* p, std::size_t n) {
    if (!fits(n, 1)) return;
    in_.read(static_cast<char*>(p), static_cast<std::streamsize>(n));
    if (!in_) ok_ = false;
    left_ -= n;
  }
  std::ifstream& in_;
  std::uint64_t left_ = 0;
  bool ok_ = true;
};

}  // namespace

void set_sink(int fd) {
  sink().fd = fd;
  if (fd < 0) return;
  Writer w;
  w.raw(kMagic, sizeof kMagic - 1);
  w.flush();
}

void set_write_expected(bool on) {
  sink().with_expected = on;
}

void set_enabled(bool on) {
  sink().enabled = on;
}

bool enabled() {
  return sink().fd >= 0 && sink().enabled;
}

void set_label(const std::string& label) {
  sink().label = label;
}

const std::string& label() {
  return sink().label;
}

std::string nothing_written(const std::string& name, std::size_t elements) {
  return fmt::format(
      "the kernel wrote none of the {} elements of {}, so writing nothing outside {} proves nothing: this "
      "check counts only for a launch that writes its output",
      elements, name, name);
}

std::uint64_t hash_bytes(const void* data, std::size_t bytes) {
  std::uint64_t h = 1469598103934665603ULL;
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 1099511628211ULL;
  return h;
}

void record_compared(const std::string& name, const std::vector<float>& got,
                     const std::vector<double>& expected, std::size_t rows, std::size_t cols,
                     const CompareOptions& options) {
  if (!enabled()) return;
  Writer w;
  w.u8(static_cast<std::uint8_t>(Record::Kind::compared));
  w.str(sink().label);
  w.str(name);
  w.u64(rows);
  w.u64(cols);
  w.array(got);
  w.array(sink().with_expected ? expected : std::vector<double>{});
  w.f64(options.tolerance.atol);
  w.f64(options.tolerance.rtol);
  w.array(options.tiles);
  w.flush();
}

void record_memory(const std::vector<BufferState>& buffers) {
  if (!enabled()) return;
  Writer w;
  w.u8(static_cast<std::uint8_t>(Record::Kind::memory));
  w.str(sink().label);
  w.u64(buffers.size());
  for (const auto& b : buffers) {
    w.str(b.name);
    w.u8(b.input ? 1 : 0);
    w.u64(b.count);
    w.u64(b.elem_size);
    w.array(b.guard_before);
    w.array(b.guard_after);
    w.u64(b.content_hash);
  }
  w.flush();
}

bool read(const std::string& path, Evidence& out, std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "no evidence file";
    return false;
  }
  Reader r(in);
  if (!r.expect(kMagic)) {
    error = "the evidence does not start with its format line";
    return false;
  }
  while (!r.at_end() && r.ok()) {
    Record rec;
    const auto kind = r.u8();
    if (kind == static_cast<std::uint8_t>(Record::Kind::compared)) {
      rec.kind = Record::Kind::compared;
      Compared& c = rec.compared;
      c.label = r.str();
      c.name = r.str();
      c.rows = r.u64();
      c.cols = r.u64();
      c.got = r.array<float>();
      c.expected = r.array<double>();
      c.atol = r.f64();
      c.rtol = r.f64();
      c.tiles = r.array<int>();
    } else if (kind == static_cast<std::uint8_t>(Record::Kind::memory)) {
      rec.kind = Record::Kind::memory;
      rec.memory.label = r.str();
      const std::uint64_t n = r.u64();
      for (std::uint64_t i = 0; i < n && r.ok() && i < 64; ++i) {
        BufferState b;
        b.name = r.str();
        b.input = r.u8() != 0;
        b.count = r.u64();
        b.elem_size = r.u64();
        b.guard_before = r.array<std::uint8_t>();
        b.guard_after = r.array<std::uint8_t>();
        b.content_hash = r.u64();
        rec.memory.buffers.push_back(std::move(b));
      }
    } else {
      error = fmt::format("unknown record kind {} in the evidence", kind);
      return false;
    }
    if (r.ok()) out.records.push_back(std::move(rec));
  }
  if (!r.ok()) {
    error = "the evidence is cut short or malformed";
    return false;
  }
  return true;
}

namespace {

std::vector<const Record*> of_kind(const Evidence& e, Record::Kind kind) {
  std::vector<const Record*> out;
  for (const auto& r : e.records)
    if (r.kind == kind) out.push_back(&r);
  return out;
}

std::size_t count_poison(const std::vector<float>& v) {
  std::size_t n = 0;
  for (float x : v) n += is_poison(x) ? 1 : 0;
  return n;
}

// Records of one kind in the same order, for the same launches and outputs;
// otherwise the test process did not run the check as written.
bool same_sequence(const std::vector<const Record*>& s, const std::vector<const Record*>& r, Verdict& v,
                   const char* what) {
  auto describe = [](const Record* x) {
    return x->kind == Record::Kind::compared ? fmt::format("{} of {}", x->compared.name, x->compared.label)
                                             : x->memory.label;
  };
  for (std::size_t i = 0; i < r.size(); ++i) {
    if (i >= s.size()) {
      v.failures.push_back(fmt::format(
          "the check ended before it {} {} ({} of the reference run's {} not reached): the test process "
          "stopped or skipped part of the check",
          what, describe(r[i]), r.size() - i, r.size()));
      return false;
    }
    const bool same =
        s[i]->kind == Record::Kind::compared
            ? s[i]->compared.label == r[i]->compared.label && s[i]->compared.name == r[i]->compared.name &&
                  s[i]->compared.rows == r[i]->compared.rows && s[i]->compared.cols == r[i]->compared.cols &&
                  s[i]->compared.got.size() == r[i]->compared.rows * r[i]->compared.cols
            : s[i]->memory.label == r[i]->memory.label;
    if (!same) {
      v.failures.push_back(
          fmt::format("the check {} {} where the reference's run {} {}: the test process did "
                      "not run the check as written",
                      what, describe(s[i]), what, describe(r[i])));
      return false;
    }
  }
  if (s.size() > r.size()) {
    v.failures.push_back(
        fmt::format("the check {} more outputs than the reference's run ({} instead of {}): the "
                    "test process did not run the check as written",
                    what, s.size(), r.size()));
    return false;
  }
  return true;
}

}  // namespace

Verdict judge(const Evidence& student, const Evidence& reference, const std::string& judge_mode) {
  Verdict v;
  const bool memory_mode = judge_mode == "memory";
  const auto sc = of_kind(student, Record::Kind::compared);
  const auto rc = of_kind(reference, Record::Kind::compared);
  constexpr std::size_t kMaxFailures = 4;
  if (!same_sequence(sc, rc, v, "compared")) {
    v.ok = false;
    return v;
  }
  // The launches' inputs, for a diagnosis that names them (their contents
  // are not in the evidence: whether they hold a NaN is not known here).
  for (const Record* m : of_kind(reference, Record::Kind::memory))
    for (const BufferState& b : m->memory.buffers)
      if (b.input) diagnosis::input(m->memory.label, b.name, -1);
  for (std::size_t i = 0; i < rc.size() && v.failures.size() < kMaxFailures; ++i) {
    const Compared& s = sc[i]->compared;
    const Compared& r = rc[i]->compared;
    if (memory_mode) {
      // The memory check counts only for a launch that wrote its output.
      if (!s.got.empty() && count_poison(s.got) == s.got.size())
        v.failures.push_back(fmt::format("{}: {}", r.label, nothing_written(r.name, s.got.size())));
      continue;
    }
    if (r.expected.size() != r.rows * r.cols) {
      v.failures.push_back(
          fmt::format("{}: the reference's evidence holds no expected values for {}: the "
                      "grader cannot judge this check; tell your instructor",
                      r.label, r.name));
      break;
    }
    CompareOptions options;
    options.tolerance.atol = r.atol;
    options.tolerance.rtol = r.rtol;
    options.tiles = r.tiles;
    set_label(r.label);  // the shape these outputs belong to (cudalab/diagnosis.h)
    const Comparison c = compare(r.name, s.got, r.expected, r.rows, r.cols, options);
    if (!c.ok()) v.failures.push_back(fmt::format("{}: {}", r.label, c.describe()));
  }
  if (memory_mode) {
    const auto sm = of_kind(student, Record::Kind::memory);
    const auto rm = of_kind(reference, Record::Kind::memory);
    if (!same_sequence(sm, rm, v, "checked the memory of")) {
      v.ok = false;
      return v;
    }
    for (std::size_t i = 0; i < rm.size() && v.failures.size() < kMaxFailures; ++i) {
      for (const BufferState& rb : rm[i]->memory.buffers) {
        const BufferState* sb = nullptr;
        for (const auto& b : sm[i]->memory.buffers)
          if (b.name == rb.name) sb = &b;
        const std::string& where = rm[i]->memory.label;
        if (!sb || sb->count != rb.count || sb->elem_size != rb.elem_size ||
            sb->guard_before.size() != rb.guard_before.size() ||
            sb->guard_after.size() != rb.guard_after.size()) {
          v.failures.push_back(
              fmt::format("{}: the buffer {} is missing from the check's evidence", where, rb.name));
          continue;
        }
        for (const auto& m :
             describe_guard_damage(rb.name, rb.elem_size, rb.count, sb->guard_before, sb->guard_after))
          v.failures.push_back(fmt::format("{}: {}", where, m));
        if (rb.input && sb->content_hash != rb.content_hash)
          v.failures.push_back(fmt::format(
              "{}: the kernel changed the input {} (its contents after the launch differ from the reference "
              "run's): inputs must stay read-only",
              where, rb.name));
      }
    }
  }
  v.ok = v.failures.empty();
  return v;
}

}  // namespace cudalab::evidence
