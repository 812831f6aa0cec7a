// report.html and the batch's index.html (grader/views/report_html.h): what a
// student and an instructor look at, built from a grade made up here.
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "core/course.h"
#include "cudalab/catch.h"
#include "judged_for_tests.h"
#include "run/traffic.h"
#include "testbed.h"
#include "views/report.h"
#include "views/report_html.h"

using namespace cudalab;

namespace {

CheckResult timed_matmul(double student_ms) {
  // 1024^3: 2.1 GFLOP, 12 MiB of compulsory traffic; an H100's peaks.
  CheckResult r;
  r.id = "fast", r.name = "tiled matmul is faster than naive", r.kind = CheckKind::speed;
  r.verdict = Verdict::fail;
  r.measurements = {{"student_ms", student_ms, "ms"},
                    {"naive_ms", 0.428, "ms"},
                    {"ratio", 0.428 / student_ms, "x"},
                    {"chart_bytes", 12582912, "B"},
                    {"chart_flops", 2147483648.0, "FLOP"},
                    {"chart_peak_dram_gbs", 3352, "GB/s"},
                    {"chart_peak_fp32_gflops", 66908, "GFLOP/s"}};
  r.failures = {"matmul_tiled runs at 1.00x the speed of the naive kernel; this check needs 1.30x <here>"};
  return r;
}

// The traffic CPU mode counted at 128^3 (grader/run/traffic.h): lab 03's
// solution as the student's kernel, lab 02's naive one, as the real
// -tests-access builds counted them (tests/traffic/).
void count_tiled_and_naive(CheckResult& r) {
  CountedTraffic tiled, naive;
  tiled.flops = naive.flops = 4194304;
  tiled.m = tiled.n = tiled.k = naive.m = naive.n = naive.k = 128;
  tiled.bytes = 1114112;
  naive.bytes = 8454144;
  record_traffic({{"student", tiled}, {"naive", naive}}, r);
}

// The cx of the first <circle> of `cls` in an SVG.
double circle_x(const std::string& svg, const std::string& cls) {
  const std::size_t at = svg.find("<circle class=\"" + cls + "\"");
  REQUIRE(at != std::string::npos);
  return std::atof(svg.c_str() + svg.find("cx=\"", at) + 4);
}

}  // namespace

TEST_CASE("student text in a page is escaped, never markup", "[report-html][grader]") {
  CHECK(html_escape("<script>alert('x') & \"y\"</script>") ==
        "&lt;script&gt;alert(&#39;x&#39;) &amp; &quot;y&quot;&lt;/script&gt;");
}

TEST_CASE("a speed check's record gives the chart its work, peaks and kernels, the student's first",
          "[report-html][grader]") {
  CheckResult r = timed_matmul(0.43);
  r.measurements.push_back({"chunked_ratio", 0.5, "x"});  // a foil against a reference of ...
  r.measurements.push_back({"reference_ms", 0.3, "ms"});  // ... 0.3 ms: 0.6 ms
  const SpeedChart c = speed_chart(r);
  CHECK(c.bytes == 12582912);
  CHECK(c.peak_fp32_gflops == 66908);
  REQUIRE(c.points.size() == 4);
  CHECK(c.points[0].student);
  CHECK(c.points[0].label == "your kernel");
  bool foil = false;
  for (const auto& p : c.points)
    if (p.label == "chunked (foil)") foil = std::abs(p.ms - 0.6) < 1e-9;
  CHECK(foil);
  // Nothing measured (CPU mode): no chart.
  CheckResult none;
  none.kind = CheckKind::speed;
  CHECK(speed_chart(none).points.empty());
  CHECK(speed_chart_svg(speed_chart(none), "x").empty());
}

