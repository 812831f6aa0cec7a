// The class view (grader/class_view.h): per check, who failed it and with
// which diagnosis, each submission's status, and class.csv, on the made-up
// class of testbed::class_batch().
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "class_view.h"
#include "cudalab/catch.h"
#include "export.h"
#include "files.h"
#include "report_html.h"
#include "testbed.h"

using namespace cudalab;

namespace {

const ClassCheck& row(const ClassView& v, const std::string& check) {
  for (const auto& c : v.checks)
    if (c.check == check) return c;
  FAIL("no row for " << check);
  return v.checks.front();
}

}  // namespace

TEST_CASE("a diagnosis is grouped with its numbers and shapes taken out, its words kept",
          "[unit][class-view]") {
  CHECK(normalize_diagnosis("Diagnosis: the last tile reads past the edge: K=9 at M=17.") ==
        "the last tile reads past the edge: K=# at M=#");
  CHECK(normalize_diagnosis("Diagnosis: the last tile reads past the edge: K=5 at M=33.") ==
        normalize_diagnosis("Diagnosis: the last tile reads past the edge: K=9 at M=17"));
  CHECK(normalize_diagnosis("wrong on 17x33, fine on 32x32") == "wrong on #x#, fine on #x#");
  CHECK(normalize_diagnosis("runs at 1.04x, needs 1.30x") == "runs at #x, needs #x");
  CHECK(normalize_diagnosis("2^26 elements, -3 and 1e-3 and .5") == "#^# elements, -# and # and #");
  CHECK(normalize_diagnosis("read of 4 bytes at 0x7f3a12 in   matmul_tiled.cu:88") ==
        "read of # bytes at # in matmul_tiled.cu:#");
  // Digits inside a word are part of its name.
  CHECK(normalize_diagnosis("use float4 loads on sm_90") == "use float4 loads on sm_90");
  CHECK(normalize_diagnosis("lab03's tile") == "lab03's tile");
}

TEST_CASE("the class groups diagnoses by their cause, the words before the first colon or full stop",
          "[unit][class-view]") {
  CHECK(diagnosis_cause("the boundary checks. Right on every shape where M, N and K are multiples of #") ==
        "the boundary checks");
  CHECK(diagnosis_cause("C[#][#] is NaN though A and B hold none: the kernel read past the end of A or B") ==
        "C[#][#] is NaN though A and B hold none");
  CHECK(diagnosis_cause("matmul_tiled runs at #x the speed of the naive kernel; this check needs #x. Is") ==
        "matmul_tiled runs at #x the speed of the naive kernel");
  // A colon inside parentheses explains; it does not end the cause.
  CHECK(diagnosis_cause(
            "(nearly) every element of C is wrong (your launch: grid (#, #, #)): check the index") ==
        "(nearly) every element of C is wrong (your launch: grid (#, #, #))");
  // Too short to be a cause on its own: the cut waits for a later stop.
  CHECK(diagnosis_cause("a race: two runs differ. Look at the barriers") == "a race: two runs differ");
  CHECK(diagnosis_cause("compile error") == "compile error");
  CHECK(diagnosis_cause("wrong at #.# and up") == "wrong at #.# and up");
}

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
  // bob's and carol's, on different shapes, are one.
  CHECK(square.diagnoses[0].text == "the last tile reads past the edge");
  CHECK(square.diagnoses[0].example == "the last tile reads past the edge: K=# at M=#");
  CHECK(square.diagnoses[0].count == 2);
  CHECK(square.diagnoses[0].who == std::vector<std::string>{"bob", "carol"});  // who to ask
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
  CHECK(lab.diagnoses[0].text == "compile error");
  CHECK(lab.diagnoses[1].text == "not graded");
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
      "lab,check,kind,of,passed,failed,not_run,diagnosis_1,count_1,share_1,who_1,diagnosis_2,count_2,share_2,"
      "who_2,diagnosis_3,count_3,share_3,who_3");
  CHECK(lab == "03_tiling,(not graded),lab,6,0,2,0,compile error,1,0.167,erin,not graded,1,0.167,frank,,,,");
  CHECK(square ==
        "03_tiling,square,correctness,4,1,3,0,the last tile reads past the edge,2,0.500,bob; carol,"
        "a __syncthreads() that some threads never reach,1,0.250,dave,,,,");
  CHECK(fast == "03_tiling,fast,speed,4,1,0,3,,,,,,,,,,,,");
  CHECK_FALSE(std::getline(lines, extra));
  // Every row as many cells as the header.
  for (const auto& l : {header, lab, square, fast}) CHECK(split_csv_line(l).size() == 19);
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
  CHECK(html.find("50% of the class (2 of 4): <b>the last tile reads past the edge</b><div class=\"who\"><a "
                  "href=\"bob/report.html\">bob</a>, <a "
                  "href=\"carol/report.html\">carol</a></div><details><summary>as one "
                  "of them reads</summary>the last tile reads past the edge: K=# at M=#</details>") !=
        std::string::npos);
  // A diagnosis that is all cause has nothing to fold.
  CHECK(html.find("25% of the class (1 of 4): <b>a __syncthreads() that some threads never reach</b><div "
                  "class=\"who\"><a href=\"dave/report.html\">dave</a></div></div>") != std::string::npos);
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
  CHECK(ss.str().find("03_tiling,square,correctness,4,1,3,0,the last tile reads past the edge,2,0.500") !=
        std::string::npos);
  fs::remove_all(dir);
}
