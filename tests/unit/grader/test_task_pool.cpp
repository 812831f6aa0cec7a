// The pool the correctness stage runs its checks in, where a check that
// passed starts the traced run of the speed checks that required it.
#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "pipeline/internal.h"

using cudalab::TaskPool;

TEST_CASE("a task that finishes can add a task, and the pool waits for it", "[unit][pipeline]") {
  for (std::size_t jobs : {1u, 2u, 8u}) {
    TaskPool pool;
    std::mutex lock;
    std::vector<int> order;
    std::atomic<int> ran{0};
    for (int k = 0; k < 4; ++k)
      pool.add([&, k] {
        ++ran;
        // Only the last correctness task's pass releases the follow-up.
        if (k == 3)
          pool.add([&] {
            ++ran;
            const std::lock_guard<std::mutex> guard(lock);
            order.push_back(100);
          });
        const std::lock_guard<std::mutex> guard(lock);
        order.push_back(k);
      });
    pool.run(jobs);
    CHECK(ran == 5);
    REQUIRE(order.size() == 5);
    CHECK(std::count(order.begin(), order.end(), 100) == 1);
    if (jobs == 1) CHECK(order == std::vector<int>{0, 1, 2, 3, 100});
  }
}

TEST_CASE("a pool with no tasks returns at once", "[unit][pipeline]") {
  TaskPool pool;
  pool.run(8);
  SUCCEED("returned");
}

TEST_CASE("the first exception stops the queued tasks and reaches the caller", "[unit][pipeline]") {
  TaskPool pool;
  std::atomic<int> ran{0};
  pool.add([] { throw std::runtime_error("the first"); });
  for (int k = 0; k < 10; ++k) pool.add([&] { ++ran; });
  CHECK_THROWS_WITH(pool.run(1), "the first");
  CHECK(ran == 0);
}
