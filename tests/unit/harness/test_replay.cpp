// The host side of the grader's speed replay (cudalab/replay.h): the trace a
// student's process writes is untrusted, so what the replay accepts of it is
// tested here on traces built and forged in the test.
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cudalab/catch.h"
#include "cudalab/replay.h"

namespace rp = cudalab::replay;

namespace {

std::string word(std::uint64_t v) {
  std::string s(8, '\0');
  std::memcpy(s.data(), &v, 8);
  return s;
}

rp::Trace two_launches() {
  rp::Trace t;
  t.buffer_bytes = {4096, 4096, 1024};
  rp::Launch a;
  a.kernel = "_Z19matmul_tiled_kernelPKfS0_Pfiii";
  a.grid[0] = 64, a.grid[1] = 32;
  a.block[0] = 16, a.block[1] = 16;
  a.shared_bytes = 0;
  a.params = {word(0x7f0000001000), word(0x7f0000003000), word(0x7f0000005000), std::string("\x01\0\0\0", 4)};
  a.relocations = {{0, 0, 0, 0}, {1, 0, 1, 0}, {2, 0, 2, 0}};
  rp::Launch b = a;
  b.kernel = "_Z6helperPf";
  b.params = {word(0x7f0000005010)};
  b.relocations = {{0, 0, 2, 16}};
  t.launches = {a, b};
  return t;
}

std::string self_exe() {
  std::ifstream in("/proc/self/exe", std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("a launch trace survives its JSON form unchanged", "[replay][harness]") {
  const rp::Trace t = two_launches();
  rp::Trace back;
  std::string error;
  REQUIRE(rp::from_json(rp::to_json(t), back, error));
  REQUIRE(back.launches.size() == 2);
  CHECK(back.buffer_bytes == t.buffer_bytes);
  CHECK(back.launches[0].kernel == t.launches[0].kernel);
  CHECK(back.launches[0].grid[0] == 64);
  CHECK(back.launches[0].grid[1] == 32);
  CHECK(back.launches[0].block[1] == 16);
  CHECK(back.launches[0].params == t.launches[0].params);
  REQUIRE(back.launches[1].relocations.size() == 1);
  CHECK(back.launches[1].relocations[0].buffer == 2);
  CHECK(back.launches[1].relocations[0].delta == 16);
}

TEST_CASE("a trace whose pointers leave their parameter or buffer is refused", "[replay][harness]") {
  std::string error;
  rp::Trace back;
  {
    rp::Trace t = two_launches();
    t.launches[1].relocations[0].delta = 1025;  // past the end of a 1024-byte buffer
    CHECK_FALSE(rp::from_json(rp::to_json(t), back, error));
    CHECK(error.find("outside") != std::string::npos);
  }
  {
    rp::Trace t = two_launches();
    t.launches[0].relocations[2].buffer = 3;  // there are three buffers
    CHECK_FALSE(rp::from_json(rp::to_json(t), back, error));
  }
  {
    rp::Trace t = two_launches();
    t.launches[0].relocations[0].offset = 4;  // an 8-byte word from byte 4 of an 8-byte parameter
    CHECK_FALSE(rp::from_json(rp::to_json(t), back, error));
  }
  {
    rp::Trace t = two_launches();
    t.launches[0].relocations[0].param = 9;
    CHECK_FALSE(rp::from_json(rp::to_json(t), back, error));
  }
}

TEST_CASE("a malformed or oversized trace is refused with a reason, never half read", "[replay][harness]") {
  std::string error;
  rp::Trace back;
  CHECK_FALSE(rp::from_json("", back, error));
  CHECK_FALSE(
      rp::from_json("{\"format\": \"cudalab-trace/1\", \"launches\": [{\"kernel\": 3}]}", back, error));
  CHECK(back.launches.empty());
  CHECK_FALSE(rp::from_json(
      "{\"format\": \"cudalab-trace/1\", \"launches\": [{\"kernel\": \"k\", \"grid\": [1,1,1], \"block\": "
      "[1,1,1], \"shared_bytes\": 0, \"params\": [\"zz\"], \"relocations\": []}]}",
      back, error));
  rp::Trace big = two_launches();
  big.launches[0].params.assign(rp::kMaxParams + 1, word(1));
  big.launches[0].relocations.clear();
  CHECK_FALSE(rp::from_json(rp::to_json(big), back, error));
  rp::Trace wide = two_launches();
  wide.launches[0].params[3] = std::string(rp::kMaxParamBytes + 1, 'x');
  CHECK_FALSE(rp::from_json(rp::to_json(wide), back, error));
  rp::Trace many = two_launches();
  many.launches.assign(rp::kMaxLaunches + 1, many.launches[1]);
  CHECK_FALSE(rp::from_json(rp::to_json(many), back, error));
}

TEST_CASE("pointers into the timed buffers are found in a launch's parameters, other words are left alone",
          "[replay][harness]") {
  const std::vector<std::pair<std::uint64_t, std::uint64_t>> buffers = {{0x1000, 0x100}, {0x2000, 0x100}};
  // A struct of {int n; int pad; float* p; float* end; long other}.
  std::string param = std::string(8, '\0') + word(0x2010) + word(0x2100) + word(0x3000);
  const auto found = rp::find_pointers(param, 2, buffers);
  REQUIRE(found.size() == 2);
  CHECK(found[0].param == 2);
  CHECK(found[0].offset == 8);
  CHECK(found[0].buffer == 1);
  CHECK(found[0].delta == 0x10);
  CHECK(found[1].offset == 16);
  CHECK(found[1].delta == 0x100);  // one past the end still points at the buffer
  CHECK(rp::find_pointers(std::string("\x01\x02\x03\x04", 4), 0, buffers).empty());
}

TEST_CASE("a section is read out of an ELF object, and a file that is not one is refused",
          "[replay][harness]") {
  const std::string exe = self_exe();
  std::string out, error;
  REQUIRE(rp::elf_section(exe, ".text", out, error));
  CHECK(out.size() > 1000);
  CHECK_FALSE(rp::elf_section(exe, ".no_such_section", out, error));
  CHECK(error.find(".no_such_section") != std::string::npos);
  CHECK_FALSE(rp::elf_section("not an object at all", ".text", out, error));
  std::string cut = exe.substr(0, 64);  // a header whose section table is not in the file
  CHECK_FALSE(rp::elf_section(cut, ".text", out, error));
}

TEST_CASE("compiled kernels are packed and unpacked piece by piece, and a truncated pack is refused",
          "[replay][harness]") {
  const std::vector<std::string> pieces = {"first", std::string(3, '\0'), ""};
  std::vector<std::string> back;
  std::string error;
  const std::string packed = rp::pack(pieces);
  REQUIRE(rp::unpack(packed, back, error));
  CHECK(back == pieces);
  CHECK_FALSE(rp::unpack(packed.substr(0, 10), back, error));
  CHECK_FALSE(rp::unpack(packed.substr(0, 4), back, error));
}

TEST_CASE("a memory check's trace keeps each call of the launcher, in order, and refuses a forged one",
          "[replay][harness]") {
  rp::Trace second = two_launches();
  second.launches.pop_back();
  second.buffer_bytes = {128, 256};
  second.launches[0].relocations = {{0, 0, 1, 200}};
  std::vector<rp::Trace> back;
  std::string error;
  REQUIRE(rp::calls_from_json(rp::calls_to_json({two_launches(), second}), back, error));
  REQUIRE(back.size() == 2);
  CHECK(back[0].launches.size() == 2);
  CHECK(back[1].launches.size() == 1);
  CHECK(back[1].buffer_bytes == second.buffer_bytes);
  CHECK(back[1].launches[0].relocations[0].delta == 200);
  // One call's trace is not a memory check's, and the reverse.
  CHECK_FALSE(rp::calls_from_json(rp::to_json(two_launches()), back, error));
  CHECK(back.empty());
  rp::Trace one;
  CHECK_FALSE(rp::from_json(rp::calls_to_json({two_launches()}), one, error));
  // A pointer past its buffer in any call refuses the whole trace.
  second.launches[0].relocations = {{0, 0, 1, 257}};
  CHECK_FALSE(rp::calls_from_json(rp::calls_to_json({two_launches(), second}), back, error));
  CHECK(back.empty());
  CHECK_FALSE(error.empty());
  // More calls than a check makes.
  CHECK_FALSE(
      rp::calls_from_json(rp::calls_to_json(std::vector<rp::Trace>(rp::kMaxCalls + 1, second)), back, error));
}
