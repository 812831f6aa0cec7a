#include <cmath>
#include <cstring>

#include "cudalab/buffer.h"
#include "cudalab/catch.h"

using namespace cudalab;

TEST_CASE("Intact guard zones report nothing", "[guard][harness]") {
  CHECK(describe_guard_damage("C", 4, 1000, guard_zone("C", false, 64), guard_zone("C", true, 64)).empty());
}

TEST_CASE("Writes past the end are counted in floats and located by index", "[guard][harness]") {
  std::vector<std::uint8_t> before = guard_zone("C", false, 64), after = guard_zone("C", true, 64);
  after[0] = 0;          // C[1000]
  after[4 * 3 + 2] = 0;  // C[1003]
  const auto m = describe_guard_damage("C", 4, 1000, before, after);
  REQUIRE(m.size() == 1);
  CHECK_THAT(m[0], Catch::Contains("wrote 2 floats past the end of C (first at C[1000]"));
}

TEST_CASE("Writes past a one-value buffer say it holds one value, not how many elements long it is",
          "[guard][harness]") {
  std::vector<std::uint8_t> before = guard_zone("out", false, 64), after = guard_zone("out", true, 64);
  after[0] = 0;      // out[1]
  after[4 * 6] = 0;  // out[7]
  const auto m = describe_guard_damage("out", 4, 1, before, after);
  REQUIRE(m.size() == 1);
  CHECK_THAT(m[0],
             Catch::StartsWith("wrote 2 floats past the end of out (first at out[1]), which holds one value: "
                               "a thread past the end of the data was not stopped by a boundary check, or a "
                               "store at an index like out[blockIdx.x]"));
  CHECK_THAT(m[0], !Catch::Contains("element"));
}

TEST_CASE("Writes before the start are located with negative indices", "[guard][harness]") {
  std::vector<std::uint8_t> before = guard_zone("C", false, 64), after = guard_zone("C", true, 64);
  before[63] = 1;  // C[-1]
  before[40] = 1;  // C[-6]
  const auto m = describe_guard_damage("C", 4, 10, before, after);
  REQUIRE(m.size() == 1);
  CHECK_THAT(m[0],
             Catch::Contains("wrote 2 floats before the start of C (nearest at C[-1], farthest at C[-6])"));
}

TEST_CASE("The poison pattern is recognised and ordinary NaNs are not poison", "[guard][harness]") {
  float p;
  const std::uint32_t bits = 0xFFFFFFFFu;
  std::memcpy(&p, &bits, 4);
  CHECK(is_poison(p));
  CHECK_FALSE(is_poison(std::nanf("")));
  CHECK_FALSE(is_poison(0.0f));
}

namespace {

float float_at(const std::vector<std::uint8_t>& zone, std::size_t word) {
  float f;
  std::memcpy(&f, zone.data() + 4 * word, 4);
  return f;
}

}  // namespace

TEST_CASE("A guard zone reads as NaN, unlike the output's fill, and tells a read past the end by its bits",
          "[guard][harness]") {
  // A load past the end must poison what it feeds (0 x NaN = NaN), and a
  // NaN computed from it must not pass for an element never written.
  const auto zone = guard_zone("B", true, 256);
  for (std::size_t w = 0; w < zone.size() / 4; ++w) {
    const float f = float_at(zone, w);
    REQUIRE(std::isnan(f));
    REQUIRE_FALSE(is_poison(f));
    REQUIRE(nan_origin(f) == NanOrigin::input_guard);
    // x86 keeps a quiet NaN operand's bits through arithmetic: CPU mode's
    // sums carry the zone's word.
    volatile float zero = 0.0f, one = 1.0f;
    REQUIRE(nan_origin(zero * f + one) == NanOrigin::input_guard);
  }
  double d;  // a zone reads as NaN as doubles too
  std::memcpy(&d, zone.data(), 8);
  CHECK(std::isnan(d));
  float poison;
  const std::uint32_t ff = 0xFFFFFFFFu;
  std::memcpy(&poison, &ff, 4);
  CHECK(nan_origin(poison) == NanOrigin::output_poison);
  CHECK(nan_origin(1.5f) == NanOrigin::not_nan);
  float shared;
  std::memcpy(&shared, &kSharedPoisonNan, 4);
  CHECK(nan_origin(shared) == NanOrigin::shared_poison);
  float gpu_nan;  // what a GPU's arithmetic makes of any NaN
  const std::uint32_t canonical = 0x7FFFFFFFu;
  std::memcpy(&gpu_nan, &canonical, 4);
  CHECK(nan_origin(gpu_nan) == NanOrigin::other);
}

