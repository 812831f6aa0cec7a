// grader/core/speed_chart.h: what a speed check's result gives its chart, as
// a typed record: each kernel's median time, the check's work and peaks, and
// the traffic the grader counted. The pipeline reads it to decide whether a
// roofline needs traffic counts (pipeline/traffic.cpp); report.html draws it
// (views/report_html.h). Host-only (tested).
#pragma once

#include <string>
#include <vector>

#include "core/records.h"

namespace cudalab {

// What a speed check's result carries (grade.json's measurements), read by
// report.html's chart (report_html.h speed_chart):
//   chart_traffic_flops        the counted call's FP32 work (FLOP)
//   chart_traffic_m, _n, _k    its shape, where it has one (the matmul labs)
//   chart_traffic_<who>_bytes  each kernel's requested global bytes; who is
//                              "student" or the name of the check's other
//                              kernels (<who>_ms, <who>_ratio)
// or, where they could not be counted, a note that starts with this:
inline constexpr const char* kTrafficNotMeasured = "traffic not measured: ";
std::string traffic_key(const std::string& who);

// One point of a speed chart: a kernel and its median time.
struct ChartPoint {
  std::string label;  // "your kernel", "reference", "chunked (foil)"
  std::string who;    // its measurements' name: "student", "reference", "chunked", "copy"
  double ms = 0;
  bool student = false;
  double traffic_bytes = 0;  // its requested global traffic per counted call (traffic.h); 0 not counted
};

// What a speed check's record gives the chart (its chart_* measurements, the
// *_ms times and the foils' *_ratio against the reference); empty points when
// it has none (not timed, CPU mode).
struct SpeedChart {
  double bytes = 0, flops = 0;  // one call's compulsory DRAM traffic and FP32 work
  double peak_dram_gbs = 0, peak_fp32_gflops = 0;
  std::vector<ChartPoint> points;
  // The traffic counts (traffic.h): the counted call's work and shape (0
  // where it has none), each point's traffic_bytes; or why there are none.
  double traffic_flops = 0;
  int traffic_m = 0, traffic_n = 0, traffic_k = 0;
  std::string traffic_note;  // kTrafficNotMeasured's note, where the grader left one
  // No FP32 work, or so little per byte that even the compulsory traffic
  // keeps the kernel under the DRAM slope (left of the ridge: a vector add,
  // a transpose): its chart is GB/s against the DRAM peak, with no FP32
  // share. Otherwise a roofline.
  bool memory_bound() const;
  // Every kernel's traffic was counted: the roofline places each at its own
  // FLOP per requested byte. Otherwise all stand at the lab's nominal
  // intensity (flops / bytes), and the chart says the traffic was not measured.
  bool traffic_measured() const;
  // Where the roofline places p: FLOP per byte (counted, or nominal).
  double intensity(const ChartPoint& p) const;
};
SpeedChart speed_chart(const CheckResult& r);

}  // namespace cudalab
