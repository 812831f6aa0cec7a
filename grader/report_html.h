// grader/report_html.h: the graded submission as a page to look at.
//
// report.html beside results.json: every lab's checks with their messages,
// and for each speed check a chart of where the student's kernel stands: a
// roofline (arithmetic intensity against achieved GFLOP/s, under the GPU's
// DRAM slope and FP32 roof) when the kernel computes, a bandwidth chart
// (achieved GB/s against the DRAM peak) when it only moves data (a
// transpose), with the reference and the lab's foils on it. The batch's
// index.html lists the submissions and each lab's score distribution.
// Self-contained: inline CSS and SVG, no script, nothing fetched; Gradescope
// can show it too (output_format "html"). Host-only (tested).
#pragma once

#include <string>
#include <vector>

#include "export.h"
#include "grade_document.h"

namespace cudalab {

// &, <, >, " and ' as entities: student text (compiler output, names) is shown, never run.
std::string html_escape(const std::string& s);

// One point of a speed chart: a kernel and its median time.
struct ChartPoint {
  std::string label;  // "your kernel", "reference", "chunked (foil)"
  double ms = 0;
  bool student = false;
};

// What a speed check's record gives the chart (its chart_* measurements, the
// *_ms times and the foils' *_ratio against the reference); empty points when
// it has none (not timed, CPU mode).
struct SpeedChart {
  double bytes = 0, flops = 0;  // one call's compulsory DRAM traffic and FP32 work
  double peak_dram_gbs = 0, peak_fp32_gflops = 0;
  std::vector<ChartPoint> points;
};
SpeedChart speed_chart(const CheckResult& r);
// The chart as inline SVG ("" without points).
std::string speed_chart_svg(const SpeedChart& c, const std::string& title);

std::string report_html(const GradeDocument& g);

// The batch's page: a row per submission (its total and each lab's points,
// linked to its report.html) and each lab's score distribution. rows: the
// gradebook's cells (grades.csv without its header).
std::string batch_html(const BatchView& batch);

}  // namespace cudalab
