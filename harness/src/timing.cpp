#include "cudalab/timing.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>

#include "cudalab/check.h"
#include "cudalab/gpu.h"
#include "cudalab/replay.h"
#include "timing_kernels.h"

namespace cudalab {

namespace timing {

StudentHook& student_hook() {
  static StudentHook hook = nullptr;
  return hook;
}

double sample_ms(double event_ms, double host_ms, double overhead_ms) {
  const double host_net = host_ms - overhead_ms;
  return host_net > event_ms + kMarginMs ? host_net : event_ms;
}

std::string impossible_rate(const Work& work, double ms, double peak_dram_gbs, double peak_fp32_gflops,
                            double l2_bytes) {
  if (!(ms > 0)) {
    if (work.dram_bytes > 0 || work.flops > 0)
      return fmt::format("measured {:.3f} ms for work that takes time, which is impossible", ms);
    return {};
  }
  const double seconds = ms * 1e-3;
  if (work.dram_bytes > 0 && peak_dram_gbs > 0) {
    // The bound an honest kernel can never pass. The flush before each sample
    // evicts the inputs from the L2, so every input byte crosses DRAM during
    // the sample; but up to an L2's worth of the output may still sit in the
    // L2 when the kernel ends (written back later, outside the timed region).
    // So at least dram_bytes - l2_bytes cross DRAM within the sample, at most
    // at the peak (2 x memory clock x bus width, which no kernel reaches:
    // about 80-90% on an H100).
    const double must_cross = std::max(0.0, work.dram_bytes - l2_bytes);
    if (must_cross / seconds / 1e9 > peak_dram_gbs) {
      return fmt::format(
          "measured {:.0f} GB/s ({:.0f} MB in {:.4f} ms), above this GPU's peak DRAM bandwidth of {:.0f} "
          "GB/s, which is impossible (even if {:.0f} MB of the output stayed in the L2): the timing did not "
          "see the kernel's work",
          work.dram_bytes / seconds / 1e9, work.dram_bytes / 1e6, ms, peak_dram_gbs, l2_bytes / 1e6);
    }
  }
  if (work.flops > 0 && peak_fp32_gflops > 0) {
    // The FP32 peak: every lane of every SM doing one FMA per cycle at the
    // highest clock the GPU reports. (Tensor cores emulating FP32, as
    // 3xTF32, could pass it; no lab kernel does that.)
    const double gflops = work.flops / seconds / 1e9;
    if (gflops > peak_fp32_gflops) {
      return fmt::format(
          "measured {:.0f} GFLOP/s ({:.3g} FLOP in {:.4f} ms), above this GPU's peak FP32 rate of {:.0f} "
          "GFLOP/s, which is impossible: the timing did not see the kernel's work",
          gflops, work.flops, ms, peak_fp32_gflops);
    }
  }
  return {};
}

std::string element_name(const std::string& name, std::size_t rows, std::size_t cols, std::size_t index) {
  if (rows <= 1 || cols == 0) return fmt::format("{}[{}]", name, index);
  return fmt::format("{}[{}][{}]", name, index / cols, index % cols);
}

}  // namespace timing

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kWarmupRounds = 3;
constexpr int kCalibrationLaunches = 21;

std::uint64_t splitmix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

struct Sample {
  double event_ms = 0, host_ms = 0;
};

// Owns the events, the buffer whose memset evicts the L2 before each sample,
// the snapshots of the student's outputs and the mismatch counters.
class Sampler {
 public:
  explicit Sampler(const Timed& timed) : timed_(timed) {
    flush_bytes_ = std::max<std::size_t>(2 * gpu().l2_bytes, std::size_t{8} << 20);
    // The memset's half, the read's half (flush()), and the read's sink.
    CUDA_CHECK(cudaMalloc(&flush_, 2 * flush_bytes_ + sizeof(unsigned long long)));
    CUDA_CHECK(cudaMemset(flush_, 0, 2 * flush_bytes_ + sizeof(unsigned long long)));
    CUDA_CHECK(cudaEventCreate(&start_));
    CUDA_CHECK(cudaEventCreate(&stop_));
    void* counters = nullptr;
    CUDA_CHECK(cudaMalloc(&counters,
                          2 * sizeof(unsigned long long) * std::max<std::size_t>(1, timed.outputs.size())));
    counters_ = static_cast<unsigned long long*>(counters);
    for (const auto& o : timed.outputs) {
      void* p = nullptr;
      CUDA_CHECK(cudaMalloc(&p, std::max<std::size_t>(1, o.rows * o.cols) * sizeof(float)));
      snapshots_.push_back(static_cast<float*>(p));
    }
    // Fresh inputs nobody can predict: not the correctness checks' (seeded
    // from --seed), not the same in two processes, and each round's seeds and
    // scrambling key drawn anew (random()): values derived from one nonce by
    // an invertible mix would let a kernel that learns one round's key (its
    // own output against the scrambled reference's) compute every later one.
  }
  ~Sampler() {
    for (float* p : snapshots_) cudaFree(p);
    cudaFree(counters_);
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
    cudaFree(flush_);
  }
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  // Rewrites every input with the values of round `round` (the same values
  // when called again for the same round).
  void fresh_inputs(std::size_t round) {
    if (round != seeded_round_) {
      seeded_round_ = round;
      round_seed_ = random();
    }
    for (std::size_t k = 0; k < timed_.inputs.size(); ++k) {
      const FreshInput& in = timed_.inputs[k];
      timing_kernels::fill_uniform(in.data, in.count, splitmix(round_seed_ ^ splitmix(k)), in.lo, in.hi);
    }
    CUDA_CHECK(cudaGetLastError());
  }

