#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "cudalab/catch.h"
#include "run/seed.h"

using namespace cudalab;
namespace fs = std::filesystem;

TEST_CASE("SipHash-2-4 gives the published test vectors", "[seed][grader]") {
  // The reference implementation's vectors: key 00 01 .. 0f, messages 00 01 .. (n-1).
  const std::uint64_t k0 = 0x0706050403020100ULL, k1 = 0x0f0e0d0c0b0a0908ULL;
  std::string msg;
  CHECK(siphash24(k0, k1, msg) == 0x726fdb47dd0e0e31ULL);
  for (int i = 0; i < 15; ++i) msg += static_cast<char>(i);
  CHECK(siphash24(k0, k1, msg) == 0xa129ca6149be45e5ULL);
  msg += static_cast<char>(15);
  CHECK(siphash24(k0, k1, msg) == 0x3f2acc7f57c29bdbULL);
}

TEST_CASE("The grading folder's key is made once, private, and read back the same", "[seed][grader]") {
  const fs::path dir = fs::temp_directory_path() / ("cudalab-key-test-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const GradingKey a = grading_key(dir);
  const GradingKey b = grading_key(dir);
  CHECK(a.k0 == b.k0);
  CHECK(a.k1 == b.k1);
  CHECK((a.k0 | a.k1) != 0);
  struct stat st {};
  REQUIRE(::stat((dir / "grading.key").c_str(), &st) == 0);
  CHECK((st.st_mode & 077) == 0);  // no check, no other user, can read it
  fs::remove_all(dir);
  CHECK(grading_key(dir).k0 != a.k0);  // a new folder, a new key
  fs::remove_all(dir);
}

TEST_CASE("A lab's seed changes with any byte of its files, and never is the course's", "[seed][grader]") {
  const GradingKey key{1, 2};
  const auto seed = [&](const std::string& contents, const std::string& lab = "03_tiling",
                        const std::string& course = "424242", GradingKey k = {1, 2}) {
    return derive_seed(k, course, lab, {{"matmul_tiled.cu", contents}, {"helper.cuh", "x"}});
  };
  const std::string s = seed("__global__ void k() {}");
  CHECK(s == seed("__global__ void k() {}"));  // the same files graded again
  CHECK(s != seed("__global__ void k() {} "));
  CHECK(s != seed("__global__ void k() {}", "04_transpose"));
  CHECK(s != seed("__global__ void k() {}", "03_tiling", "424243"));
  CHECK(s != seed("__global__ void k() {}", "03_tiling", "424242", GradingKey{1, 3}));
  CHECK(s != "424242");
  CHECK(s.find_first_not_of("0123456789") == std::string::npos);  // what --seed takes
  // The order the files were found in does not matter; their names do.
  CHECK(derive_seed(key, "1", "l", {{"a", "1"}, {"b", "2"}}) ==
        derive_seed(key, "1", "l", {{"b", "2"}, {"a", "1"}}));
  CHECK(derive_seed(key, "1", "l", {{"a", "1"}, {"b", "2"}}) !=
        derive_seed(key, "1", "l", {{"a", "2"}, {"b", "1"}}));
  CHECK(derive_seed(key, "1", "l", {{"ab", ""}}) != derive_seed(key, "1", "l", {{"a", "b"}}));
}
