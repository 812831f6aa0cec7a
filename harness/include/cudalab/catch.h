// cudalab/catch.h: Catch2 v2 (Debian 12) or v3 (Ubuntu 24.04).
#pragma once

#if __has_include(<catch2/catch_all.hpp>)
#include <catch2/catch_all.hpp>
#define CUDALAB_CATCH_V3 1
#else
#include <catch2/catch.hpp>
#define CUDALAB_CATCH_V3 0
#endif