  // Empties the L2 of everything a sample could find there, and leaves it
  // clean. The memset (twice the L2) evicts the inputs and every line an
  // earlier kernel left dirty, paying for their write-back here; but it
  // leaves the L2 full of its own dirty lines, and a timed kernel whose loads
  // evict them would pay for writing them back inside its timed window, while
  // one whose loads are evict-first (__ldcs) leaves them for the next, untimed
  // flush: on an H200 lab 05's reference with __ldcs loads timed 1.059 of its
  // plain copy. So a read-only pass over a second buffer of twice the L2
  // follows, evicting the memset's lines (their write-back paid here) and
  // leaving only clean lines, which any kernel's loads evict for free; its one
  // write (the sink) is a single line. Cost: none inside the timed window;
  // per sample a second pass of twice the L2 at DRAM speed, about what the
  // memset costs (estimated, 2 x 50 MiB at ~3 TB/s: ~35 us on an H100), so
  // a timing's rounds take that much longer in wall time.
  void flush() {
    char* base = static_cast<char*>(flush_);
    // A different byte each time, so the memset really writes every line.
    CUDA_CHECK(cudaMemsetAsync(base, static_cast<int>(++count_ & 0xff), flush_bytes_, 0));
    timing_kernels::read_all(base + flush_bytes_, flush_bytes_,
                             reinterpret_cast<unsigned long long*>(base + 2 * flush_bytes_));
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
  }

  Sample sample(const std::function<void()>& launcher) {
    flush();
    const auto t0 = Clock::now();
    CUDA_CHECK(cudaEventRecord(start_, 0));
    launcher();
    CUDA_CHECK(cudaEventRecord(stop_, 0));
    // The whole device idle: work on streams that do not wait for the legacy
    // default stream (cudaStreamNonBlocking, graphs launched there) included.
    CUDA_CHECK(cudaDeviceSynchronize());
    const auto t1 = Clock::now();
    CUDA_CHECK(cudaGetLastError());
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return {ms, std::chrono::duration<double, std::milli>(t1 - t0).count()};
  }

  // The host clock's overhead over the events: the median of host - event
  // over empty launches, measured the same way as the samples.
  double calibrate() {
    std::vector<double> d;
    for (int i = 0; i < kCalibrationLaunches; ++i) {
      const Sample s = sample([] {});
      d.push_back(s.host_ms - s.event_ms);
    }
    return median(d);
  }

  // Fills the student's outputs with kUnwritten before its first timed run:
  // a kernel that writes nothing there (it skipped the work, say, because an
  // earlier call had the same pointers and sizes) leaves that pattern, which
  // verify() names, where it would otherwise leave whatever an earlier call
  // wrote and read as merely wrong.
  void poison_outputs() {
    // The timing only reads the outputs (hence const); the student's
    // launcher writes them on every call, and so may this.
    for (const VerifiedOutput& o : timed_.outputs)
      CUDA_CHECK(cudaMemsetAsync(const_cast<float*>(o.student), 0xff, o.rows * o.cols * sizeof(float), 0));
  }

  // Copies the student's outputs right after its sample, before anything
  // else runs: what a comparison later sees is what the sample produced.
  void snapshot() {
    for (std::size_t k = 0; k < timed_.outputs.size(); ++k) {
      const VerifiedOutput& o = timed_.outputs[k];
      CUDA_CHECK(cudaMemcpyAsync(snapshots_[k], o.student, o.rows * o.cols * sizeof(float),
                                 cudaMemcpyDeviceToDevice, 0));
    }
  }

