// cudalab/buffer.h: device buffers with guard zones.
//
// Every buffer a student kernel sees sits between two guard zones filled with
// a known byte pattern. After the run the zones are read back: a kernel that
// wrote past the end of C is reported as "wrote 37 floats past the end of C
// (first at C[1000003])", which compute-sanitizer cannot report because the
// write lands inside our allocation. Outputs are poisoned with 0xFF bytes (a
// NaN that no arithmetic produces) before each run, so an element the kernel
// never wrote is recognisable.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace cudalab {

inline constexpr std::uint8_t kGuardByte = 0xCD;
inline constexpr std::uint8_t kPoisonByte = 0xFF;

// Guard zone size in bytes: CUDALAB_GUARD_BYTES, default 64 KiB. 0 allocates
// buffers exactly, which is what compute-sanitizer's memcheck needs to see
// out-of-bounds accesses.
std::size_t guard_bytes();

// True if the float's bits are the poison pattern.
bool is_poison(float value);

// Describes writes into the guard zones of a buffer of `count` elements of
// `elem_size` bytes; empty if both zones are intact. Host-only, unit-tested.
// Elements of 4 bytes are called floats: "wrote 3 floats past the end of C".
std::vector<std::string> describe_guard_damage(const std::string& name, std::size_t elem_size,
                                               std::size_t count, const std::vector<std::uint8_t>& before,
                                               const std::vector<std::uint8_t>& after);

// One guarded device allocation of raw bytes.
class GuardedBuffer {
 public:
  GuardedBuffer(std::string name, std::size_t count, std::size_t elem_size);
  ~GuardedBuffer();
  GuardedBuffer(GuardedBuffer&& other) noexcept;
  GuardedBuffer& operator=(GuardedBuffer&&) = delete;
  GuardedBuffer(const GuardedBuffer&) = delete;
  GuardedBuffer& operator=(const GuardedBuffer&) = delete;

  void* data() const { return user_; }
  std::size_t count() const { return count_; }
  std::size_t bytes() const { return count_ * elem_size_; }
  const std::string& name() const { return name_; }

  void upload(const void* host);
  void download(void* host) const;
  void poison();
  // Messages for each guard zone written; empty when both are intact.
  std::vector<std::string> guard_damage() const;
  // The zones' raw bytes (empty without guard zones), for the evidence.
  void guard_zones(std::vector<std::uint8_t>& before, std::vector<std::uint8_t>& after) const;

 private:
  std::string name_;
  std::size_t count_, elem_size_, guard_;
  unsigned char* base_ = nullptr;
  unsigned char* user_ = nullptr;
};

}  // namespace cudalab
