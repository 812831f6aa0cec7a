#include "run/seed.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace fs = std::filesystem;

namespace cudalab {

namespace {

std::uint64_t rotl(std::uint64_t x, int b) {
  return (x << b) | (x >> (64 - b));
}

void sipround(std::uint64_t& v0, std::uint64_t& v1, std::uint64_t& v2, std::uint64_t& v3) {
  v0 += v1, v1 = rotl(v1, 13), v1 ^= v0, v0 = rotl(v0, 32);
  v2 += v3, v3 = rotl(v3, 16), v3 ^= v2;
  v0 += v3, v3 = rotl(v3, 21), v3 ^= v0;
  v2 += v1, v1 = rotl(v1, 17), v1 ^= v2, v2 = rotl(v2, 32);
}

std::uint64_t load_le64(const unsigned char* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// A length-prefixed field, so that no two different sequences of fields
// hash the same bytes.
void field(std::string& out, const std::string& s) {
  out += fmt::format("{}:", s.size());
  out += s;
}

bool parse_key(const std::string& text, GradingKey& key) {
  std::istringstream in(text);
  std::string a, b;
  if (!(in >> a >> b) || a.size() != 16 || b.size() != 16) return false;
  try {
    key.k0 = std::stoull(a, nullptr, 16);
    key.k1 = std::stoull(b, nullptr, 16);
  } catch (const std::exception&) {
    return false;
  }
  return true;
}

}  // namespace

std::uint64_t siphash24(std::uint64_t k0, std::uint64_t k1, const std::string& data) {
  std::uint64_t v0 = 0x736f6d6570736575ULL ^ k0, v1 = 0x646f72616e646f6dULL ^ k1,
                v2 = 0x6c7967656e657261ULL ^ k0, v3 = 0x7465646279746573ULL ^ k1;
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  const std::size_t n = data.size(), whole = n - n % 8;
  for (std::size_t i = 0; i < whole; i += 8) {
    const std::uint64_t m = load_le64(p + i);
    v3 ^= m;
    sipround(v0, v1, v2, v3);
    sipround(v0, v1, v2, v3);
    v0 ^= m;
  }
  std::uint64_t last = static_cast<std::uint64_t>(n & 0xff) << 56;
  for (std::size_t i = 0; i < n % 8; ++i) last |= static_cast<std::uint64_t>(p[whole + i]) << (8 * i);
  v3 ^= last;
  sipround(v0, v1, v2, v3);
  sipround(v0, v1, v2, v3);
  v0 ^= last;
  v2 ^= 0xff;
  for (int i = 0; i < 4; ++i) sipround(v0, v1, v2, v3);
  return v0 ^ v1 ^ v2 ^ v3;
}

GradingKey grading_key(const fs::path& work_dir) {
  const fs::path file = work_dir / "grading.key";
  GradingKey key;
  for (int attempt = 0; attempt < 50; ++attempt) {
    std::ifstream in(file);
    if (in) {
      std::stringstream ss;
      ss << in.rdbuf();
      if (parse_key(ss.str(), key)) return key;
      // Another grader may be writing it right now (O_EXCL below): wait for it.
      usleep(20000);
      continue;
    }
    fs::create_directories(work_dir);
    unsigned char bytes[16];
    const int random = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (random < 0 || ::read(random, bytes, sizeof bytes) != static_cast<ssize_t>(sizeof bytes)) {
      if (random >= 0) ::close(random);
      throw std::runtime_error(
          fmt::format("cannot read /dev/urandom for the grading key: {}", std::strerror(errno)));
    }
    ::close(random);
    key.k0 = load_le64(bytes);
    key.k1 = load_le64(bytes + 8);
    const std::string text = fmt::format("{:016x} {:016x}\n", key.k0, key.k1);
    // Written to a file of its own, then linked into place: readers never
    // see a half-written key, and of two graders the first link wins.
    const fs::path tmp = work_dir / fmt::format("grading.key.{}.tmp", getpid());
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
      throw std::runtime_error(
          fmt::format("cannot write the grading key in {}: {}", work_dir.string(), std::strerror(errno)));
    const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    ::close(fd);
    const bool linked = written && ::link(tmp.c_str(), file.c_str()) == 0;
    std::error_code ec;
    fs::remove(tmp, ec);
    if (linked) return key;
  }
  throw std::runtime_error(fmt::format("cannot read the grading key {}", file.string()));
}

std::string derive_seed(const GradingKey& key, const std::string& course_seed, const std::string& lab,
                        std::vector<std::pair<std::string, std::string>> files) {
  std::sort(files.begin(), files.end());
  std::string data;
  field(data, "cudalab inputs seed v1");
  field(data, course_seed);
  field(data, lab);
  for (const auto& [name, contents] : files) {
    field(data, name);
    field(data, contents);
  }
  // The test binaries read a decimal 64-bit number; 2026 (the public one) is
  // as unlikely as any other.
  return std::to_string(siphash24(key.k0, key.k1, data));
}

}  // namespace cudalab