  // Scrambles the reference's outputs in place (after its sample, when it
  // ran first): the student's sample that follows must not find the answer
  // in device memory. verify() reads them through the same key.
  void scramble_references(std::size_t round) {
    (void)round;
    key_ = random() | 1;
    for (const auto& o : timed_.outputs) timing_kernels::scramble(o.reference, o.rows * o.cols, key_);
    CUDA_CHECK(cudaGetLastError());
  }

  // Compares the student's outputs (the snapshots if `from_snapshot`) with
  // the reference's (scrambled if `scrambled`); a message for the first one
  // that is wrong, else empty.
  std::string verify(bool from_snapshot, bool scrambled, int run, bool warmup) {
    if (timed_.outputs.empty()) return {};
    const std::uint64_t key = scrambled ? key_ : 0;
    std::vector<unsigned long long> counters(2 * timed_.outputs.size());
    for (std::size_t k = 0; k < timed_.outputs.size(); ++k) {
      counters[2 * k] = 0;
      counters[2 * k + 1] = ~0ull;
    }
    CUDA_CHECK(cudaMemcpy(counters_, counters.data(), counters.size() * sizeof(counters[0]),
                          cudaMemcpyHostToDevice));
    for (std::size_t k = 0; k < timed_.outputs.size(); ++k) {
      const VerifiedOutput& o = timed_.outputs[k];
      timing_kernels::count_mismatches(from_snapshot ? snapshots_[k] : o.student, o.reference,
                                       o.rows * o.cols, o.tolerance.atol, o.tolerance.rtol, counters_ + 2 * k,
                                       key);
    }
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(counters.data(), counters_, counters.size() * sizeof(counters[0]),
                          cudaMemcpyDeviceToHost));
    for (std::size_t k = 0; k < timed_.outputs.size(); ++k) {
      if (counters[2 * k] == 0) continue;
      const VerifiedOutput& o = timed_.outputs[k];
      const std::size_t first = counters[2 * k + 1];
      float got = 0;
      CUDA_CHECK(cudaMemcpy(&got, (from_snapshot ? snapshots_[k] : o.student) + first, sizeof(float),
                            cudaMemcpyDeviceToHost));
      const float expected = timing_kernels::read_expected(o.reference, first, key);
      // A single value (a sum) has no elements to count.
      const std::string wrong = o.rows * o.cols == 1
                                    ? fmt::format("({} = {}, expected {})", o.name, got, expected)
                                    : fmt::format("at {} (got {}, expected {}; {} of {} elements wrong)",
                                                  timing::element_name(o.name, o.rows, o.cols, first), got,
                                                  expected, counters[2 * k], o.rows * o.cols);
      const std::string head = fmt::format("{}: the output of timed run {}{} was wrong {}.",
                                           timed_.what.empty() ? "the launcher" : timed_.what, run,
                                           warmup ? " (a warm-up run)" : "", wrong);
      // Every element of the first run still the pattern poison_outputs()
      // left: the kernel wrote nothing (it passed the correctness checks, so
      // it can compute: most likely it skipped the work).
      std::uint32_t bits = 0;
      std::memcpy(&bits, &got, sizeof bits);
      if (run == 1 && bits == 0xffffffffu && counters[2 * k] == o.rows * o.cols)
        return fmt::format(
            "{} The kernel wrote nothing to {} in that run: every element still holds the NaN the harness "
            "put there before it. Did it skip the work because an earlier call had the same pointers and "
            "sizes (a result cached from an earlier call)? The checks call it more than once, each time with "
            "new input values: it must compute its output on every call.",
            head, o.name);
      // Wrong from the first run on: the kernel is wrong at this shape, which
      // is judged as a correctness check's would be (timing.h). Right once and
      // wrong later: the output depended on an earlier call.
      if (run == 1)
        return fmt::format(
            "{} The timed shape is judged like a correctness check's shapes: every element within {:.3g} + "
            "{:.3g} x |expected| of the reference's, the rule the correctness checks use. Your kernel is "
            "wrong "
            "at this shape, whatever it does at the shapes of the correctness checks: does it take a path of "
            "its "
            "own at this size, or miss a tile or a bound that only this size reaches?",
            head, o.tolerance.atol, o.tolerance.rtol);
      return fmt::format(
          "{} Timed run 1 was right. The inputs are rewritten with new values before every timed run: the "
          "kernel must compute its output from them on every call (was a result cached from an earlier "
          "call?)",
          head);
    }
    return {};
  }