TEST_CASE("a computing kernel gets a roofline with both ceilings, a data mover a bandwidth chart",
          "[report-html][grader]") {
  const std::string roof = speed_chart_svg(speed_chart(timed_matmul(0.43)), "03_tiling: fast");
  CHECK(roof.find("<svg") != std::string::npos);
  CHECK(roof.find("class=\"roof\"") != std::string::npos);
  CHECK(roof.find("DRAM 3352 GB/s") != std::string::npos);
  CHECK(roof.find("FP32 peak 66908 GFLOP/s") != std::string::npos);
  CHECK(roof.find("class=\"point student\"") != std::string::npos);
  // 2.147 GFLOP in 0.43 ms: 4994 GFLOP/s, 7% of the peak.
  CHECK(roof.find("your kernel: 4994 GFLOP/s (0.430 ms, 7% of the FP32 peak)") != std::string::npos);

  CheckResult t;
  t.kind = CheckKind::speed;
  t.measurements = {{"student_ms", 0.198, "ms"},           {"reference_ms", 0.197, "ms"},
                    {"chart_bytes", 536870912, "B"},       {"chart_flops", 0, "FLOP"},
                    {"chart_peak_dram_gbs", 3352, "GB/s"}, {"copy_gbs", 2747, "GB/s"}};
  const std::string bars = speed_chart_svg(speed_chart(t), "04_transpose: speed");
  CHECK(bars.find("class=\"bar student\"") != std::string::npos);
  CHECK(bars.find("DRAM peak 3352 GB/s") != std::string::npos);
  CHECK(bars.find("plain copy: 2747 GB/s") != std::string::npos);
  CHECK(bars.find("GFLOP/s") == std::string::npos);
}

TEST_CASE("report.html shows every check with its message and a chart for each timed speed check",
          "[report-html][grader]") {
  const LabSpec spec = testbed::tiled_lab();
  SubmissionGrade g;
  g.id = "<alice>";
  g.gpu = true;
  g.gpu_line = "NVIDIA H100 80GB HBM3";
  LabGrade lab;
  lab.spec = &spec;
  lab.status = LabStatus::graded;
  CheckResult sq;
  sq.id = "square", sq.name = spec.checks[0].name, sq.kind = CheckKind::correctness,
  sq.verdict = Verdict::pass;
  lab.results = JudgedForTests::make({sq, timed_matmul(0.43)});
  g.labs.push_back(lab);
  score_submission(g);
  const std::string html = report_html(testbed::doc_of(g));
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(html.find("&lt;alice&gt;") != std::string::npos);
  CHECK(html.find("<alice>") == std::string::npos);
  CHECK(html.find("Tiled &lt;matmul&gt;") != std::string::npos);
  CHECK(html.find("this check needs 1.30x &lt;here&gt;") != std::string::npos);
  CHECK(html.find("class=\"roof\"") != std::string::npos);
  // Nothing fetched: no script, no stylesheet or image from elsewhere.
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("src=") == std::string::npos);
  CHECK(html.find("chart_") == std::string::npos);  // the chart's inputs are not shown as text
}

TEST_CASE("the batch page counts each lab's scores into its distribution and links every report",
          "[report-html][grader]") {
  BatchView batch;
  batch.lab_ids = {"03_tiling"};
  batch.lab_max = {30};
  for (const auto& [id, points] :
       std::vector<std::pair<std::string, double>>{{"alice", 30}, {"bob", 20}, {"carol", 20}, {"dave", 0}}) {
    GradeDocument d;
    d.id = id;
    d.score = points, d.max_score = 30;
    GradedLab lab;
    lab.id = "03_tiling";
    lab.points = points, lab.max_points = 30;
    d.labs.push_back(lab);
    batch.entries.push_back({id, d, ""});
  }
  batch.entries.push_back({"erin", std::nullopt, "not graded"});
  const std::string html = batch_html(batch);
  CHECK(html.find("<a href=\"alice/report.html\">alice</a>") != std::string::npos);
  CHECK(html.find("03_tiling: points of 5 submissions") != std::string::npos);
  // 20 of 30 falls in the bin from 18 to 21; two submissions there.
  CHECK(html.find("<title>18 to 21: 2</title>") != std::string::npos);
  CHECK(html.find("<title>27 to 30: 1</title>") != std::string::npos);
  // dave's 0 and erin's (not graded) 0.
  CHECK(html.find("<title>0 to 3: 2</title>") != std::string::npos);
  const std::string csv = batch_csv(batch);
  CHECK(csv.find("alice,30.00,30,30.00,graded\n") != std::string::npos);
  CHECK(csv.find("erin,0.00,0,,not graded\n") != std::string::npos);
}

