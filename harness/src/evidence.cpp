// The evidence file (cudalab/evidence.h): written by the test process through
// a descriptor the grader opened, read and judged by the grader.
//
// Format: the magic line, then records until the end of the file. Each record
// is a kind byte and its fields; strings and arrays carry a 64-bit length
// before their bytes. Little-endian, as every machine this runs on.
#include "cudalab/evidence.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

#include "cudalab/buffer.h"
#include "cudalab/diagnosis.h"
#include "cudalab/parallel.h"

namespace cudalab::evidence {

namespace {

constexpr char kMagic[] = "cudalab-evidence/1\n";

struct Sink {
  int fd = -1;
  bool enabled = false;
  bool with_expected = false;
  // A write failed (a full disk): nothing more goes out, so the judge finds
  // the evidence cut short rather than records with a hole in them.
  bool broken = false;
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
  // A large array (an output of 2^26 floats) goes out from where it is,
  // after what the record holds before it: no copy of a quarter GiB.
  template <class T>
  void array(const std::vector<T>& v) {
    u64(v.size());
    const std::size_t bytes = v.size() * sizeof(T);
    if (bytes < kDirect) return raw(v.data(), bytes);
    flush();
    write_all(v.data(), bytes);
  }
  void raw(const void* p, std::size_t n) { buf_.append(static_cast<const char*>(p), n); }

  // The record's bytes so far, retried until all of them are out.
  void flush() {
    write_all(buf_.data(), buf_.size());
    buf_.clear();
  }

 private:
  static constexpr std::size_t kDirect = std::size_t{1} << 16;
  void write_all(const void* data, std::size_t left) {
    const int fd = sink().broken ? -1 : sink().fd;
    const char* p = static_cast<const char*>(data);
    while (fd >= 0 && left > 0) {
      const ssize_t n = ::write(fd, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        sink().broken = true;
        break;
      }
      p += n;
      left -= static_cast<std::size_t>(n);
    }
  }
  std::string buf_;
};

// Reads straight from the file into the arrays (outputs of 2^26 floats are
// evidence too): no second copy of the whole file in memory, and a large
// array read in parts on several threads.
class Reader {
 public:
  explicit Reader(int fd) : fd_(fd) {
    struct stat st {};
    if (::fstat(fd_, &st) != 0 || st.st_size < 0) {
      ok_ = false;
      return;
    }
    left_ = static_cast<std::uint64_t>(st.st_size);
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
    // Huge pages, asked for before the array is first touched: the grader's
    // malloc is not given them as the checks' is (GLIBC_TUNABLES).
    std::vector<T> v;
    v.reserve(n);
    advise_huge_pages(v.data(), n * sizeof(T));
    v.resize(n);
    raw(v.data(), n * sizeof(T));
    return v;
  }

 private:
  static constexpr std::size_t kPart = std::size_t{16} << 20;

  bool fits(std::uint64_t n, std::size_t size) {
    if (!ok_ || n > left_ / size) return ok_ = false;
    return true;
  }
  void raw(void* p, std::size_t n) {
    if (!fits(n, 1)) return;
    std::atomic<bool> whole{true};
    parallel_for(n, kPart, [&](std::size_t begin, std::size_t end) {
      if (!read_at(static_cast<char*>(p) + begin, end - begin, offset_ + begin)) whole = false;
    });
    if (!whole) ok_ = false;
    offset_ += n;
    left_ -= n;
  }
  // n bytes at `offset`; false if the file ends before them or cannot be read.
  bool read_at(char* p, std::size_t n, std::uint64_t offset) const {
    while (n > 0) {
      const ssize_t got = ::pread(fd_, p, n, static_cast<off_t>(offset));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) return false;
      p += got;
      n -= static_cast<std::size_t>(got);
      offset += static_cast<std::uint64_t>(got);
    }
    return true;
  }
  int fd_;
  std::uint64_t offset_ = 0, left_ = 0;
  bool ok_ = true;
};

}  // namespace

void set_sink(int fd) {
  sink().fd = fd;
  sink().broken = false;
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

namespace {

constexpr std::uint64_t kFnvOffset = 1469598103934665603ULL, kFnvPrime = 1099511628211ULL;
// Blocks hashed on their own, then their hashes in order: a block per
// thread, and the same hash with any number of threads.
constexpr std::size_t kHashBlock = std::size_t{1} << 20;

std::uint64_t finish(std::uint64_t z) {  // splitmix64's output function
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// FNV-1a over 8-byte words in four interleaved lanes (one multiply chain
// would wait on itself), the bytes past the last whole 32 one by one. Each
// step, (h ^ w) * odd prime, is a bijection of h and of w: a change to any
// one word always changes its lane, and so the block's hash.
std::uint64_t hash_block(const unsigned char* p, std::size_t n) {
  std::uint64_t lane[4] = {kFnvOffset, kFnvOffset + 1, kFnvOffset + 2, kFnvOffset + 3};
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32)
    for (int j = 0; j < 4; ++j) {
      std::uint64_t w;
      std::memcpy(&w, p + i + 8 * j, sizeof w);
      lane[j] = (lane[j] ^ w) * kFnvPrime;
    }
  std::uint64_t h = kFnvOffset;
  for (std::uint64_t l : lane) h = (h ^ finish(l)) * kFnvPrime;
  for (; i < n; ++i) h = (h ^ p[i]) * kFnvPrime;
  return h;
}

}  // namespace

std::uint64_t hash_bytes(const void* data, std::size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  const std::vector<std::uint64_t> blocks = map_chunks<std::uint64_t>(
      bytes, kHashBlock,
      [&](std::size_t begin, std::size_t end) { return hash_block(p + begin, end - begin); });
  std::uint64_t h = (kFnvOffset ^ bytes) * kFnvPrime;
  for (std::uint64_t b : blocks) h = (h ^ b) * kFnvPrime;
  return finish(h);
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
  // The reference's run: the expected values, which the judge holds the
  // student's outputs to; its own outputs, never read, stay out (an output
  // of 2^26 floats is a quarter GiB to write and to read back).
  // (Branches, not `?:`, which would copy the vector it picks.)
  if (sink().with_expected) {
    w.array(std::vector<float>{});
    w.array(expected);
  } else {
    w.array(got);
    w.array(std::vector<double>{});
  }
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
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error = "no evidence file";
    return false;
  }
  struct Close {
    int fd;
    ~Close() { ::close(fd); }
  } close_it{fd};
  Reader r(fd);
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

namespace {

const std::string& label_of(const Record& r) {
  return r.kind == Record::Kind::compared ? r.compared.label : r.memory.label;
}

}  // namespace

Evidence only_labels(const Evidence& evidence, const std::vector<std::string>& labels) {
  Evidence out;
  for (const Record& r : evidence.records)
    if (std::find(labels.begin(), labels.end(), label_of(r)) != labels.end()) out.records.push_back(r);
  return out;
}

std::vector<std::string> labels_right(const Evidence& student, const Evidence& reference) {
  std::vector<std::string> labels, right;
  for (const Record* r : of_kind(reference, Record::Kind::compared))
    if (std::find(labels.begin(), labels.end(), r->compared.label) == labels.end())
      labels.push_back(r->compared.label);
  for (const std::string& l : labels)
    if (judge(only_labels(student, {l}), only_labels(reference, {l}), "values").ok) right.push_back(l);
  return right;
}

}  // namespace cudalab::evidence
