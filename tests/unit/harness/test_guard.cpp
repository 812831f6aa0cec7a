#include <cmath>
#include <cstring>

#include "cudalab/buffer.h"
#include "cudalab/catch.h"

using namespace cudalab;

TEST_CASE("Intact guard zones report nothing", "[guard][harness]") {
  std::vector<std::uint8_t> zone(64, kGuardByte);
  CHECK(describe_guard_damage("C", 4, 1000, zone, zone).empty());
}

TEST_CASE("Writes past the end are counted in floats and located by index", "[guard][harness]") {
  std::vector<std::uint8_t> before(64, kGuardByte), after(64, kGuardByte);
  after[0] = 0;          // C[1000]
  after[4 * 3 + 2] = 0;  // C[1003]
  const auto m = describe_guard_damage("C", 4, 1000, before, after);
  REQUIRE(m.size() == 1);
  CHECK_THAT(m[0], Catch::Contains("wrote 2 floats past the end of C (first at C[1000]"));
}

TEST_CASE("Writes past a one-value buffer say it holds one value, not how many elements long it is",
          "[guard][harness]") {
  std::vector<std::uint8_t> before(64, kGuardByte), after(64, kGuardByte);
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
  std::vector<std::uint8_t> before(64, kGuardByte), after(64, kGuardByte);
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