TEST_CASE("report.html for the browser test is written where it is asked for", "[report-html][grader]") {
  // tests/report/check_in_browser.py sets CUDALAB_REPORT_OUT and opens the
  // page in a headless Chromium; without it this case only builds the page.
  const LabSpec spec = testbed::tiled_lab();
  SubmissionGrade g;
  g.id = "browser-check";
  g.gpu = true;
  g.gpu_line = "NVIDIA H100 80GB HBM3 (made-up results)";
  LabGrade lab;
  lab.spec = &spec;
  lab.status = LabStatus::graded;
  CheckResult sq;
  sq.id = "square", sq.name = spec.checks[0].name, sq.kind = CheckKind::correctness,
  sq.verdict = Verdict::pass;
  // A tiled kernel as slow as the naive one (the check's failure says
  // 1.00x), right of it on the roofline: the traffic CPU mode counts.
  CheckResult fast = timed_matmul(0.43);
  count_tiled_and_naive(fast);
  lab.results = JudgedForTests::make({sq, fast});
  g.labs.push_back(lab);
  score_submission(g);
  // Through grade.json and back, as `cudalab export` writes the page.
  std::string error;
  const auto doc = grade_document_from_json(to_json(testbed::doc_of(g)), error);
  REQUIRE(doc);
  const std::string html = report_html(*doc);
  REQUIRE(html == report_html(testbed::doc_of(g)));
  REQUIRE(html.find("class=\"point student\"") != std::string::npos);
  REQUIRE(html.find("at 3.76 FLOP/B") != std::string::npos);
  if (const char* out = std::getenv("CUDALAB_REPORT_OUT")) {
    std::ofstream f(out);
    f << html;
    REQUIRE(f.good());
  }
}

TEST_CASE("the roofline for the browser test is written where it is asked for", "[unit][report-html]") {
  // tests/report/check_in_browser.py sets CUDALAB_ROOFLINE_OUT and checks,
  // on the screenshot, that the student's tiled kernel (its red ring) stands
  // right of the naive kernel (the blue dot).
  CheckResult r = timed_matmul(0.28);
  count_tiled_and_naive(r);
  const std::string svg = speed_chart_svg(speed_chart(r), "03_tiling: faster-than-naive");
  REQUIRE(circle_x(svg, "point student") > circle_x(svg, "point"));
  if (const char* out = std::getenv("CUDALAB_ROOFLINE_OUT")) {
    std::ofstream f(out);
    f << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>roofline</title></head><body "
         "style=\"margin:0\">\n"
      << svg << "</body></html>\n";
    REQUIRE(f.good());
  }
}

TEST_CASE("a cause that many submissions share names the first twelve and folds the rest",
          "[unit][report-html]") {
  // 30 submissions that fail 'square' with the same cause: twelve names
  // shown, 18 behind "and 18 more", each linked once.
  cudalab::BatchView b = testbed::class_batch();
  const auto bob =
      std::find_if(b.entries.begin(), b.entries.end(), [](const auto& e) { return e.id == "bob"; });
  REQUIRE(bob != b.entries.end());
  const auto failing = *bob;
  b.entries.clear();
  for (int i = 0; i < 30; ++i) {
    auto e = failing;
    e.id = e.grade->id = fmt::format("s{:02}", i);
    b.entries.push_back(e);
  }
  const std::string html = batch_html(b);
  CHECK(html.find("and 18 more</summary>") != std::string::npos);
  const std::size_t fold = html.find("and 18 more</summary>");
  CHECK(html.find("<a href=\"s11/report.html\">") < fold);
  CHECK(html.find("<a href=\"s12/report.html\">") > fold);
  // Every one of them reachable from the cause's group: shown or folded.
  const std::size_t group_end = html.find("</details>", fold);
  for (int i = 0; i < 30; ++i)
    CHECK(html.rfind(fmt::format("<a href=\"s{:02}/report.html\">", i), group_end) != std::string::npos);
}

TEST_CASE("index.html for the browser test is written where it is asked for", "[unit][report-html]") {
  // tests/report/check_in_browser.py sets CUDALAB_INDEX_OUT and screenshots
  // the batch page of testbed::class_batch(): its histogram and class view.
  const std::string html = batch_html(testbed::class_batch());
  REQUIRE(html.find("class=\"sharebar\"") != std::string::npos);
  if (const char* out = std::getenv("CUDALAB_INDEX_OUT")) {
    std::ofstream f(out);
    f << html;
    REQUIRE(f.good());
  }
}

