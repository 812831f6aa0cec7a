// The class view (grader/views/class_view.h): per check, who failed it and with
// which diagnosis, each submission's status, and class.csv, on the made-up
// class of testbed::class_batch().
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "core/files.h"
#include "cudalab/catch.h"
#include "testbed.h"
#include "views/class_view.h"
#include "views/csv.h"
#include "views/export.h"
#include "views/report_html.h"
#include "views/text.h"

using namespace cudalab;

namespace {

const ClassCheck& row(const ClassView& v, const std::string& check) {
  for (const auto& c : v.checks)
    if (c.check == check) return c;
  FAIL("no row for " << check);
  return v.checks.front();
}

}  // namespace

TEST_CASE("a failing check's diagnosis is its Diagnosis line wherever it stands, else its first message",
          "[unit][class-view]") {
  const LabSpec spec = testbed::tiled_lab();
  CHECK(check_diagnosis(testbed::graded_check(spec.checks[0], Verdict::fail,
                                              {"C(1, 2) is 0", "Diagnosis: a race between threads."})) ==
        "Diagnosis: a race between threads.");
  CHECK(check_diagnosis(testbed::graded_check(spec.checks[0], Verdict::fail,
                                              {"C(1, 2) is 0\nC(3, 4) is 1"})) == "C(1, 2) is 0");
  CHECK(check_diagnosis(testbed::graded_check(spec.checks[0], Verdict::pass, {})).empty());
}

TEST_CASE("the class view counts each check's failures and its three most common diagnoses",
          "[unit][class-view]") {
  const ClassView v = class_view(testbed::class_batch());
  CHECK(v.submissions == 6);
  REQUIRE(v.checks.size() == 3);
  CHECK(v.checks[0].check == "(not graded)");  // the lab's own row first, then its checks in order
  CHECK(v.checks[1].check == "square");
  CHECK(v.checks[2].check == "fast");

  const ClassCheck& square = row(v, "square");
  CHECK(square.of == 4);  // erin's lab did not compile, frank has no grade
  CHECK(square.passed == 1);
  CHECK(square.failed == 3);
  CHECK(square.not_run == 0);
  REQUIRE(square.diagnoses.size() == 2);
  // bob's and carol's, on different shapes and in different words, are one cause.
  CHECK(square.diagnoses[0].cause == "boundary_checks");
  CHECK(square.diagnoses[0].text == "the boundary checks");
  CHECK_THAT(square.diagnoses[0].example,
             Catch::StartsWith("Diagnosis: the boundary checks. Right on every"));
  CHECK(square.diagnoses[0].count == 2);
  CHECK(square.diagnoses[0].who == std::vector<std::string>{"bob", "carol"});  // who to ask
  CHECK(square.diagnoses[1].cause == "barrier_skipped");
  CHECK(square.diagnoses[1].text == "a __syncthreads() that some threads never reach");
  CHECK(square.diagnoses[1].count == 1);

  const ClassCheck& fast = row(v, "fast");
  CHECK(fast.of == 4);
  CHECK(fast.passed == 1);
  CHECK(fast.failed == 0);
  CHECK(fast.not_run == 3);
  CHECK(fast.diagnoses.empty());

  const ClassCheck& lab = row(v, "(not graded)");
  CHECK(lab.of == 6);
  CHECK(lab.failed == 2);
  REQUIRE(lab.diagnoses.size() == 2);
  CHECK(lab.diagnoses[0].cause == "build_failed");
  CHECK(lab.diagnoses[0].text == "compile error");
  CHECK(lab.diagnoses[0].example == "matmul_tiled.cu(12): error: identifier \"tile\" is undefined");
  CHECK(lab.diagnoses[1].text == "not graded");
}

TEST_CASE("Failures are grouped by the cause their diagnosis named, never by its words",
          "[unit][class-view]") {
  // Two bugs whose leads begin alike ("the launch fails at ...") are two
  // causes; one without a cause is grouped by what became of it.
  BatchView b = testbed::class_batch();
  const LabSpec spec = testbed::tiled_lab();
  const auto launch = [&](Cause cause, const char* why) {
    GradeDocument d = *b.entries[0].grade;
    d.labs[0].checks[0] =
        testbed::graded_check(spec.checks[0], Verdict::fail,
                              {std::string("Diagnosis: the launch fails at M=16 N=16 K=16: ") + why}, cause);
    return d;
  };
  b.entries.push_back({"gina", launch(Cause::empty_grid, "a grid dimension of 0"), ""});
  b.entries.push_back({"hugo", launch(Cause::block_too_large, "a block of more than 1024 threads"), ""});
  GradeDocument none = *b.entries[0].grade;
  none.labs[0].checks[0] = testbed::graded_check(spec.checks[0], Verdict::timeout, {"did not finish"});
  b.entries.push_back({"ivan", none, ""});
  const ClassView v = class_view(b);
  const ClassCheck& square = row(v, "square");
  std::vector<std::string> causes;
  for (const auto& d : square.diagnoses)
    causes.push_back(d.cause + ":" + fmt::format("{}", fmt::join(d.who, "+")));
  CHECK(causes == std::vector<std::string>{"boundary_checks:bob+carol", "barrier_skipped:dave",
                                           "empty_grid:gina", "block_too_large:hugo", "timeout:ivan"});
  CHECK(square.diagnoses[2].text == "a grid dimension of 0");
  CHECK(square.diagnoses[4].text == "timeout, no cause named");
}

