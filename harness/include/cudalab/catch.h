// cudalab/catch.h: Catch2 v2 (Debian 12's single header), or v3 where the
// build found only v3 (Ubuntu 24.04; it then defines CUDALAB_CATCH_V3_BUILD).
// The choice is the build's, not __has_include's: a machine may have both.
#pragma once

#if defined(CUDALAB_CATCH_V3_BUILD)
#include <catch2/catch_all.hpp>
#define CUDALAB_CATCH_V3 1
// The v2 names our tests use, on v3.
namespace Catch {
inline Matchers::StringContainsMatcher Contains(const std::string& s) {
  return Matchers::ContainsSubstring(s);
}
using Matchers::StartsWith;
}  // namespace Catch
using Catch::Approx;
#else
#include <catch2/catch.hpp>
#define CUDALAB_CATCH_V3 0
#endif
