// cudalab/buffer.h: device buffers with guard zones.
//
// Every buffer a student kernel sees sits between two guard zones filled with
// a known byte pattern. After the run the zones are read back: a kernel that
// wrote past the end of C is reported as "wrote 37 floats past the end of C
// (first at C[1000003])", which compute-sanitizer cannot report because the
// write lands inside our allocation. Outputs are poisoned with 0xFF bytes (a
// NaN that no arithmetic produces) before each run, so an element the kernel
// never wrote is recognisable.
//
// The guard zones hold NaNs too, so that a *read* past the end of an input
// poisons what it feeds: with a finite guard (0xCD bytes, -4.3e8, before) a
// tiled matmul whose B load lacked its row bound passed every check, because
// the matching A element was 0 and 0 x finite = 0. Each 4-byte word of a zone
// is a quiet NaN 0x7FF8'xxxx (a NaN as a double too: its high word is a double
// NaN's), not the outputs' 0xFFFFFFFF, so that
//  - a store past the end of an output is still seen: a kernel that copies
//    a poisoned (unwritten) value, or a NaN it computed, into the guard zone
//    writes bits unlike the zone's. A zone equal to the poison would take
//    such a store for intact, and one equal to another buffer's zone would
//    take a copy kernel's read past the end of `a`, stored past the end of
//    `out`, for intact: so the low 16 bits depend on the buffer's name, the
//    zone (before or after) and the word's position;
//  - a wrong element tells where its NaN came from in CPU mode, where x86
//    arithmetic keeps the payload of a NaN operand (nan_origin below): a
//    read past an input, or an output never written. A GPU's arithmetic
//    returns 0x7FFFFFFF for any NaN it makes, which is not the poison either.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace cudalab {

inline constexpr std::uint8_t kPoisonByte = 0xFF;
// The high 16 bits of every word of a guard zone (a quiet NaN; see above).
inline constexpr std::uint32_t kGuardNanHigh = 0x7FF80000u;
// The word simt (CPU mode) fills the slack around each cudaMalloc'd block
// with (simt/src/memory.cpp kSlackWord): what a read beyond the guard zones,
// or any read past the end with CUDALAB_GUARD_BYTES=0, finds there.
inline constexpr std::uint32_t kDeviceSlackNan = 0x7FF4D1A0u;
// The word simt fills shared memory with before each block (simt/src/
// scheduler.cpp kSharedPoisonWord): a NaN computed from shared memory that
// no thread wrote carries it, and is not an output never written.
inline constexpr std::uint32_t kSharedPoisonNan = 0x7FF2A5A5u;

// Guard zone size in bytes: CUDALAB_GUARD_BYTES, default 64 KiB. 0 allocates
// buffers exactly, which is what compute-sanitizer's memcheck needs to see
// out-of-bounds accesses.
std::size_t guard_bytes();

// True if the float's bits are the poison pattern.
bool is_poison(float value);

// Where a NaN's bits say it came from. CPU mode keeps a NaN operand's
// payload through arithmetic (x86), so a value computed from a guard zone or
// from unwritten shared memory carries that one's bits; a GPU returns
// 0x7FFFFFFF for any NaN its arithmetic makes (`other`).
enum class NanOrigin {
  not_nan,
  output_poison,  // the output's fill: never written (or a copy of it)
  input_guard,    // a guard zone's word, or simt's slack beyond it: a read past the end of a buffer
  shared_poison,  // CPU mode's fill of shared memory: read where no thread wrote
  other,          // any other NaN (a GPU's, or 0 / 0)
};
NanOrigin nan_origin(float value);

// The expected bytes of a guard zone of `bytes` bytes of the buffer `name`
// (`after`: the zone past its end, else the one before its start).
std::vector<std::uint8_t> guard_zone(const std::string& name, bool after, std::size_t bytes);

// Describes writes into the guard zones of the buffer `name` of `count`
// elements of `elem_size` bytes (its zones as guard_zone makes them); empty
// if both zones are intact. Host-only, unit-tested.
// Elements of 4 bytes are called floats: "wrote 3 floats past the end of C".
std::vector<std::string> describe_guard_damage(const std::string& name, std::size_t elem_size,
                                               std::size_t count, const std::vector<std::uint8_t>& before,
                                               const std::vector<std::uint8_t>& after);

// Damage to a guard zone that stays once seen. A launcher's host code runs
// after its kernels and before the harness reads the zones, so it could save
// the bytes a kernel will overwrite and write them back (found on an H200:
// 100 points against its twin's 90). The harness therefore also reads the
// zones right after each launch (cudalab/run.h), and keeps every byte seen
// damaged there: keep_damage folds the zone as read now (`now`) into `seen`
// (empty until a first damage), and with_damage_seen puts the kept bytes back
// into a zone read later wherever that one looks intact. Host-only,
// unit-tested.
void keep_damage(const std::vector<std::uint8_t>& intact, const std::vector<std::uint8_t>& now,
                 std::vector<std::uint8_t>& seen);
void with_damage_seen(const std::vector<std::uint8_t>& intact, const std::vector<std::uint8_t>& seen,
                      std::vector<std::uint8_t>& zone);

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
  // The whole allocation, guard zones included: (its start, its bytes). The
  // memory check's trace names pointers relative to it (cudalab/replay.h).
  std::pair<std::uint64_t, std::uint64_t> allocation() const {
    return {reinterpret_cast<std::uint64_t>(base_), bytes() + 2 * guard_};
  }

  void upload(const void* host);
  void download(void* host) const;
  void poison();
  // Messages for each guard zone written; empty when both are intact.
  std::vector<std::string> guard_damage() const;
  // The zones' bytes (empty without guard zones), for the evidence: as they
  // are now, with the damage keep_guard_damage saw put back where a byte was
  // restored since.
  void guard_zones(std::vector<std::uint8_t>& before, std::vector<std::uint8_t>& after) const;
  // Reads the zones now and keeps what is damaged (keep_damage): called
  // after each launch of a Run's launcher, before its host code goes on.
  // Never throws: a failed read keeps nothing (the zones are read again
  // after the launcher).
  void keep_guard_damage() noexcept;

 private:
  std::string name_;
  std::size_t count_, elem_size_, guard_;
  // The zones as made, and the damage kept (empty: none seen).
  std::vector<std::uint8_t> intact_before_, intact_after_, seen_before_, seen_after_;
  unsigned char* base_ = nullptr;
  unsigned char* user_ = nullptr;
};

}  // namespace cudalab