TEST_CASE("class.csv has a row per check with the three diagnoses and their shares of the class",
          "[unit][class-view]") {
  const std::string csv = class_csv(class_view(testbed::class_batch()));
  std::istringstream lines(csv);
  std::string header, lab, square, fast, extra;
  std::getline(lines, header), std::getline(lines, lab), std::getline(lines, square),
      std::getline(lines, fast);
  CHECK(
      header ==
      "lab,check,kind,of,passed,failed,not_run,cause_1,diagnosis_1,count_1,share_1,who_1,cause_2,diagnosis_2,"
      "count_2,share_2,who_2,cause_3,diagnosis_3,count_3,share_3,who_3");
  CHECK(lab ==
        "03_tiling,(not graded),lab,6,0,2,0,build_failed,compile error,1,0.167,erin,not graded,not "
        "graded,1,0.167,frank,,,,,");
  CHECK(square ==
        "03_tiling,square,correctness,4,1,3,0,boundary_checks,the boundary checks,2,0.500,bob; carol,"
        "barrier_skipped,a __syncthreads() that some threads never reach,1,0.250,dave,,,,,");
  CHECK(fast == "03_tiling,fast,speed,4,1,0,3,,,,,,,,,,,,,,,");
  CHECK_FALSE(std::getline(lines, extra));
  // Every row as many cells as the header.
  for (const auto& l : {header, lab, square, fast}) CHECK(split_csv_line(l).size() == 22);
}

TEST_CASE("each submission's status: graded, compile error, not graded, error, late", "[unit][class-view]") {
  const BatchView b = testbed::class_batch();
  CHECK(submission_status(b.entries[0]).text() == "graded");
  CHECK(submission_status(b.entries[4]).word == "compile error");
  CHECK(submission_status(b.entries[4]).text() == "compile error (03_tiling), late (2 days)");
  CHECK(submission_status(b.entries[5]).text() == "not graded (the export lists it without files)");
  BatchEntry broken{"gina", std::nullopt, "unreadable grade.json"};
  CHECK(submission_status(broken).word == "error");
  GradeDocument unread;
  unread.error = "not a zip archive\nsecond line";
  CHECK(submission_status(BatchEntry{"hal", unread, ""}).text() == "error (not a zip archive)");
}

TEST_CASE("index.html titles its histograms' axes and shows the class view and each status",
          "[unit][class-view]") {
  const std::string html = batch_html(testbed::class_batch());
  CHECK(html.find(">points (of 30)</text>") != std::string::npos);
  CHECK(html.find(">number of submissions</text>") != std::string::npos);
  CHECK(html.find("Where the class lost points") != std::string::npos);
  CHECK(html.find("50% of the class (2 of 4): <b>the boundary checks</b> <code "
                  "class=\"cause\">boundary_checks</code><div class=\"who\"><a "
                  "href=\"bob/report.html\">bob</a>, <a "
                  "href=\"carol/report.html\">carol</a></div><details><summary>as one "
                  "of them reads</summary>Diagnosis: the boundary checks. Right on every shape") !=
        std::string::npos);
  CHECK(html.find("25% of the class (1 of 4): <b>a __syncthreads() that some threads never reach</b> <code "
                  "class=\"cause\">barrier_skipped</code><div "
                  "class=\"who\"><a href=\"dave/report.html\">dave</a></div>") != std::string::npos);
  CHECK(html.find("3 of 4 (75%)") != std::string::npos);
  CHECK(html.find(">compile error (03_tiling), late (2 days)</td>") != std::string::npos);
  CHECK(html.find("<th>status</th>") != std::string::npos);
  // The class table comes before the list of submissions.
  CHECK(html.find("Where the class lost points") < html.find("<a href=\"alice/report.html\">"));
}

TEST_CASE("a batch's views include class.csv, written from the batch alone", "[unit][class-view]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "cudalab-class-view-test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const BatchView b = testbed::class_batch();
  write_batch_views(b, dir);
  std::ifstream in(dir / "class.csv");
  std::stringstream ss;
  ss << in.rdbuf();
  CHECK(ss.str() == class_csv(class_view(b)));
  CHECK(fs::exists(dir / "index.html"));
  CHECK(fs::exists(dir / "grades.csv"));
  fs::remove_all(dir);
}

TEST_CASE("cudalab export writes a batch's class.csv again from its grade.json files", "[unit][class-view]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "cudalab-class-view-export";
  fs::remove_all(dir);
  BatchView graded;  // the class without frank, who has no grade.json to read back
  for (const auto& e : testbed::class_batch().entries)
    if (e.grade) {
      fs::create_directories(dir / e.id);
      save_grade_document(*e.grade, dir / e.id / "grade.json");
      graded.entries.push_back(e);
    }
  graded.lab_ids = {"03_tiling"};
  graded.lab_max = {30};
  REQUIRE(export_views({dir}) == 0);
  std::ifstream in(dir / "class.csv");
  std::stringstream ss;
  ss << in.rdbuf();
  CHECK(ss.str() == class_csv(class_view(graded)));
  // The causes came back from grade.json, not from the diagnoses' words.
  CHECK(ss.str().find("03_tiling,square,correctness,4,1,3,0,boundary_checks,the boundary checks,2,0.500") !=
        std::string::npos);
  fs::remove_all(dir);
}
