// Rogues' gallery: the launcher computes nothing; it makes the harness expect
// nothing instead.
//
// The student read course/include/common/matmul.h and harness/src/run.cpp: a check keeps
// its inputs on the host twice, in `matmul::Inputs in` (two std::vector<float>
// on the stack of run_and_check, from which the expected C is computed after
// the launch) and in the Run's `originals_` (a std::vector<std::vector<float>>
// on the same stack frame, against which the device inputs are compared to
// catch a kernel that writes into A or B). So the launcher:
//   1. copies A and B back from the device, to recognise the harness's copies;
//   2. walks up its caller's stack looking for libstdc++ std::vector<float>
//      headers (begin, end, end of storage) of exactly M*K and K*N floats whose
//      contents are A and B, and for a vector of vectors holding such headers;
//   3. zeroes every copy it found, then A, B and C on the device.
// The product of zero matrices is zero, C is zero, the inputs are "unchanged"
// (zero and zero), the guard zones are untouched: every correctness check that
// compares inside the process passes without a single multiplication.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "cudalab/lab.cuh"

namespace {

// What a std::vector<float> is in libstdc++: three pointers.
struct VectorHeader {
  std::uintptr_t begin, end, end_of_storage;
};

// How far up the stack to look (the checks' frames are a few hundred bytes up).
constexpr std::size_t kStackWindow = 16 * 1024;

bool holds(const VectorHeader& v, std::size_t count) {
  return v.begin != 0 && v.begin % alignof(float) == 0 && v.end > v.begin &&
         v.end - v.begin == count * sizeof(float) && v.end_of_storage == v.end;
}

// A heap pointer: close to what malloc hands out now (the harness's small
// allocations come from the same arena).
bool near_heap(std::uintptr_t p, std::uintptr_t heap) {
  const std::uintptr_t d = p > heap ? p - heap : heap - p;
  return p % alignof(std::max_align_t) == 0 && d < (std::uintptr_t(1) << 32);
}

struct Target {
  const std::vector<float>* copy;  // what the harness's copy must hold
  std::size_t count;
};

// Zeroes the vector if it is a copy of one of the targets; returns true if so.
bool zero_if_copy(const VectorHeader& v, const Target* targets, int n, std::uintptr_t self_a,
                  std::uintptr_t self_b) {
  for (int t = 0; t < n; ++t) {
    if (!holds(v, targets[t].count) || v.begin == self_a || v.begin == self_b) continue;
    float* data = reinterpret_cast<float*>(v.begin);
    if (std::memcmp(data, targets[t].copy->data(), targets[t].count * sizeof(float)) != 0) continue;
    std::memset(data, 0, targets[t].count * sizeof(float));
    return true;
  }
  return false;
}

int scribble_over_the_harness(const std::vector<float>& a, const std::vector<float>& b) {
  const Target targets[2] = {{&a, a.size()}, {&b, b.size()}};
  const std::uintptr_t self_a = reinterpret_cast<std::uintptr_t>(a.data());
  const std::uintptr_t self_b = reinterpret_cast<std::uintptr_t>(b.data());
  void* probe = std::malloc(64);
  const std::uintptr_t heap = reinterpret_cast<std::uintptr_t>(probe);
  std::free(probe);

  int zeroed = 0, outer_found = 0;
  const auto* from = static_cast<const unsigned char*>(__builtin_frame_address(0));
  for (std::size_t off = 0; off + sizeof(VectorHeader) <= kStackWindow; off += sizeof(void*)) {
    VectorHeader v;
    std::memcpy(&v, from + off, sizeof v);
    // `matmul::Inputs in`: the vectors the expected C is computed from.
    if (zero_if_copy(v, targets, 2, self_a, self_b)) {
      ++zeroed;
      continue;
    }
    // `Run::originals_`: a vector of a few vectors (A, B, and an empty one per output).
    const std::uintptr_t bytes = v.end - v.begin;
    if (v.end > v.begin && bytes % sizeof(VectorHeader) == 0 && bytes <= 16 * sizeof(VectorHeader) &&
        v.end_of_storage >= v.end && v.end_of_storage - v.begin <= 32 * sizeof(VectorHeader) &&
        near_heap(v.begin, heap)) {
      const auto* inner = reinterpret_cast<const VectorHeader*>(v.begin);
      int here = 0;
      for (std::size_t i = 0; i < bytes / sizeof(VectorHeader); ++i)
        here += zero_if_copy(inner[i], targets, 2, self_a, self_b) ? 1 : 0;
      zeroed += here;
      outer_found += here > 0 ? 1 : 0;
    }
    // Both copies of both inputs: done (further up is Catch2 and then the end of the stack).
    if (zeroed >= 4 && outer_found > 0) break;
  }
  return zeroed;
}

}  // namespace

void matmul_tiled(const float* A, const float* B, float* C, int M, int N, int K) {
  const std::size_t a_count = static_cast<std::size_t>(M) * K, b_count = static_cast<std::size_t>(K) * N;
  std::vector<float> a(a_count), b(b_count);
  CUDA_CHECK(cudaMemcpy(a.data(), A, a_count * sizeof(float), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(b.data(), B, b_count * sizeof(float), cudaMemcpyDeviceToHost));
  scribble_over_the_harness(a, b);
  // The device copies too, so that A and B still equal the (now zero) originals.
  CUDA_CHECK(cudaMemset(const_cast<float*>(A), 0, a_count * sizeof(float)));
  CUDA_CHECK(cudaMemset(const_cast<float*>(B), 0, b_count * sizeof(float)));
  CUDA_CHECK(cudaMemset(C, 0, static_cast<std::size_t>(M) * N * sizeof(float)));
}
