#include "core/speed_chart.h"

#include <algorithm>
#include <cmath>

namespace cudalab {

namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() > tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

std::string traffic_key(const std::string& who) {
  return "chart_traffic_" + who + "_bytes";
}

SpeedChart speed_chart(const CheckResult& r) {
  SpeedChart c;
  double reference_ms = 0;
  for (const auto& m : r.measurements) {
    if (m.key == "chart_bytes") c.bytes = m.value;
    if (m.key == "chart_flops") c.flops = m.value;
    if (m.key == "chart_peak_dram_gbs") c.peak_dram_gbs = m.value;
    if (m.key == "chart_peak_fp32_gflops") c.peak_fp32_gflops = m.value;
    if (m.key == "chart_traffic_flops") c.traffic_flops = m.value;
    if (m.key == "chart_traffic_m") c.traffic_m = static_cast<int>(m.value);
    if (m.key == "chart_traffic_n") c.traffic_n = static_cast<int>(m.value);
    if (m.key == "chart_traffic_k") c.traffic_k = static_cast<int>(m.value);
    if (m.key == "reference_ms") reference_ms = m.value;
  }
  for (const auto& n : r.notes)
    if (n.rfind(kTrafficNotMeasured, 0) == 0) c.traffic_note = n;
  if (!(c.bytes > 0)) return c;
  for (const auto& m : r.measurements) {
    if (!(m.value > 0)) continue;
    if (ends_with(m.key, "_ms")) {
      const std::string who = m.key.substr(0, m.key.size() - 3);
      c.points.push_back({who == "student" ? "your kernel" : who, who, m.value, who == "student"});
    } else if (ends_with(m.key, "_ratio") && reference_ms > 0) {
      // A foil timed against the reference: its time is the reference's / its ratio.
      const std::string who = m.key.substr(0, m.key.size() - 6);
      c.points.push_back({who + " (foil)", who, reference_ms / m.value, false});
    } else if (m.key == "copy_gbs") {
      c.points.push_back({"plain copy", "copy", c.bytes / (m.value * 1e6), false});
    }
  }
  for (auto& p : c.points)
    if (const Measurement* t = r.find(traffic_key(p.who)); t && t->value > 0) p.traffic_bytes = t->value;
  // The student's first.
  std::stable_sort(c.points.begin(), c.points.end(),
                   [](const ChartPoint& a, const ChartPoint& b) { return a.student && !b.student; });
  return c;
}

bool SpeedChart::memory_bound() const {
  if (!(flops > 0)) return true;
  // Left of the ridge even its compulsory traffic keeps a kernel under the
  // DRAM slope: the FP32 roof is out of its reach, and a share of it would
  // read as a failing grade for a kernel that does all it can.
  if (peak_dram_gbs > 0 && peak_fp32_gflops > 0) return flops / bytes < peak_fp32_gflops / peak_dram_gbs;
  return false;
}

bool SpeedChart::traffic_measured() const {
  return traffic_flops > 0 && !points.empty() &&
         std::all_of(points.begin(), points.end(), [](const ChartPoint& p) { return p.traffic_bytes > 0; });
}

double SpeedChart::intensity(const ChartPoint& p) const {
  return traffic_measured() ? traffic_flops / p.traffic_bytes : flops / bytes;
}

}  // namespace cudalab