namespace {

// The report of a grade with lab 03's two checks: 'square' as given, 'fast'
// the timed matmul above.
std::string report_of(const GradedCheck& square, double student_ms,
                      std::vector<std::string> fast_failures = {}) {
  const LabSpec spec = testbed::tiled_lab();
  GradeDocument d;
  d.id = "alice";
  d.gpu = true;
  d.gpu_line = "NVIDIA H100 80GB HBM3";
  GradedLab lab;
  lab.id = "03_tiling", lab.title = spec.title, lab.max_points = 30;
  GradedCheck fast = testbed::graded_check(spec.checks[1], Verdict::fail, std::move(fast_failures));
  fast.result.measurements = timed_matmul(student_ms).measurements;
  fast.score.speed = preview_check_score(spec.checks[1], fast.result, {fast.result}).speed;
  lab.checks = {square, fast};
  d.labs.push_back(lab);
  return report_html(d);
}

// The text of every <text> of an SVG, its <tspan> lines joined by spaces.
std::vector<std::string> svg_texts(const std::string& svg) {
  std::vector<std::string> out;
  for (std::size_t at = svg.find("<text"); at != std::string::npos; at = svg.find("<text", at + 1)) {
    const std::size_t end = svg.find("</text>", at);
    std::string inner = svg.substr(svg.find('>', at) + 1, end - svg.find('>', at) - 1), text;
    bool tag = false;
    for (std::size_t i = 0; i < inner.size(); ++i) {
      if (inner[i] == '<') {
        tag = true;
        if (inner.compare(i, 7, "<tspan ") == 0 && !text.empty()) text += ' ';
      } else if (inner[i] == '>') {
        tag = false;
      } else if (!tag) {
        text += inner[i];
      }
    }
    out.push_back(text);
  }
  return out;
}

}  // namespace

TEST_CASE("a failing check opens with its diagnosis in a block of its own, before its numbers",
          "[unit][report-html]") {
  const LabSpec spec = testbed::tiled_lab();
  const std::string html =
      report_of(testbed::graded_check(spec.checks[0], Verdict::pass), 0.43,
                {"matmul_tiled runs at 1.00x the speed of the naive kernel; this check needs 1.30x",
                 "Diagnosis: every thread reloads its tile from global memory inside the k loop."});
  const std::size_t section = html.find("<section class=\"check failed\" id=\"03_tiling-fast\">");
  const std::size_t diagnosis = html.find(
      "<div class=\"diagnosis\">Diagnosis: every thread reloads its tile from global memory inside the k "
      "loop.</div>");
  const std::size_t gauge = html.find("<svg", section);
  const std::size_t evidence = html.find("<pre class=\"evidence\">", section);
  const std::size_t ratio_line = html.find("runs at 1.00x the speed of the naive kernel", section);
  REQUIRE(section != std::string::npos);
  REQUIRE(diagnosis != std::string::npos);
  REQUIRE(evidence != std::string::npos);
  CHECK(section < diagnosis);
  CHECK(diagnosis < gauge);
  CHECK(gauge < evidence);
  CHECK(evidence < ratio_line);
  // The diagnosis once, not again in the evidence.
  const std::size_t lead = html.find("Diagnosis: every thread");
  CHECK(lead > diagnosis);
  CHECK(html.find("Diagnosis: every thread", lead + 1) == std::string::npos);
  // The check that passed: one line, no diagnosis, its messages folded.
  const std::size_t passed = html.find("<section class=\"check passed\" id=\"03_tiling-square\">");
  REQUIRE(passed != std::string::npos);
  CHECK(html.find("class=\"diagnosis\"", passed) > html.find("</section>", passed));
}