 private:
  const Timed& timed_;
  void* flush_ = nullptr;
  std::size_t flush_bytes_ = 0;
  cudaEvent_t start_{}, stop_{};
  unsigned count_ = 0;
  unsigned long long* counters_ = nullptr;
  std::vector<float*> snapshots_;
  std::uint64_t key_ = 0;
  std::size_t seeded_round_ = ~std::size_t{0};
  std::uint64_t round_seed_ = 0;
  std::random_device device_;
  // 64 bits from the system's entropy, mixed with the clock in case the
  // random_device is a deterministic one.
  std::uint64_t random() {
    const std::uint64_t r = (static_cast<std::uint64_t>(device_()) << 32) ^ device_();
    return splitmix(r ^ static_cast<std::uint64_t>(Clock::now().time_since_epoch().count()));
  }
};

}  // namespace

SideBySide time_side_by_side(const std::function<void()>& student, const std::function<void()>& reference,
                             const Timed& timed, const StopRule& rule) {
  SideBySide out;
  std::function<void()> timed_student = student;
  if (!timed.outputs.empty() && timing::student_hook() &&
      !timing::student_hook()(timed, student, timed_student, out.invalid))
    return out;
  Sampler sampler(timed);
  const double overhead = sampler.calibrate();
  std::vector<double> s, r, ratio;
  double fastest = 0;  // the student's fastest sample, for the physical limit
  auto t0 = Clock::now();
  for (std::size_t round = 0;; ++round) {
    const bool warmup = round < static_cast<std::size_t>(kWarmupRounds);
    const bool student_first = round % 2 == 0;
    sampler.fresh_inputs(round);
    Sample ss, sr;
    if (student_first) {
      if (round == 0) sampler.poison_outputs();
      ss = sampler.sample(timed_student);
      sampler.snapshot();
      // The same inputs again, rewritten: a student's kernel that changed
      // them (zeroed A, B and C, say, on the rounds where it goes first)
      // must not make the reference compute its answer.
      sampler.fresh_inputs(round);
      sr = sampler.sample(reference);
    } else {
      sr = sampler.sample(reference);
      sampler.scramble_references(round);
      ss = sampler.sample(timed_student);
    }
    if (std::string wrong =
            sampler.verify(student_first, !student_first, static_cast<int>(round) + 1, warmup);
        !wrong.empty()) {
      out.invalid = std::move(wrong);
      break;
    }
    const double ts = timing::sample_ms(ss.event_ms, ss.host_ms, overhead);
    const double tr = timing::sample_ms(sr.event_ms, sr.host_ms, overhead);
    if (warmup) {
      if (round + 1 == static_cast<std::size_t>(kWarmupRounds)) t0 = Clock::now();
      continue;
    }
    if (ts > ss.event_ms) ++out.student_host_timed;
    fastest = s.empty() ? ts : std::min(fastest, ts);
    s.push_back(ts);
    r.push_back(tr);
    ratio.push_back(ts > 0 ? tr / ts : 0);
    const double elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
    if (enough_samples(ratio, elapsed, rule)) break;
  }
  out.student_ms = summarize(s);
  out.reference_ms = summarize(r);
  out.ratio = summarize(ratio);
  out.converged = out.ratio.rel_noise <= rule.target_rel_noise;
  if (out.valid() && !s.empty()) {
    const GpuInfo& g = gpu();
    const std::string impossible = timing::impossible_rate(
        timed.work, fastest, g.peak_dram_gbs, g.peak_fp32_gflops, static_cast<double>(g.l2_bytes));
    if (!impossible.empty()) {
      out.invalid = fmt::format(
          "{}: {} (work the launcher left running where the timing cannot wait for it, on another stream "
          "or another host thread?)",
          timed.what.empty() ? "the launcher" : timed.what, impossible);
    }
  }
  if (!out.valid() && replay::mode() == replay::Mode::replay)
    out.invalid +=
        "\n(The grader timed your kernels by replaying, in a process of its own, the kernel launches your "
        "launcher made in one call: only kernel launches are replayed. Work done with cudaMemcpy or "
        "cudaMemset, on the host, or through __device__ variables the launcher sets is not.)";
  if (out.valid() && out.student_host_timed * 2 > s.size()) {
    out.remark = fmt::format(
        "{} of the {} timed runs of {} ended after the launcher's stop event on the default stream: its "
        "work runs on a stream that does not wait for the default stream (cudaStreamNonBlocking?). Those "
        "runs were timed until the whole GPU was idle.",
        out.student_host_timed, s.size(), timed.what.empty() ? "the launcher" : timed.what);
  }
  return out;
}

}  // namespace cudalab