TEST_CASE("A store of the output's fill, or of another buffer's guard word, into a guard zone is seen",
          "[guard][harness]") {
  // The zones differ from the poison and from buffer to buffer and zone to
  // zone: a kernel copying an unwritten element, or a's zone past its end,
  // into out's zone past its end changes its bytes.
  auto after = guard_zone("out", true, 64);
  std::memset(after.data() + 8, 0xFF, 4);  // out[n + 2] = an unwritten element's bits
  auto copied = guard_zone("out", true, 64);
  const auto a = guard_zone("a", true, 64);
  std::memcpy(copied.data(), a.data(), 64);  // out[n + i] = a[n + i] for i < 16
  const auto before = guard_zone("out", false, 64);
  CHECK_THAT(describe_guard_damage("out", 4, 100, before, after).at(0),
             Catch::Contains("wrote 1 float past the end of out (first at out[102]"));
  CHECK_THAT(describe_guard_damage("out", 4, 100, before, copied).at(0),
             Catch::Contains("wrote 16 floats past the end of out (first at out[100]"));
  CHECK(guard_zone("out", false, 64) != guard_zone("out", true, 64));
}

TEST_CASE("Damage seen after a launch stays when the bytes are written back before the zones are judged",
          "[guard][harness]") {
  const std::vector<std::uint8_t> intact = guard_zone("C", true, 64);
  std::vector<std::uint8_t> seen;
  // After the launch: C[1000] and C[1002] overwritten.
  std::vector<std::uint8_t> now = intact;
  now[0] = 0;
  now[4 * 2 + 1] = 0;
  keep_damage(intact, now, seen);
  REQUIRE(seen.size() == intact.size());
  // The launcher's host code copies the saved bytes back: the zone read
  // after it looks intact, and the kept damage is put back into it.
  std::vector<std::uint8_t> later = intact;
  with_damage_seen(intact, seen, later);
  const auto m = describe_guard_damage("C", 4, 1000, guard_zone("C", false, 64), later);
  REQUIRE(m.size() == 1);
  CHECK_THAT(m[0], Catch::Contains("wrote 2 floats past the end of C (first at C[1000]"));
}

TEST_CASE("Damage kept from several launches adds up with what the zone shows at the end",
          "[guard][harness]") {
  const std::vector<std::uint8_t> intact = guard_zone("c", true, 64);
  std::vector<std::uint8_t> seen;
  keep_damage(intact, intact, seen);
  CHECK(seen.empty());  // nothing seen: nothing kept
  std::vector<std::uint8_t> first = intact, second = intact;
  first[4 * 1] ^= 1;   // c[11] by the first launch
  second[4 * 3] ^= 1;  // c[13] by the second
  keep_damage(intact, first, seen);
  keep_damage(intact, second, seen);
  std::vector<std::uint8_t> end = intact;
  end[4 * 5] ^= 1;  // c[15], still there after the launcher
  with_damage_seen(intact, seen, end);
  const auto m = describe_guard_damage("c", 4, 10, guard_zone("c", false, 64), end);
  REQUIRE(m.size() == 1);
  CHECK_THAT(m[0], Catch::Contains("wrote 3 floats past the end of c (first at c[11]"));
}

TEST_CASE("An intact zone with nothing kept stays intact", "[guard][harness]") {
  const std::vector<std::uint8_t> intact = guard_zone("C", false, 64);
  std::vector<std::uint8_t> zone = intact;
  with_damage_seen(intact, {}, zone);
  CHECK(zone == intact);
}