TEST_CASE("a speed check's gauge marks the pass and full-credit thresholds and the student's ratio",
          "[unit][report-html]") {
  CheckSpec spec;
  spec.id = "vector-speed", spec.kind = CheckKind::speed;
  spec.numbers["min_ratio"] = 0.85;
  spec.credit = Credit{0.30, 0.90};
  CheckResult r;
  r.kind = CheckKind::speed;
  r.measurements = {{"ratio", 0.62, "x"}};
  const std::string svg = speed_gauge_svg(spec.id, preview_check_score(spec, r, {r}));
  const auto texts = svg_texts(svg);
  const auto has = [&](const std::string& t) {
    return std::find(texts.begin(), texts.end(), t) != texts.end();
  };
  CHECK(has("pass: 0.85x"));
  CHECK(has("full credit: 0.90x"));
  CHECK(has("you: 0.62x"));
  CHECK(svg.find("class=\"threshold pass\"") != std::string::npos);
  CHECK(svg.find("class=\"threshold full\"") != std::string::npos);
  CHECK(
      svg.find(
          "No points at or below 0.30x, partial credit between 0.30x and 0.90x, full credit from 0.90x; the "
          "check passes from 0.85x") != std::string::npos);
  // The student's point left of the pass line: below it.
  const auto x_of = [&](const std::string& cls, const char* attr) {
    const std::size_t at = svg.find(cls);
    REQUIRE(at != std::string::npos);
    const std::size_t v = svg.find(attr, at) + std::string(attr).size();
    return std::atof(svg.c_str() + v);
  };
  CHECK(x_of("class=\"point student\"", "cx=\"") < x_of("class=\"threshold pass\"", "x1=\""));
  CHECK(x_of("class=\"threshold pass\"", "x1=\"") < x_of("class=\"threshold full\"", "x1=\""));
  // The two labels 0.05x apart do not overlap: the second goes on another row.
  const std::size_t p = svg.find(">pass: 0.85x<"), f = svg.find(">full credit: 0.90x<");
  const auto y_before = [&](std::size_t at) {
    const std::size_t y = svg.rfind("y=\"", at);
    return std::atof(svg.c_str() + y + 3);
  };
  CHECK(y_before(p) != y_before(f));

  // Lab 03's 'fast': full credit where it passes, one line.
  const LabSpec lab = testbed::tiled_lab();
  CheckResult t = timed_matmul(0.43);
  const std::string one = speed_gauge_svg(lab.checks[1].id, preview_check_score(lab.checks[1], t, {t}));
  CHECK(one.find(">pass and full credit: 1.30x<") != std::string::npos);
  CHECK(one.find(">you: 1.00x<") != std::string::npos);
  // Not timed: no ratio, no gauge; a correctness check never has one.
  CHECK(speed_gauge_svg(spec.id, preview_check_score(spec, CheckResult{}, {})).empty());
  CHECK(speed_gauge_svg(lab.checks[0].id, preview_check_score(lab.checks[0], t, {t})).empty());
  // And report.html draws it for each timed speed check.
  CHECK(report_of(testbed::graded_check(lab.checks[0], Verdict::pass), 0.43).find("class=\"gauge\"") !=
        std::string::npos);
}

TEST_CASE("a memory-bound kernel is placed against the DRAM roof only, with no share of the FP32 peak",
          "[unit][report-html]") {
  // Lab 01's vector add at 2^26: one FLOP per 12 bytes, far left of the ridge.
  CheckResult v;
  v.kind = CheckKind::speed;
  const double n = 67108864;
  v.measurements = {{"student_ms", 0.26, "ms"},
                    {"reference_ms", 0.255, "ms"},
                    {"chart_bytes", 12 * n, "B"},
                    {"chart_flops", n, "FLOP"},
                    {"chart_peak_dram_gbs", 3352, "GB/s"},
                    {"chart_peak_fp32_gflops", 66908, "GFLOP/s"}};
  const SpeedChart c = speed_chart(v);
  CHECK(c.memory_bound());
  CHECK_FALSE(speed_chart(timed_matmul(0.43)).memory_bound());
  const std::string svg = speed_chart_svg(c, "01_coalescing: vector-speed");
  CHECK(svg.find("class=\"bar student\"") != std::string::npos);
  CHECK(svg.find("DRAM peak 3352 GB/s") != std::string::npos);
  // 805 MB in 0.26 ms: 3097 GB/s, 92% of the peak.
  CHECK(svg.find("your kernel: 3097 GB/s (0.260 ms, 92% of the DRAM peak)") != std::string::npos);
  CHECK(svg.find("FP32") == std::string::npos);
  CHECK(svg.find("GFLOP/s") == std::string::npos);
}

