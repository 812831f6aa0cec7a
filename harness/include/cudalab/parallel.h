// cudalab/parallel.h: host loops over large arrays on a few threads.
//
// A check's host work on 2^26 elements (its random inputs, the CPU
// reference, the comparison, the inputs' hashes; the grader's judge of the
// evidence) is embarrassingly parallel, and on a GPU host it is most of the
// check's time. Up to a dozen check processes run at once there, so each
// loop takes a bounded number of threads (kMaxThreads) and only for arrays
// large enough to pay for them.
//
// Chunks are fixed by the array's length and the grain alone, never by the
// number of threads: a loop whose chunks each compute something (a hash, the
// first mismatches) gives the same result on every machine and with any
// number of threads, serial included.
//
// Threads start only inside these calls and are joined before they return:
// nothing runs in the background, and nothing starts before main.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <type_traits>
#include <vector>

namespace cudalab {

// Threads one loop takes at most: enough for the bandwidth of one socket,
// few enough for the dozen check processes that share a GPU host.
inline constexpr unsigned kMaxThreads = 8;

// The threads a loop over n elements takes: 1 below 2 grains; else one per
// grain up to min(hardware threads, kMaxThreads). CUDALAB_HOST_THREADS, when
// set, replaces the hardware's count (1: every loop serial).
unsigned loop_threads(std::size_t n, std::size_t grain);

// Calls fn(begin, end) once for each chunk [k * grain, min((k + 1) * grain, n))
// of [0, n), on up to `threads` threads (0: loop_threads(n, grain)). The
// chunks are disjoint; fn must not write what another chunk reads. The first
// exception thrown by fn is rethrown here once every thread has stopped.
void parallel_for(std::size_t n, std::size_t grain, const std::function<void(std::size_t, std::size_t)>& fn,
                  unsigned threads = 0);

// Asks the kernel for 2 MiB pages for the whole pages of [p, p + bytes), memory
// not yet touched (a vector's reserve()): a quarter GiB array then costs a
// hundred page faults, not sixty-five thousand. Arrays under 4 MiB and
// kernels without transparent huge pages are left as they are.
void advise_huge_pages(void* p, std::size_t bytes);

// The number of chunks parallel_for(n, grain, ...) makes.
inline std::size_t chunk_count(std::size_t n, std::size_t grain) {
  grain = std::max<std::size_t>(grain, 1);
  return (n + grain - 1) / grain;
}

// fn(begin, end) for each chunk, as parallel_for, and the results in chunk
// order: a reduction whose merge reads them front to back is the serial one.
template <class T, class Fn>
std::vector<T> map_chunks(std::size_t n, std::size_t grain, Fn fn, unsigned threads = 0) {
  static_assert(!std::is_same<T, bool>::value,
                "std::vector<bool> packs its elements into shared words: threads cannot each write one");
  grain = std::max<std::size_t>(grain, 1);
  std::vector<T> out(chunk_count(n, grain));
  parallel_for(
      n, grain, [&](std::size_t begin, std::size_t end) { out[begin / grain] = fn(begin, end); }, threads);
  return out;
}

}  // namespace cudalab
