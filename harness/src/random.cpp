#include "cudalab/random.h"

#include "cudalab/parallel.h"

namespace cudalab {

namespace {

constexpr std::uint64_t kGamma = 0x9E3779B97F4A7C15ULL;  // splitmix64's increment

// splitmix64's output function (Steele, Lea and Flood 2014): a bijection
// of 64-bit words that passes BigCrush on a counter.
std::uint64_t mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

}  // namespace

std::vector<float> uniform_floats(std::size_t n, std::uint64_t seed, std::uint64_t stream, float lo,
                                  float hi) {
  // Value i is splitmix64's i-th output from a key of (seed, stream): a
  // function of i alone, so chunks are drawn on several threads and any
  // prefix of a stream is the same whatever its length. The key goes through
  // mix twice: nearby streams (2n and 2n + 1) get unrelated sequences.
  const std::uint64_t key = mix(mix(seed + kGamma) ^ stream);
  std::vector<float> v(n);
  parallel_for(n, std::size_t{1} << 20, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      // The top 24 bits: exactly representable, the same on every platform.
      const float u = static_cast<float>(mix(key + (i + 1) * kGamma) >> 40) * (1.0f / 16777216.0f);
      v[i] = lo + (hi - lo) * u;
    }
  });
  return v;
}

}  // namespace cudalab
