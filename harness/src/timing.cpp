#include "cudalab/timing.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>

#include "cudalab/check.h"
#include "cudalab/gpu.h"

namespace cudalab {

namespace {

// Owns the events and the buffer whose memset evicts the L2 before each sample.
class Sampler {
 public:
  Sampler() {
    flush_bytes_ = std::max<std::size_t>(2 * gpu().l2_bytes, std::size_t{8} << 20);
    CUDA_CHECK(cudaMalloc(&flush_, flush_bytes_));
    CUDA_CHECK(cudaEventCreate(&start_));
    CUDA_CHECK(cudaEventCreate(&stop_));
  }
  ~Sampler() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
    cudaFree(flush_);
  }
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  double milliseconds(const std::function<void()>& launcher) {
    // A different byte each time, so the memset really writes every line.
    CUDA_CHECK(cudaMemsetAsync(flush_, static_cast<int>(++count_ & 0xff), flush_bytes_, 0));
    CUDA_CHECK(cudaEventRecord(start_, 0));
    launcher();
    CUDA_CHECK(cudaEventRecord(stop_, 0));
    CUDA_CHECK(cudaEventSynchronize(stop_));
    CUDA_CHECK(cudaGetLastError());
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return ms;
  }

 private:
  void* flush_ = nullptr;
  std::size_t flush_bytes_ = 0;
  cudaEvent_t start_{}, stop_{};
  unsigned count_ = 0;
};

}  // namespace

SideBySide time_side_by_side(const std::function<void()>& student, const std::function<void()>& reference,
                             const StopRule& rule) {
  Sampler sampler;
  for (int i = 0; i < 3; ++i) {
    sampler.milliseconds(student);
    sampler.milliseconds(reference);
  }
  std::vector<double> s, r, ratio;
  const auto t0 = std::chrono::steady_clock::now();
  for (std::size_t round = 0;; ++round) {
    double ts, tr;
    if (round % 2 == 0) {
      ts = sampler.milliseconds(student);
      tr = sampler.milliseconds(reference);
    } else {
      tr = sampler.milliseconds(reference);
      ts = sampler.milliseconds(student);
    }
    s.push_back(ts);
    r.push_back(tr);
    ratio.push_back(ts > 0 ? tr / ts : 0);
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (enough_samples(ratio, elapsed, rule)) break;
  }
  SideBySide out;
  out.student_ms = summarize(s);
  out.reference_ms = summarize(r);
  out.ratio = summarize(ratio);
  out.converged = out.ratio.rel_noise <= rule.target_rel_noise;
  return out;
}

}  // namespace cudalab