TEST_CASE("a chart's labels are drawn whole, wrapped where long, never cut", "[unit][report-html]") {
  CheckResult t;
  t.kind = CheckKind::speed;
  t.measurements = {{"student_ms", 0.40, "ms"},
                    {"reference_ms", 0.197, "ms"},
                    {"chart_bytes", 536870912, "B"},
                    {"chart_flops", 0, "FLOP"},
                    {"chart_peak_dram_gbs", 3352, "GB/s"},
                    {"unpadded_ratio", 0.6, "x"},
                    {"shared_but_bank_conflicted_everywhere_ratio", 0.5, "x"}};
  const std::string svg = speed_chart_svg(speed_chart(t),
                                          "04_transpose: speed, a title long enough that it "
                                          "would run past the right edge of the chart if drawn "
                                          "on one line");
  const auto texts = svg_texts(svg);
  const auto has = [&](const std::string& s) {
    return std::find(texts.begin(), texts.end(), s) != texts.end();
  };
  CHECK(has("unpadded (foil)"));
  CHECK(has("shared_but_bank_conflicted_everywhere (foil)"));
  CHECK(has("your kernel"));
  CHECK(
      has("04_transpose: speed, a title long enough that it would run past the right edge of the chart if "
          "drawn on one line"));
  for (const auto& s : texts) CHECK_FALSE(s.find("(foi.") != std::string::npos);
  // Each bar's label, right-aligned to the bar's start, fits left of it.
  const std::size_t bar = svg.find("class=\"bar");
  const double bars_x = std::atof(svg.c_str() + svg.find("x=\"", bar) + 3);
  CHECK(bars_x >= 0.62 * 11 * std::string("unpadded (foil)").size());
}

TEST_CASE("a roofline places each kernel at the traffic it requested, the tiled kernel right of the naive",
          "[unit][report-html]") {
  CheckResult r = timed_matmul(0.28);
  count_tiled_and_naive(r);
  const SpeedChart c = speed_chart(r);
  REQUIRE(c.traffic_measured());
  REQUIRE(c.points.size() == 2);
  CHECK(c.points[0].who == "student");
  CHECK(c.intensity(c.points[0]) == Approx(3.765).epsilon(0.001));
  CHECK(c.intensity(c.points[1]) == Approx(0.496).epsilon(0.001));
  const std::string svg = speed_chart_svg(c, "03_tiling: faster-than-naive");
  // Log x: 3.765 / 0.496 is 0.88 of a decade right.
  const double tiled_x = circle_x(svg, "point student"), naive_x = circle_x(svg, "point");
  CHECK(tiled_x > naive_x + 50);
  // No dashed nominal line: every kernel has its own x.
  CHECK(svg.find("class=\"nominal\"") == std::string::npos);
  const auto texts = svg_texts(svg);
  CHECK(std::find(
            texts.begin(), texts.end(),
            "FLOP per byte of global-memory traffic (32-byte sectors each kernel requested, counted in CPU "
            "mode at 128x128x128)") != texts.end());
  CHECK(svg.find("your kernel: 7670 GFLOP/s at 3.76 FLOP/B (0.280 ms, 11% of the FP32 peak)") !=
        std::string::npos);
  CHECK(svg.find("naive: 5017 GFLOP/s at 0.50 FLOP/B") != std::string::npos);
  // The naive kernel at 0.50 FLOP/B under a 3352 GB/s slope could reach
  // 1663 GFLOP/s from DRAM alone: its 5017 came from the caches, and the
  // caption says how a point can stand there.
  CHECK(svg.find("got part of the traffic it requested from the caches") != std::string::npos);
  CHECK(svg.find("traffic not measured") == std::string::npos);
  // The same traffic with the reference instead: no second x.
  CheckResult same = timed_matmul(0.28);
  same.measurements.push_back({"chart_traffic_reference_bytes", 1114112, "B"});
  CHECK_FALSE(speed_chart(same).traffic_measured());
}

