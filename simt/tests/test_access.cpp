// The access report's figures on the four textbook cases: coalesced float
// loads 4 sectors per request, swapped rows and columns 32, the transpose's
// shared loads from a padded tile 0 bank conflicts per request, from an
// unpadded one 31 (as Nsight Compute counts a 32-way conflict); and atomics,
// counted as atomics at the kernel's line with their lanes per address.
#include <catch2/catch.hpp>

#include <cuda_runtime_api.h>

#include <string>
#include <vector>

#include "access_kernels.h"
#include "simt/simt.h"
#include "util.h"

namespace {

using simt::access::LineStats;

std::vector<LineStats> record(void (*run)()) {
  simt::access::reset();
  simt::access::enable(true);
  run();
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  simt::access::enable(false);
  const auto lines = simt::access::collect();
  INFO(simt::access::format_text(lines));
  REQUIRE(!lines.empty());
  return lines;
}

const LineStats& find(const std::vector<LineStats>& lines, const std::string& function, const std::string& space,
                      bool store) {
  for (const auto& l : lines)
    if (l.function.find(function) != std::string::npos && l.space == space && l.store == store) return l;
  FAIL("no " << space << (store ? " store" : " load") << " in " << function << ":\n"
             << simt::access::format_text(lines));
  throw 0;
}

}  // namespace

TEST_CASE("coalesced float loads take 4 sectors per request") {
  const auto lines = record([] {
    DeviceBuffer<float> in(1 << 16), out(1 << 16);
    run_copy_coalesced(in.get(), out.get(), 1 << 16);
  });
  const LineStats& load = find(lines, "copy_coalesced", "global", false);
  // 256 blocks of 8 warps: 64 recorded, each standing for 4.
  CHECK(load.requests == 256 * 256 / 32);
  CHECK(load.sectors_per_request() == 4.0);
  CHECK(load.ideal_sectors_per_request() == 4.0);
  CHECK(load.bytes == 4);
  CHECK(load.file.find("access_kernels.cu") != std::string::npos);
  CHECK(load.line == 12);
  const LineStats& store = find(lines, "copy_coalesced", "global", true);
  CHECK(store.sectors_per_request() == 4.0);
}

TEST_CASE("each launch weighs by its size: a small ragged launch does not pull a large one's figures") {
  const auto lines = record([] {
    DeviceBuffer<float> in(1 << 20), out(1 << 20);
    run_copy_coalesced(in.get(), out.get(), 1 << 20);  // 4096 blocks, aligned: 4 sectors per request
    for (int i = 0; i < 200; ++i)                       // 200 one-block launches, a lone thread each
      run_copy_coalesced(in.get() + 7, out.get() + 7, 1);
  });
  const LineStats& load = find(lines, "copy_coalesced", "global", false);
  // The big launch's 4096 blocks of 8 warps (estimated from 64 blocks), and
  // one single-thread request of one sector per small launch.
  CHECK(load.requests == 4096 * 8 + 200);
  // (4096 * 8 * 4 + 200) / (4096 * 8 + 200): 3.98. Counting 64 blocks of
  // each launch alike would give (64 * 8 * 4 + 200) / (64 * 8 + 200) = 3.16.
  CHECK(load.sectors_per_request() > 3.97);
  CHECK(load.sectors_per_request() < 4.0);
}

TEST_CASE("swapped rows and columns take 32 sectors per request") {
  const auto lines = record([] {
    DeviceBuffer<float> in(256 * 256), out(256 * 256);
    run_copy_swapped(in.get(), out.get(), 256, 256);
  });
  const LineStats& load = find(lines, "copy_swapped", "global", false);
  CHECK(load.sectors_per_request() == 32.0);
  CHECK(load.ideal_sectors_per_request() == 4.0);
}

TEST_CASE("a padded transpose tile has no bank conflicts; an unpadded one 31 per request") {
  auto transpose = [](bool padded) {
    simt::access::reset();
    simt::access::enable(true);
    DeviceBuffer<float> in(256 * 256), out(256 * 256);
    run_transpose(in.get(), out.get(), 256, 256, padded);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    simt::access::enable(false);
    return simt::access::collect();
  };
  const auto padded = transpose(true);
  const LineStats& pload = find(padded, "transpose_tile", "shared", false);
  CHECK(pload.conflicts_per_request() == 0.0);
  CHECK(find(padded, "transpose_tile", "shared", true).conflicts_per_request() == 0.0);
  CHECK(find(padded, "transpose_tile", "global", false).sectors_per_request() == 4.0);
  CHECK(find(padded, "transpose_tile", "global", true).sectors_per_request() == 4.0);

  const auto unpadded = transpose(false);
  const LineStats& uload = find(unpadded, "transpose_tile", "shared", false);
  CHECK(uload.conflicts_per_request() == 31.0);
  CHECK(uload.wavefronts == 32 * uload.requests);
  CHECK(find(unpadded, "transpose_tile", "shared", true).conflicts_per_request() == 0.0);
  INFO(simt::access::format_text(unpadded));
  CHECK(simt::access::format_text(unpadded).find("31.00 bank conflicts/request") != std::string::npos);
}

TEST_CASE("nothing is recorded while the report is off") {
  simt::access::reset();
  simt::access::enable(false);
  DeviceBuffer<float> in(1024), out(1024);
  run_copy_coalesced(in.get(), out.get(), 1024);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  CHECK(simt::access::collect().empty());
}

TEST_CASE("an atomic counts once, as an atomic, at the kernel's line, with its lanes per address") {
  const auto lines = record([] {
    DeviceBuffer<float> in(1 << 12), out(1), bins(32);
    run_atomics(in.get(), out.get(), bins.get(), 1 << 12);
  });
  const auto atomic = [&](const std::string& kernel) -> const LineStats& {
    for (const auto& l : lines)
      if (l.function.find(kernel) != std::string::npos && l.atomic) return l;
    FAIL("no atomic in " << kernel << ":\n" << simt::access::format_text(lines));
    throw 0;
  };
  const LineStats& one = atomic("atomic_one_counter");
  // At the kernel's line, not simt's device.h where atomicAdd is written.
  CHECK(one.file.find("access_kernels.cu") != std::string::npos);
  CHECK(one.line == 59);
  CHECK(one.space == "global");
  CHECK_FALSE(one.store);
  CHECK(one.requests == (1 << 12) / 32);  // its read-modify-write once per warp, not twice
  CHECK(one.lanes_per_address() == 32.0);
  const LineStats& own = atomic("atomic_own_bins");
  CHECK(own.line == 66);
  CHECK(own.lanes_per_address() == 1.0);
  // Nothing of the atomics at simt's own header.
  for (const auto& l : lines) CHECK(l.file.find("simt/device.h") == std::string::npos);
  CHECK(simt::access::format_json(lines).find("\"op\": \"atomic\"") != std::string::npos);
}
