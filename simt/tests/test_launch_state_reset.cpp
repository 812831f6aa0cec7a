// The launch's state itself (simt/src/launch_state.h): every launch starts it
// afresh, and simt::reset_for_tests() clears it.
#include <catch2/catch.hpp>

#include "launch_state.h"
#include "simt/simt.h"
#include "util.h"

// test_launch_state.cu
void launch_trap_between_barriers(int* out, int blocks, int threads, int trap_block, int trap_at);
void launch_counts(int* out, int threads);

using simt::detail::FiberState;
using simt::detail::g_launch;

TEST_CASE("a launch's state holds only that launch: its fibers, barrier counts and fault") {
  simt::reset_for_tests();
  DeviceBuffer<int> out(2 * 100);
  launch_trap_between_barriers(out.get(), 2, 64, 1, 5);
  REQUIRE(cudaDeviceSynchronize() == cudaErrorLaunchFailure);
  CHECK(g_launch.fault.error == cudaErrorLaunchFailure);
  CHECK(g_launch.fault.block.x == 1);
  CHECK(g_launch.fibers.size() == 64);
  CHECK(g_launch.fibers[0].state == FiberState::barrier);  // stopped while it waited
  CHECK(g_launch.barriers.rounds == 1);
  CHECK_FALSE(g_launch.running);
  simt::reset_errors_for_tests();

  launch_counts(out.get(), 100);
  REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  CHECK(g_launch.fault.error == cudaSuccess);
  CHECK(g_launch.fault.what.empty());
  CHECK(g_launch.fibers.size() == 100);
  for (const auto& f : g_launch.fibers) REQUIRE(f.state == FiberState::done);
  CHECK(g_launch.barriers.rounds == 2);
  CHECK(g_launch.barriers.arrived == 100);
  CHECK(g_launch.barriers.count == 25);  // the second barrier's: t % 4 == 0
  CHECK(g_launch.cfg.block.x == 100);
  simt::reset_for_tests();
}

TEST_CASE("reset_for_tests clears the launch's state") {
  simt::reset_for_tests();
  DeviceBuffer<int> out(64);
  launch_trap_between_barriers(out.get(), 1, 64, 0, 3);
  REQUIRE(cudaDeviceSynchronize() == cudaErrorLaunchFailure);
  REQUIRE(g_launch.site != nullptr);
  REQUIRE_FALSE(g_launch.fibers.empty());
  simt::reset_for_tests();
  CHECK(g_launch.site == nullptr);
  CHECK(g_launch.threads == 0);
  CHECK(g_launch.fibers.empty());
  CHECK(g_launch.order.empty());
  CHECK(g_launch.barriers.rounds == 0);
  CHECK(g_launch.barriers.opened.empty());
  CHECK(g_launch.fault.error == cudaSuccess);
  CHECK(g_launch.fault.what.empty());
  CHECK_FALSE(g_launch.in_fiber);
  CHECK(simt::detail::current_launch() == nullptr);
}
