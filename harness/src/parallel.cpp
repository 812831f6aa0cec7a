#include "cudalab/parallel.h"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>

namespace cudalab {

namespace {

unsigned thread_cap() {
  static const unsigned cap = [] {
    unsigned threads = std::thread::hardware_concurrency();
    if (const char* env = std::getenv("CUDALAB_HOST_THREADS")) {
      const long v = std::strtol(env, nullptr, 10);
      if (v >= 1) threads = static_cast<unsigned>(std::min<long>(v, kMaxThreads));
    }
    return std::max(1u, std::min(threads, kMaxThreads));
  }();
  return cap;
}

}  // namespace

void advise_huge_pages(void* p, std::size_t bytes) {
  if (!p || bytes < (std::size_t{4} << 20)) return;
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto begin = (reinterpret_cast<std::uintptr_t>(p) + page - 1) / page * page;
  const auto end = (reinterpret_cast<std::uintptr_t>(p) + bytes) / page * page;
  // A hint: where the kernel has no huge pages it says so and nothing changes.
  if (end > begin) (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

unsigned loop_threads(std::size_t n, std::size_t grain) {
  const std::size_t chunks = chunk_count(n, grain);
  if (chunks < 2) return 1;
  return static_cast<unsigned>(std::min<std::size_t>(chunks, thread_cap()));
}

void parallel_for(std::size_t n, std::size_t grain, const std::function<void(std::size_t, std::size_t)>& fn,
                  unsigned threads) {
  grain = std::max<std::size_t>(grain, 1);
  const std::size_t chunks = chunk_count(n, grain);
  if (chunks == 0) return;
  if (threads == 0) threads = loop_threads(n, grain);
  threads = static_cast<unsigned>(std::min<std::size_t>(threads, chunks));
  if (threads <= 1) {
    for (std::size_t k = 0; k < chunks; ++k) fn(k * grain, std::min(n, (k + 1) * grain));
    return;
  }
  // Each thread takes the next chunk until none is left; after a throw the
  // others stop at their next chunk.
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr first_error;
  std::mutex error_lock;
  const auto work = [&] {
    for (std::size_t k; !failed.load(std::memory_order_relaxed) && (k = next.fetch_add(1)) < chunks;) {
      try {
        fn(k * grain, std::min(n, (k + 1) * grain));
      } catch (...) {
        const std::lock_guard<std::mutex> guard(error_lock);
        if (!first_error) first_error = std::current_exception();
        failed = true;
      }
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  try {
    for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  } catch (...) {
    // No thread to be had: this one does the rest.
  }
  work();
  for (auto& t : pool) t.join();
  if (first_error) std::rethrow_exception(first_error);
}

}  // namespace cudalab