TEST_CASE(
    "a roofline whose traffic was not measured says why and places every kernel at the nominal intensity",
    "[unit][report-html]") {
  CheckResult r = timed_matmul(0.43);
  record_no_traffic("your files did not build for CPU mode's access count", r);
  const SpeedChart c = speed_chart(r);
  CHECK_FALSE(c.traffic_measured());
  CHECK(c.intensity(c.points[0]) == c.intensity(c.points[1]));
  const std::string svg = speed_chart_svg(c, "03_tiling: fast");
  CHECK(svg.find("class=\"nominal\"") != std::string::npos);
  CHECK(circle_x(svg, "point student") == circle_x(svg, "point"));
  CHECK(
      svg.find("<p class=\"note traffic\">traffic not measured: your files did not build for CPU "
               "mode&#39;s access count; every kernel stands at the lab&#39;s nominal intensity, the dashed "
               "line.</p>") != std::string::npos);
  // A grade from before the counts (no note either) says so too.
  CHECK(speed_chart_svg(speed_chart(timed_matmul(0.43)), "x")
            .find("traffic not measured: this grade holds no count of each kernel&#39;s traffic") !=
        std::string::npos);
  // A kernel far from the peak reads its share, never "0%".
  const std::string slow = speed_chart_svg(speed_chart(timed_matmul(400)), "x");
  CHECK(slow.find("your kernel: 5 GFLOP/s (400.000 ms, under 0.1% of the FP32 peak)") != std::string::npos);
  CHECK(speed_chart_svg(speed_chart(timed_matmul(80)), "x").find("27 GFLOP/s (80.000 ms, 0.0") ==
        std::string::npos);
  CHECK(speed_chart_svg(speed_chart(timed_matmul(8)), "x")
            .find("268 GFLOP/s (8.000 ms, 0.4% of the FP32 peak)") != std::string::npos);
  // Only one kernel counted: not a chart of two kinds of x.
  CheckResult half = timed_matmul(0.43);
  CountedTraffic t;
  t.flops = 4194304, t.bytes = 1114112;
  record_traffic({{"student", t}}, half);
  CHECK_FALSE(speed_chart(half).traffic_measured());
}

TEST_CASE("report.html shows a check's words in backticks as code, escaped, an unpaired backtick kept",
          "[unit][report-html]") {
  const LabSpec spec = testbed::tiled_lab();
  const GradedCheck square = testbed::graded_check(spec.checks[0], Verdict::pass);
  const std::string html = report_of(square, 0.43, {"add a `__syncthreads()` after the load"});
  CHECK(html.find("<div class=\"diagnosis\">add a <code>__syncthreads()</code> after the load</div>") !=
        std::string::npos);
  CHECK(html.find('`') == std::string::npos);
  // The other failures below it too: the span's text escaped; a backtick
  // without a partner on its line, and the test's output, as written.
  GradedCheck quoted = square;
  quoted.result.output = "expected `4` got `5`\n";
  const std::string more = report_of(
      quoted, 0.43,
      {"add a `__syncthreads()` after the load", "loop while `a < b`, not `a <= b`", "a stray ` stays"});
  CHECK(more.find("loop while <code>a &lt; b</code>, not <code>a &lt;= b</code>") != std::string::npos);
  CHECK(more.find("a stray ` stays") != std::string::npos);
  CHECK(more.find("| expected `4` got `5`") != std::string::npos);
  CHECK(more.find("<code>4</code>") == std::string::npos);
  CHECK(inline_code_html("`a < b` then `b") == "<code>a &lt; b</code> then `b");
  CHECK(inline_code_html("`a\nb`") == "`a\nb`");  // a span never crosses a line
  CHECK(inline_code_html("an empty `` pair") == "an empty `` pair");
  // The class view's causes and diagnoses, as one of them reads.
  BatchView batch = testbed::class_batch();
  batch.entries[1].grade->labs[0].checks[0].result.failures[1] = "Diagnosis: test `i < n` before the store";
  CHECK(batch_html(batch).find("Diagnosis: test <code>i &lt; n</code> before the store") !=
        std::string::npos);
  // report.txt keeps the backticks.
  GradedLab lab;
  lab.id = "03_tiling", lab.title = spec.title;
  lab.checks = {
      testbed::graded_check(spec.checks[1], Verdict::fail, {"add a `__syncthreads()` after the load"})};
  CHECK(graded_lab_text(Style::for_file(), lab).find("add a `__syncthreads()` after the load") !=
        std::string::npos);
}
