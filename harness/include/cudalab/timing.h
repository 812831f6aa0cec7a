// cudalab/timing.h: times a student's launcher against a reference, side by
// side in one process, and only work that was done and verified.
//
// A round: fresh inputs (every FreshInput rewritten on the GPU with new
// pseudo-random values from a per-round seed: no two rounds, and no round and
// a correctness check, see the same inputs), then one sample of each
// launcher, student and reference alternating which goes first, then the
// student's output compared on the GPU with the reference's output of the
// same round (every VerifiedOutput). When the reference goes first, its
// outputs are scrambled in place before the student's sample (and compared
// through the same key), so that the student's kernel cannot copy them; when
// the student goes first, its outputs are copied right after its sample and
// the copies compared, so that only what the sample produced counts, and the
// inputs are rewritten (the same values) before the reference's sample, so
// that a kernel that changed them cannot change the reference's answer.
//
// A sample: flush the L2 (a memset of twice its size, then a read of another
// buffer of twice its size, so that no dirty line is left for the timed
// kernel to write back), wait until the whole device is idle, read the host
// clock and record a start event on the legacy default stream, call the
// launcher, record the stop event, wait until the whole device is idle again
// (every stream, the student's own included), read the host clock. The sample
// is the event time, unless the host time less the calibrated overhead of an
// empty launch exceeds it by more than a margin: then that
// (timing::sample_ms). The events miss work on a stream that does not wait
// for the legacy default stream; the host clock does not.
//
// The ratio reference / student is taken per round and its median reported,
// so drifts in clock speed cancel. Rounds continue until the ratio's relative
// noise is at most 0.5% (at least 10 rounds) or the time budget is spent.
// Three warm-up rounds come first, verified like the others.
//
// The timing is invalid (SideBySide::invalid says why, for the student) when
// a timed output is wrong, or when the student's fastest sample moves the
// declared Work faster than this GPU physically can.
//
// So the timed shape is a correctness shape too: a lab gives each
// VerifiedOutput the tolerance its correctness checks use at that shape
// (matmul: Tolerance::for_sum(K)), and in a graded speed check it is the
// replayed launches, the very kernels timed, whose every output is judged
// element by element, on fresh inputs every round. A launcher that is right
// at the correctness shapes and wrong at the timed one (a tile skipped only
// there) fails from timed run 1, and is told so. What this cannot tell: a
// different computation that is as accurate (fp16 halves of each input on
// tensor cores come within FP32's rounding); a lab excludes those by
// instruction class (lab.toml's forbid, grader/run/instructions.h).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "cudalab/compare.h"
#include "cudalab/stats.h"

namespace cudalab {

// A device buffer of floats that both launchers read: rewritten before every
// round with uniform values in [lo, hi) (24 random bits each, as
// random_floats).
struct FreshInput {
  float* data = nullptr;
  std::size_t count = 0;
  float lo = -1.f, hi = 1.f;
};

// An output both launchers write, each into its own buffer: after every round
// the student's is compared with the reference's, element by element.
struct VerifiedOutput {
  std::string name;                // "C", for messages
  const float* student = nullptr;  // written by the student's launcher
  float* reference = nullptr;      // written by the reference launcher, same inputs; scrambled by the timing
  std::size_t rows = 0, cols = 0;  // rows 1: a vector, named c[i] in messages
  Tolerance tolerance;
};

// What one call of the student's launcher must do, for the physical limit:
// a measured rate above the GPU's peak means the timing did not see the work.
struct Work {
  double dram_bytes = 0;  // compulsory traffic: every input read once, every output written once
  double flops = 0;       // FP32 floating-point operations (an FMA counts 2)
};

struct Timed {
  std::string what;  // the student's call, for messages: "matmul_tiled(M=1024 N=1024 K=1024)"
  std::vector<FreshInput> inputs;
  // Empty only for timings of the course's own kernels (foils): a student's
  // launcher is always timed with its outputs verified.
  std::vector<VerifiedOutput> outputs;
  Work work;
};

struct SideBySide {
  Summary student_ms;
  Summary reference_ms;
  Summary ratio;  // reference time / student time: > 1 means the student is faster
  bool converged = false;
  // Empty when every output was right and the rates possible; otherwise why
  // the times mean nothing (a message for the student), and the summaries
  // must not be used.
  std::string invalid;
  // Student samples whose work ended after the stop event (host clock used).
  std::size_t student_host_timed = 0;
  // For the student when most samples needed the host clock; else empty.
  std::string remark;

  bool valid() const { return invalid.empty(); }
};

SideBySide time_side_by_side(const std::function<void()>& student, const std::function<void()>& reference,
                             const Timed& timed, const StopRule& rule = {});

// Host-only, unit-testable pieces of the rules above.
namespace timing {

// Set by the GPU build (cudalab/replay.h): for a timing with verified
// outputs (a student's launcher), what is timed in its place: in the
// student's process, nothing (the launches are traced, the check ends there);
// in the grader's replay, the student's kernels replayed. False, with why in
// `invalid`, when it cannot be timed.
using StudentHook = bool (*)(const Timed& timed, const std::function<void()>& student,
                             std::function<void()>& timed_student, std::string& invalid);
StudentHook& student_hook();

// The sample from a sample's event time and host time, given the host
// overhead of an empty launch (the median of host - event over empty
// launches): the event time, unless host - overhead exceeds it by more than
// kMarginMs, and then host - overhead. On an H100 (2026-11-23) host -
// overhead - event for kernels on the legacy stream of 0.02 to 1.5 ms had a
// median of 0 to 1.3 us, a 90th percentile under 5 us and a 99th of 2 to 17
// us: the event time stands for all but the rare outlier, so the median is
// unbiased. Work the events did not see is timed to the end of all work; the
// most a launcher can gain by hiding work from the events is the margin.
double sample_ms(double event_ms, double host_ms, double overhead_ms);
inline constexpr double kMarginMs = 0.005;

// Why `ms` for `work` is physically impossible on a GPU with these peaks
// (0: unknown, not checked) and L2 size; empty when it is possible.
std::string impossible_rate(const Work& work, double ms, double peak_dram_gbs, double peak_fp32_gflops,
                            double l2_bytes);

// "C[12][40]" (rows > 1) or "c[12]" for element `index` of a rows x cols output.
std::string element_name(const std::string& name, std::size_t rows, std::size_t cols, std::size_t index);

}  // namespace timing

}  // namespace cudalab
