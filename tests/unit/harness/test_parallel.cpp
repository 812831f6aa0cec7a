// The host loops on a few threads (cudalab/parallel.h): every element once,
// chunks fixed by the length and the grain alone, results in chunk order
// whatever the number of threads.
#include <atomic>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "cudalab/catch.h"
#include "cudalab/parallel.h"

namespace {

constexpr std::size_t kGrain = 1000;

// The sizes where chunking goes wrong if it does: none, one element, one
// short of a chunk, exactly one and two chunks, one past, and many with a tail.
const std::vector<std::size_t> kSizes = {0, 1, kGrain - 1, kGrain, kGrain + 1, 2 * kGrain, 17 * kGrain + 3};

}  // namespace

TEST_CASE("parallel_for visits every index exactly once, on any number of threads", "[parallel][harness]") {
  for (std::size_t n : kSizes)
    for (unsigned threads : {0u, 1u, 2u, 3u, 8u}) {
      CAPTURE(n, threads);
      std::vector<std::atomic<int>> seen(n);
      std::atomic<std::size_t> calls{0};
      cudalab::parallel_for(
          n, kGrain,
          [&](std::size_t begin, std::size_t end) {
            ++calls;
            CHECK(begin % kGrain == 0);
            CHECK(end - begin <= kGrain);
            CHECK((end - begin == kGrain || end == n));
            for (std::size_t i = begin; i < end; ++i) ++seen[i];
          },
          threads);
      CHECK(calls == cudalab::chunk_count(n, kGrain));
      std::size_t once = 0;
      for (const auto& s : seen) once += s == 1;
      CHECK(once == n);
    }
}

TEST_CASE("map_chunks gives the serial loop's results in chunk order", "[parallel][harness]") {
  for (std::size_t n : kSizes) {
    std::vector<long long> values(n);
    std::iota(values.begin(), values.end(), -5);
    const auto sums = [&](unsigned threads) {
      return cudalab::map_chunks<long long>(
          n, kGrain,
          [&](std::size_t begin, std::size_t end) {
            return std::accumulate(values.begin() + begin, values.begin() + end, 0LL);
          },
          threads);
    };
    // The serial loop, chunk by chunk.
    std::vector<long long> serial;
    for (std::size_t begin = 0; begin < n; begin += kGrain)
      serial.push_back(
          std::accumulate(values.begin() + begin, values.begin() + std::min(n, begin + kGrain), 0LL));
    CAPTURE(n);
    for (unsigned threads : {1u, 2u, 3u, 8u}) CHECK(sums(threads) == serial);
  }
}

TEST_CASE("an exception in one chunk reaches the caller after every thread stopped", "[parallel][harness]") {
  for (unsigned threads : {1u, 4u}) {
    std::atomic<int> running{0};
    CHECK_THROWS_AS(cudalab::parallel_for(
                        64 * kGrain, kGrain,
                        [&](std::size_t begin, std::size_t) {
                          ++running;
                          if (begin == 5 * kGrain) {
                            --running;
                            throw std::runtime_error("chunk 5");
                          }
                          --running;
                        },
                        threads),
                    std::runtime_error);
    CHECK(running == 0);
  }
}

TEST_CASE("a loop takes one thread below two grains and at most kMaxThreads", "[parallel][harness]") {
  CHECK(cudalab::loop_threads(0, kGrain) == 1);
  CHECK(cudalab::loop_threads(kGrain, kGrain) == 1);
  CHECK(cudalab::loop_threads(2 * kGrain, kGrain) >= 1);
  CHECK(cudalab::loop_threads(2 * kGrain, kGrain) <= 2);
  CHECK(cudalab::loop_threads(1000 * kGrain, kGrain) <= cudalab::kMaxThreads);
}
