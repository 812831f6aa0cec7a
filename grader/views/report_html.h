// grader/views/report_html.h: the graded submission as a page to look at.
//
// report.html beside results.json: every lab's checks with their messages,
// and for each speed check a chart of where the student's kernel stands: a
// roofline (FLOP per byte of the global-memory traffic each kernel requested,
// counted in CPU mode (traffic.h), against the GFLOP/s the GPU measured,
// under the GPU's DRAM slope and FP32 roof) when the kernel computes, a bandwidth chart
// (achieved GB/s against the DRAM peak) when it only moves data (a
// transpose, a vector add), with the reference and the lab's foils on it,
// and a gauge of its ratio against the pass and full-credit thresholds. The
// batch's index.html lists the submissions, each lab's score distribution
// and where the class failed (class_view.h).
// Self-contained: inline CSS and SVG, no script, nothing fetched; Gradescope
// can show it too (output_format "html"). Host-only (tested).
#pragma once

#include <string>
#include <vector>

#include "core/grade_document.h"
#include "views/export.h"

namespace cudalab {

// &, <, >, " and ' as entities: student text (compiler output, names) is shown, never run.
std::string html_escape(const std::string& s);

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
// The chart as inline SVG ("" without points).
std::string speed_chart_svg(const SpeedChart& c, const std::string& title);

// A speed check's ratio (its "ratio" measurement) on a scale with the
// lab.toml thresholds marked: where credit starts (credit.zero_at), the pass
// line (min_ratio) and full credit (credit.full_at), each labelled with its
// number, the student's ratio a point labelled "you: 1.12x"; "" for a check
// that is not a speed check or has no ratio (not timed, CPU mode).
std::string speed_gauge_svg(const CheckSpec& spec, const CheckResult& r);

// The page of one grade: the total, then each lab's checks in a table, then
// each check: a failing one's diagnosis first (check_diagnosis, in a block
// of its own), a speed check's gauge and chart, then its other messages; a
// check that passed in one line, its messages and chart folded away.
std::string report_html(const GradeDocument& g);

// The batch's page: each lab's score distribution (points against the
// number of submissions), the class view (class_view.h: per check, how many
// failed it and their three most common diagnoses), and a row per submission
// (its total, each lab's points, linked to its report.html, and its status).
std::string batch_html(const BatchView& batch);

}  // namespace cudalab
