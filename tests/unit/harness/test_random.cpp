// The checks' random inputs (cudalab/random.h): the same values for a seed
// and a stream on every platform and with any number of threads, 24 random
// bits each.
#include <cmath>
#include <cstdint>
#include <vector>

#include "cudalab/catch.h"
#include "cudalab/random.h"

TEST_CASE("random inputs are the same for a seed and a stream, however many are drawn", "[random][harness]") {
  // Past three chunks of the parallel draw: the long draw runs on several
  // threads where the short one runs on one.
  const std::size_t n = (std::size_t{3} << 20) + 5;
  const std::vector<float> all = cudalab::uniform_floats(n, 2026, 7);
  CHECK(all == cudalab::uniform_floats(n, 2026, 7));
  const std::vector<float> head = cudalab::uniform_floats(1000, 2026, 7);
  CHECK(std::vector<float>(all.begin(), all.begin() + 1000) == head);
  // Each chunk boundary, drawn short and alone.
  const std::size_t boundary = std::size_t{1} << 20;
  const std::vector<float> across = cudalab::uniform_floats(boundary + 1, 2026, 7);
  CHECK(across.back() == all[boundary]);
  CHECK(across[boundary - 1] == all[boundary - 1]);
}

TEST_CASE("random inputs hold 24 random bits each, in [lo, hi)", "[random][harness]") {
  const std::vector<float> v = cudalab::uniform_floats(100000, 2026, 1);
  std::size_t odd = 0;
  double sum = 0;
  for (float x : v) {
    REQUIRE(x >= -1.0f);
    REQUIRE(x < 1.0f);
    // x = -1 + 2k / 2^24 for an integer k < 2^24: exactly representable.
    const double k = (static_cast<double>(x) + 1.0) * 8388608.0;
    REQUIRE(k == std::floor(k));
    odd += static_cast<std::uint64_t>(k) & 1;
    sum += x;
  }
  // The lowest of the 24 bits is random too, and the values centred.
  CHECK(odd > 49000);
  CHECK(odd < 51000);
  CHECK(std::fabs(sum / static_cast<double>(v.size())) < 0.01);
  for (float x : cudalab::uniform_floats(1000, 2026, 1, 3.0f, 5.0f)) {
    REQUIRE(x >= 3.0f);
    REQUIRE(x < 5.0f);
  }
}

TEST_CASE("random inputs differ between streams and between seeds", "[random][harness]") {
  const auto a = cudalab::uniform_floats(1000, 2026, 2);
  const auto b = cudalab::uniform_floats(1000, 2026, 3);
  const auto c = cudalab::uniform_floats(1000, 2027, 2);
  std::size_t same_ab = 0, same_ac = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    same_ab += a[i] == b[i];
    same_ac += a[i] == c[i];
  }
  CHECK(same_ab < 5);
  CHECK(same_ac < 5);
}

TEST_CASE("random inputs are pinned: the reference's run and a student's draw the same ones everywhere",
          "[random][harness]") {
  // Computed once; a change here changes every check's inputs (and the
  // gallery's copy of the generator, tests/gallery/32_answers_for_the_public_seed).
  const std::vector<float> v = cudalab::uniform_floats(4, 2026, 0);
  CHECK(v == std::vector<float>{-0.0437307358f, 0.727760673f, 0.568100095f, 0.170432448f});
}
