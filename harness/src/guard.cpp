// Host-only part of the guard zones: their size and the damage report.
#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <cstring>

#include "cudalab/buffer.h"

namespace cudalab {

std::size_t guard_bytes() {
  static const std::size_t bytes = [] {
    std::size_t b = 64 * 1024;
    if (const char* env = std::getenv("CUDALAB_GUARD_BYTES")) b = std::strtoull(env, nullptr, 10);
    return (b + 255) / 256 * 256;  // keep the user pointer 256-byte aligned, as cudaMalloc's
  }();
  return bytes;
}

bool is_poison(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits == 0xFFFFFFFFu;
}

NanOrigin nan_origin(float value) {
  if (!std::isnan(value)) return NanOrigin::not_nan;
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  if (bits == 0xFFFFFFFFu) return NanOrigin::output_poison;
  if ((bits & 0xFFFF0000u) == kGuardNanHigh || bits == kDeviceSlackNan) return NanOrigin::input_guard;
  if (bits == kSharedPoisonNan) return NanOrigin::shared_poison;
  return NanOrigin::other;
}

std::vector<std::uint8_t> guard_zone(const std::string& name, bool after, std::size_t bytes) {
  // FNV-1a of the name: the same in the test process and in the grader,
  // which checks the zones of the evidence by the buffer's name.
  std::uint32_t h = 2166136261u;
  for (unsigned char c : name) h = (h ^ c) * 16777619u;
  if (after) h ^= 0x9E3779B9u;
  std::vector<std::uint8_t> zone(bytes);
  for (std::size_t i = 0; i < bytes; i += 4) {
    const std::uint32_t word = kGuardNanHigh | ((h + static_cast<std::uint32_t>(i / 4) * 40503u) & 0xFFFFu);
    std::uint8_t b[4];
    std::memcpy(b, &word, 4);  // little-endian on every host cudalab runs on, as on the GPU
    for (std::size_t k = 0; k < 4 && i + k < bytes; ++k) zone[i + k] = b[k];
  }
  return zone;
}

void keep_damage(const std::vector<std::uint8_t>& intact, const std::vector<std::uint8_t>& now,
                 std::vector<std::uint8_t>& seen) {
  if (now.size() != intact.size() || now == intact) return;
  if (seen.size() != intact.size()) seen = intact;
  for (std::size_t i = 0; i < now.size(); ++i)
    if (now[i] != intact[i]) seen[i] = now[i];
}

void with_damage_seen(const std::vector<std::uint8_t>& intact, const std::vector<std::uint8_t>& seen,
                      std::vector<std::uint8_t>& zone) {
  if (seen.size() != intact.size() || zone.size() != intact.size()) return;
  for (std::size_t i = 0; i < zone.size(); ++i)
    if (zone[i] == intact[i] && seen[i] != intact[i]) zone[i] = seen[i];
}

namespace {

// Indices (in elements, relative to the buffer's start) of damaged elements.
std::vector<long long> damaged(const std::vector<std::uint8_t>& zone, const std::vector<std::uint8_t>& intact,
                               std::size_t elem_size, long long first_index) {
  std::vector<long long> out;
  for (std::size_t e = 0; e * elem_size < zone.size(); ++e) {
    for (std::size_t b = 0; b < elem_size && e * elem_size + b < zone.size(); ++b) {
      if (zone[e * elem_size + b] != intact[e * elem_size + b]) {
        out.push_back(first_index + static_cast<long long>(e));
        break;
      }
    }
  }
  return out;
}

std::string plural(std::size_t n, std::size_t elem_size) {
  const char* noun = elem_size == 4 ? "float" : "element";
  return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s");
}

}  // namespace

std::vector<std::string> describe_guard_damage(const std::string& name, std::size_t elem_size,
                                               std::size_t count, const std::vector<std::uint8_t>& before,
                                               const std::vector<std::uint8_t>& after) {
  std::vector<std::string> messages;
  const auto lo = damaged(before, guard_zone(name, false, before.size()), elem_size,
                          -static_cast<long long>(before.size() / elem_size));
  if (!lo.empty()) {
    messages.push_back(
        fmt::format("wrote {} before the start of {} (nearest at {}[{}], farthest at {}[{}]): an index went "
                    "negative, or a thread outside the matrix was not stopped by a boundary check",
                    plural(lo.size(), elem_size), name, name, lo.back(), name, lo.front()));
  }
  const auto hi =
      damaged(after, guard_zone(name, true, after.size()), elem_size, static_cast<long long>(count));
  // A buffer of one value (a sum, or a vector of length 1) has no elements
  // to count: a store past it is a thread past the end, or a slot per block.
  if (!hi.empty() && count == 1) {
    messages.push_back(fmt::format(
        "wrote {} past the end of {} (first at {}[{}]), which holds one value: a thread past the end of the "
        "data was not stopped by a boundary check, or a store at an index like {}[blockIdx.x] where only {} "
        "itself (index 0) exists",
        plural(hi.size(), elem_size), name, name, hi.front(), name, name));
  } else if (!hi.empty()) {
    messages.push_back(
        fmt::format("wrote {} past the end of {} (first at {}[{}], {} element{} long): a thread outside the "
                    "data was not stopped by a boundary check",
                    plural(hi.size(), elem_size), name, name, hi.front(), count, count == 1 ? "" : "s"));
  }
  return messages;
}

}  // namespace cudalab
