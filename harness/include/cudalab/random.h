// cudalab/random.h: the checks' random inputs, host-only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace cudalab {

// n uniform floats in [lo, hi) from (seed, stream): the same values on every
// platform, for every build, so that the reference's run and the student's
// draw the same inputs. Each value holds 24 random bits (exactly
// representable; std::uniform_real_distribution is not the same everywhere).
// cudalab::random_floats (testing.h) is this at the run's seed.
std::vector<float> uniform_floats(std::size_t n, std::uint64_t seed, std::uint64_t stream, float lo = -1.f,
                                  float hi = 1.f);

}  // namespace cudalab
