// report.html and the batch's index.html (grader/report_html.h): what a
// student and an instructor look at, built from a grade made up here.
#include <cstdlib>
#include <fstream>
#include <string>

#include "course.h"
#include "cudalab/catch.h"
#include "judged_for_tests.h"
#include "report_html.h"
#include "testbed.h"

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
  lab.results = JudgedForTests::make({sq, timed_matmul(0.43)});
  g.labs.push_back(lab);
  score_submission(g);
  const std::string html = report_html(testbed::doc_of(g));
  REQUIRE(html.find("class=\"point student\"") != std::string::npos);
  if (const char* out = std::getenv("CUDALAB_REPORT_OUT")) {
    std::ofstream f(out);
    f << html;
    REQUIRE(f.good());
  }
}
