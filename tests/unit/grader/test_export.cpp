// The exports against the fields their formats document.
#include <pugixml.hpp>
#include <sstream>

#include "core/course.h"
#include "core/files.h"
#include "cudalab/catch.h"
#include "judged_for_tests.h"
#include "platforms/intake.h"
#include "testbed.h"
#include "views/csv.h"
#include "views/export.h"
#include "views/report.h"
#include "views/text.h"

using namespace cudalab;

namespace {

SubmissionGrade graded(const LabSpec& spec, bool square_passes, double ratio) {
  SubmissionGrade g;
  g.id = "alice, \"the\" student";
  g.gpu = true;
  g.gpu_line = "NVIDIA H100";
  g.seconds = 12.4;
  LabGrade lab;
  lab.spec = &spec;
  lab.weight = 2;
  lab.status = LabStatus::graded;
  CheckResult sq;
  sq.id = "square", sq.name = spec.checks[0].name, sq.kind = CheckKind::correctness;
  sq.verdict = square_passes ? Verdict::pass : Verdict::fail;
  if (!square_passes) sq.failures.push_back("C[1][2] = 3 (expected 4)");
  CheckResult fast;
  fast.id = "fast", fast.name = spec.checks[1].name, fast.kind = CheckKind::speed;
  fast.verdict = ratio >= 1.3 ? Verdict::pass : Verdict::fail;
  fast.measurements.push_back({"ratio", ratio, "x"});
  lab.results = JudgedForTests::make({sq, fast});
  g.labs.push_back(lab);
  g.ignored.push_back("notes.txt: not a student file of any lab");
  score_submission(g);
  return g;
}

}  // namespace

TEST_CASE("Scores are weighted per lab and speed counts only after correctness", "[export][grader]") {
  const LabSpec spec = testbed::tiled_lab();
  const auto good = graded(spec, true, 1.15);
  CHECK(good.labs[0].points == Approx(25));  // 20 + half of 10
  CHECK(good.score == Approx(50));           // weight 2
  CHECK(good.max_score == Approx(60));
  CHECK(graded(spec, false, 2.0).score == 0);
}

TEST_CASE("Gradescope results carry score, execution_time, output and tests with their fields",
          "[export][grader]") {
  const LabSpec spec = testbed::tiled_lab();
  const auto j = gradescope_json(testbed::doc_of(graded(spec, true, 1.3)));
  CHECK(j["score"] == 60);
  CHECK(j["execution_time"] == 12);
  CHECK(j["output"].get<std::string>().find("notes.txt") != std::string::npos);
  REQUIRE(j["tests"].size() == 2);
  const auto& t = j["tests"][1];
  CHECK(t["name"] == "03_tiling: tiled matmul is faster than naive");
  CHECK(t["score"] == 20);
  CHECK(t["max_score"] == 20);
  CHECK(t["status"] == "passed");
  CHECK(t["visibility"] == "after_due_date");
  CHECK(t["output"].get<std::string>().find("ratio 1.30x (needs 1.30x)") != std::string::npos);
  CHECK(j["tests"][0]["visibility"] == "visible");
}

TEST_CASE("PrairieLearn results give a score between 0 and 1 and points per test", "[export][grader]") {
  const LabSpec spec = testbed::tiled_lab();
  const auto j = prairielearn_json(testbed::doc_of(graded(spec, false, 2.0)));
  CHECK(j["gradable"] == true);
  CHECK(j["score"] == 0.0);
  REQUIRE(j["tests"].size() == 2);
  CHECK(j["tests"][0]["points"] == 0);
  CHECK(j["tests"][0]["max_points"] == 40);
  CHECK(j["tests"][0]["message"] == "C[1][2] = 3 (expected 4)");
  CHECK(prairielearn_json(testbed::doc_of(graded(spec, true, 2.0)))["score"] == 1.0);
}

namespace {

// Lab 03 failed in every way a check can end, a second copy of it not
// graded: the views of a grade with all of them.
GradeDocument every_verdict() {
  const LabSpec spec = testbed::tiled_lab();
  GradeDocument doc = testbed::doc_of(graded(spec, false, 1.15));
  doc.labs[0].checks[0].result.seconds = 1.25;
  doc.labs[0].checks[1].result.seconds = 2.5;
  GradedLab crashed = doc.labs[0];
  crashed.id = "03_tiling_again";
  crashed.checks[0].result.verdict = Verdict::crash;
  crashed.checks[0].result.failures = {"the test process was killed by SIGSEGV while running this check"};
  crashed.checks[0].result.output = "Segmentation fault";
  crashed.checks[1].result.verdict = Verdict::not_run;
  crashed.checks[1].result.failures = {
      "not timed: 'square' failed (a speed check counts only for correct code)"};
  crashed.checks[1].result.measurements.clear();
  GradedLab missing = doc.labs[0];
  missing.id = "05_reduction";
  missing.status = LabStatus::missing;
  missing.message = "missing reduction.cu (expected at labs/05_reduction/reduction.cu or at the top)";
  missing.checks.clear();
  doc.labs.push_back(crashed);
  doc.labs.push_back(missing);
  return doc;
}

}  // namespace

TEST_CASE("JUnit XML counts tests, failures, errors and skipped per suite and in all, with times",
          "[export][grader]") {
  const std::string xml = junit_xml(every_verdict());
  pugi::xml_document doc;
  REQUIRE(doc.load_string(xml.c_str()));
  const auto suites = doc.child("testsuites");
  int tests = 0, failures = 0, errors = 0, skipped = 0;
  double time = 0;
  for (const auto& suite : suites.children("testsuite")) {
    CAPTURE(suite.attribute("name").value());
    int t = 0, f = 0, e = 0, s = 0;
    double seconds = 0;
    for (const auto& tc : suite.children("testcase")) {
      ++t;
      seconds += tc.attribute("time").as_double();
      const int outcomes = !!tc.child("failure") + !!tc.child("error") + !!tc.child("skipped");
      CHECK(outcomes <= 1);
      f += !!tc.child("failure"), e += !!tc.child("error"), s += !!tc.child("skipped");
    }
    for (const char* a : {"tests", "failures", "errors", "skipped", "time"}) CHECK(suite.attribute(a));
    CHECK(suite.attribute("tests").as_int() == t);
    CHECK(suite.attribute("failures").as_int() == f);
    CHECK(suite.attribute("errors").as_int() == e);
    CHECK(suite.attribute("skipped").as_int() == s);
    CHECK(suite.attribute("time").as_double() == Approx(seconds));
    tests += t, failures += f, errors += e, skipped += s, time += seconds;
  }
  for (const char* a : {"tests", "failures", "errors", "skipped", "time"}) CHECK(suites.attribute(a));
  CHECK(suites.attribute("tests").as_int() == tests);
  CHECK(suites.attribute("failures").as_int() == failures);
  CHECK(suites.attribute("errors").as_int() == errors);
  CHECK(suites.attribute("skipped").as_int() == skipped);
  CHECK(suites.attribute("time").as_double() == Approx(time));
  // 03_tiling: two failures; its copy: a crash (an error, not a failure)
  // and a speed check not run; 05_reduction: missing, one error.
  CHECK(tests == 5);
  CHECK(failures == 2);
  CHECK(errors == 2);
  CHECK(skipped == 1);
  CHECK(time == Approx(2 * (1.25 + 2.5)));
  const auto again = suites.find_child_by_attribute("testsuite", "name", "03_tiling_again");
  const auto crash = again.child("testcase").child("error");
  REQUIRE(crash);
  CHECK(std::string(crash.attribute("type").value()) == "crash");
  CHECK(std::string(crash.attribute("message").value()).find("SIGSEGV") != std::string::npos);
  CHECK(std::string(crash.text().get()).find("Segmentation fault") != std::string::npos);
  CHECK(again.child("testcase").next_sibling("testcase").child("skipped"));
  const auto missing = suites.find_child_by_attribute("testsuite", "name", "05_reduction").child("testcase");
  CHECK(std::string(missing.child("error").attribute("type").value()) == "missing");
  CHECK(std::string(missing.child("error").attribute("message").value()).rfind("missing reduction.cu", 0) ==
        0);
}

TEST_CASE("JUnit XML has a suite per lab and a failure per failed check", "[export][grader]") {
  const LabSpec spec = testbed::tiled_lab();
  const std::string xml = junit_xml(testbed::doc_of(graded(spec, false, 2.0)));
  pugi::xml_document doc;
  REQUIRE(doc.load_string(xml.c_str()));
  const auto suite = doc.child("testsuites").child("testsuite");
  CHECK(std::string(suite.attribute("name").value()) == "03_tiling");
  CHECK(suite.attribute("tests").as_int() == 2);
  CHECK(suite.attribute("failures").as_int() == 1);
  const auto first = suite.child("testcase");
  CHECK(std::string(first.attribute("name").value()) == "tiled matmul is correct on squares");
  CHECK(first.child("failure"));
  CHECK_FALSE(first.next_sibling("testcase").child("failure"));
}

TEST_CASE("The CSV row quotes awkward submission names and has a column per lab", "[export][grader]") {
  const LabSpec spec = testbed::tiled_lab();
  CHECK(csv_header(testbed::doc_of(graded(spec, true, 1.3))) ==
        "submission,score,max_score,03_tiling,status\n");
  CHECK(csv_row(testbed::doc_of(graded(spec, true, 1.3))) ==
        "\"alice, \"\"the\"\" student\",60.00,60,60.00,graded\n");
}

TEST_CASE("The course file names its labs and weights, and rejects mistakes with file and line",
          "[export][grader]") {
  const std::vector<std::string> known = {"01_coalescing", "03_tiling"};
  const auto c = parse_course(
      "[course]\ntitle = \"t\"\nlabs = [\"03_tiling\"]\n[weights]\n03_tiling = 2\n[grading]\nseed = 7\n",
      "course.toml", known);
  CHECK(c.labs == std::vector<std::string>{"03_tiling"});
  CHECK(c.weight("03_tiling") == 2);
  CHECK(c.weight("01_coalescing") == 1);
  CHECK(c.seed == "7");
  CHECK_THROWS_WITH(parse_course("[course]\nlabs = [\"05_nope\"]\n", "course.toml", known),
                    Catch::Contains("course.toml:2") && Catch::Contains("no lab '05_nope'"));
  CHECK_THROWS_WITH(
      parse_course("[course]\nlabs = [\"03_tiling\"]\n[weights]\n01_coalescing = 1\n", "course.toml", known),
      Catch::Contains("not one of the course's labs"));
  CHECK_THROWS_WITH(
      parse_course("[course]\nlabs = [\"03_tiling\"]\n[grading]\nseed = -1\n", "course.toml", known),
      Catch::Contains("seed must be"));
}

TEST_CASE("A CSV line splits back into the cells csv_field wrote", "[export][grader]") {
  const std::string row = csv_field("alice, \"the\" student") + ",60.00," + csv_field("a,b") + ",x";
  CHECK(split_csv_line(row) == std::vector<std::string>{"alice, \"the\" student", "60.00", "a,b", "x"});
  CHECK(split_csv_line("") == std::vector<std::string>{""});
}

TEST_CASE("A text cell a spreadsheet would run as a formula is written with a quote mark in front",
          "[export][csv][grader]") {
  // OWASP's CSV-injection list: =, +, -, @, tab and carriage return first.
  CHECK(csv_field("=HYPERLINK(\"http://x\",\"y\")") == "\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\"");
  CHECK(csv_field("+cmd@evil.edu") == "\"'+cmd@evil.edu\"");
  CHECK(csv_field("-2+3") == "\"'-2+3\"");
  CHECK(csv_field("@SUM(A1)") == "\"'@SUM(A1)\"");
  CHECK(csv_field("\t=1") == "\"'\t=1\"");
  CHECK(csv_field("\r=1") == "\"'\r=1\"");
  // Text from outside is text even where it looks like a number.
  CHECK(csv_field("-1.5") == "\"'-1.5\"");
  // A formula character later in the cell runs nothing.
  CHECK(csv_field("Ada =1") == "Ada =1");
  CHECK(csv_field("a@u.edu") == "a@u.edu");
  CHECK(csv_field("") == "");
}

TEST_CASE("A number the grader formatted is written as it is, anything else given as a number as text",
          "[export][csv][grader]") {
  for (const char* n : {"-1.5", "0.00", "60", "-0.25", "1e+06", "2.5E-3", "-7"})
    CHECK(csv_field(n, CsvKind::number) == n);
  CHECK(csv_field("", CsvKind::number) == "");
  // Not a plain decimal number: neutralised like any text.
  CHECK(csv_field("-1+2", CsvKind::number) == "\"'-1+2\"");
  CHECK(csv_field("-inf", CsvKind::number) == "\"'-inf\"");
  CHECK(csv_field("-", CsvKind::number) == "\"'-\"");
  CHECK(csv_field("-1.", CsvKind::number) == "\"'-1.\"");
  CHECK(csv_field("=1", CsvKind::number) == "\"'=1\"");
  CHECK(csv_line({"=x", csv_number("-1.5"), "a,b"}) == "\"'=x\",-1.5,\"a,b\"\n");
}

TEST_CASE("Hostile and numeric cells read back through both CSV readers as written, text with its quote mark",
          "[export][csv][grader]") {
  const std::vector<CsvCell> cells = {"=HYPERLINK(\"http://x\",\"a, b\")",
                                      "+cmd@evil.edu",
                                      "@SUM(A1)",
                                      "\t-tab",
                                      "say \"hi\"",
                                      "Ada Lovelace",
                                      csv_number("-1.5"),
                                      csv_number("40.00"),
                                      csv_number("-1+2")};
  const std::vector<std::string> expected = {"'=HYPERLINK(\"http://x\",\"a, b\")",
                                             "'+cmd@evil.edu",
                                             "'@SUM(A1)",
                                             "'\t-tab",
                                             "say \"hi\"",
                                             "Ada Lovelace",
                                             "-1.5",
                                             "40.00",
                                             "'-1+2"};
  std::string line = csv_line(cells);
  const auto rows = parse_csv(line + line);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0] == expected);
  CHECK(rows[1] == expected);
  line.pop_back();  // split_csv_line takes one line without its newline
  CHECK(split_csv_line(line) == expected);
  // A carriage return first: parse_csv (which reads line breaks in quotes) keeps it.
  CHECK(parse_csv(csv_line({"\r=1", csv_number("-2")})) ==
        std::vector<std::vector<std::string>>{{"'\r=1", "-2"}});
}

TEST_CASE("grade.csv writes a hostile submission name and submitter as text and negative points as numbers",
          "[export][csv][grader]") {
  const LabSpec spec = testbed::tiled_lab();
  GradeDocument doc = testbed::doc_of(graded(spec, true, 1.3));
  doc.id = "=cmd|' /C calc'!A0";
  doc.score = -1.5;  // no grade is negative today; a number must stay one if it ever is
  doc.submission = SubmissionRecord{"gradescope",
                                    "1001",
                                    "2026-12-05T23:00:00-05:00",
                                    {{"=HYPERLINK(\"http://x\")", "-100", "+a@u.edu", "@ada"}}};
  const auto rows = parse_csv(csv_header(doc) + csv_row(doc));
  REQUIRE(rows.size() == 2);
  CHECK(rows[1][0] == "'=cmd|' /C calc'!A0");
  CHECK(rows[1][1] == "-1.50");
  CHECK(rows[1][5] == "'=HYPERLINK(\"http://x\") (-100, @ada, +a@u.edu)");
  for (const auto& row : rows)
    for (const auto& cell : row)
      CHECK((cell.empty() || cell == "-1.50" || std::string("=+-@\t\r").find(cell[0]) == std::string::npos));
}

TEST_CASE("A check gated by a failed prerequisite is failed in the exports, the reason first",
          "[export][grader]") {
  const LabSpec spec = testbed::tiled_lab();
  // The speed check ran and passed, but 'square' failed: it counts for nothing.
  const auto g = graded(spec, false, 2.0);
  CHECK(g.labs[0].scores[1].gated);
  CHECK(g.labs[0].scores[1].points == 0);
  const auto j = gradescope_json(testbed::doc_of(g));
  const auto& t = j["tests"][1];
  CHECK(t["status"] == "failed");
  CHECK(t["score"] == 0);
  const std::string out = t["output"];
  CHECK(out.substr(0, out.find('\n')) ==
        "pass (0.00/10 points): not counted: it counts only when 'square' passes");
  // As the grader reports it: not timed at all.
  SubmissionGrade n = graded(spec, false, 2.0);
  CheckResult& fast = JudgedForTests::words(n.labs[0].results[1]);
  fast.verdict = Verdict::not_run;
  fast.measurements.clear();
  fast.failures = {"not timed: 'square' failed (a speed check counts only for correct code)"};
  JudgedForTests::retime(n.labs[0].results[1]);
  score_submission(n);
  const auto jn = gradescope_json(testbed::doc_of(n));
  CHECK(jn["tests"][1]["status"] == "failed");
  const std::string nout = jn["tests"][1]["output"];
  CHECK(nout.rfind("not_run (0.00/10 points): not timed: 'square' failed", 0) == 0);
  CHECK(nout.find("not timed", 30) == std::string::npos);  // said once
  // A check that passes and counts is still passed.
  CHECK(gradescope_json(testbed::doc_of(graded(spec, true, 1.3)))["tests"][1]["status"] == "passed");
}

TEST_CASE("The exports say how the submission was graded: GPU, CPU mode, provisional", "[export][grader]") {
  const LabSpec spec = testbed::tiled_lab();
  SubmissionGrade g = graded(spec, true, 1.3);
  CHECK(gradescope_json(testbed::doc_of(g))["extra_data"]["cudalab"]["mode"] == "gpu");
  g.gpu = false, g.cpu_mode = true, g.provisional = true, g.gpu_line = "no NVIDIA driver is installed";
  const auto j = gradescope_json(testbed::doc_of(g));
  CHECK(j["extra_data"]["cudalab"]["mode"] == "cpu");
  CHECK(j["extra_data"]["cudalab"]["provisional"] == true);
  const std::string first =
      submission_output(testbed::doc_of(g)).substr(0, submission_output(testbed::doc_of(g)).find('\n'));
  CHECK(first.find("(CPU mode, no GPU: no NVIDIA driver is installed") != std::string::npos);
  CHECK(first.find("provisional") != std::string::npos);
  g.provisional = false;  // the course chose CPU mode: a whole grade
  CHECK(submission_output(testbed::doc_of(g)).find("provisional") == std::string::npos);
  g.cpu_mode = false;
  CHECK(gradescope_json(testbed::doc_of(g))["extra_data"]["cudalab"]["mode"] == "none");
}

TEST_CASE("A course file without a labs list grades every lab there, in folder order", "[export][grader]") {
  const std::vector<std::string> known = {"01_coalescing", "03_tiling", "05_reduction"};
  const auto c =
      parse_course("[course]\ntitle = \"t\"\n[weights]\n05_reduction = 0.5\n", "course.toml", known);
  CHECK(c.labs == known);
  CHECK(c.weight("05_reduction") == 0.5);
  CHECK(c.weight("01_coalescing") == 1);
  CHECK_THROWS_WITH(parse_course("[course]\nlabs = []\n", "course.toml", known),
                    Catch::Contains("course.toml:2") && Catch::Contains("or be left out"));
  CHECK_THROWS_WITH(parse_course("[course]\ntitle = \"t\"\n", "course.toml", {}),
                    Catch::Contains("there are no labs"));
}

TEST_CASE("Gradescope is told to show the text as written, and a message with <, > and & stays literal",
          "[export][grader]") {
  const LabSpec spec = testbed::tiled_lab();
  GradeDocument doc = testbed::doc_of(graded(spec, false, 2.0));
  const std::string message = "put it at <lab>/<file> & build again";
  doc.labs[0].checks[0].result.failures = {message};
  doc.ignored.push_back("x.cu: see <lab>/<file> & more");
  const auto j = gradescope_json(doc);
  // "text": "No HTML, Markdown, or ANSI will be rendered" (Gradescope's
  // specification); the top level's default, "simple_format", renders HTML.
  CHECK(j["output_format"] == "text");
  CHECK(j["test_output_format"] == "text");
  CHECK(j["test_name_format"] == "text");
  CHECK(j["output"].get<std::string>().find("see <lab>/<file> & more") != std::string::npos);
  for (const auto& t : j["tests"]) {
    CHECK(t["output_format"] == "text");
    CHECK(t["name_format"] == "text");
  }
  CHECK(j["tests"][0]["output"].get<std::string>().find(message) != std::string::npos);
  // The JSON holds the characters themselves, not entities.
  CHECK(j.dump().find("&lt;") == std::string::npos);
  CHECK(j.dump().find("&amp;") == std::string::npos);
}

TEST_CASE("PrairieLearn gets the text as written: its page escapes message and output itself",
          "[export][grader]") {
  const LabSpec spec = testbed::tiled_lab();
  GradeDocument doc = testbed::doc_of(graded(spec, false, 2.0));
  doc.labs[0].checks[0].result.failures = {"C[1][2] = 3 (expected 4)\n  Diagnosis: a <bad> & wrong index."};
  const auto j = prairielearn_json(doc);
  // The lead, as the console and report.txt show it first.
  CHECK(j["tests"][0]["message"] == "Diagnosis: a <bad> & wrong index.");
  CHECK(j["tests"][0]["output"].get<std::string>().find("a <bad> & wrong index.") != std::string::npos);
  CHECK(j.dump().find("&lt;") == std::string::npos);
}

TEST_CASE("report.txt shows every check with its verdict, points and name, a failed check's lead first",
          "[export][grader]") {
  const LabSpec spec = testbed::tiled_lab();
  GradeDocument doc = testbed::doc_of(graded(spec, true, 1.15));
  CheckResult& fast = doc.labs[0].checks[1].result;
  fast.verdict = Verdict::fail;
  fast.failures = {
      "matmul_tiled runs at 1.15x the speed of the naive kernel; this check needs 1.30x. Look at how each "
      "thread block reuses the tiles it loads: a tile that is loaded once and read by every thread of the "
      "block "
      "is where the speed comes from.\n  Diagnosis: shared-memory bank conflicts: the shared load at "
      "matmul_tiled.cu:59 averages 31.0 transactions a request.",
      "the second cause we name"};
  fast.notes = {"timed on NVIDIA H100 at 1980 MHz"};
  doc.notes.push_back("two copies of matmul_tiled.cu: the one in labs/03_tiling was graded");
  const std::string text = report_text(doc);
  CAPTURE(text);
  // The total, then the lab as the console shows it: one formatter for both.
  CHECK(text.rfind("cudalab: 50.00 / 60 points (GPU: NVIDIA H100)\n", 0) == 0);
  CHECK(text.find(graded_lab_text(Style::for_file(), doc.labs[0])) != std::string::npos);
  CHECK(text.find("PASS     square") != std::string::npos);
  CHECK(text.find("20.00/20") != std::string::npos);
  CHECK(text.find("tiled matmul is correct on squares") != std::string::npos);
  const auto heading = text.find("FAIL     fast");
  REQUIRE(heading != std::string::npos);
  CHECK(text.find("5.00/10     tiled matmul is faster than naive", heading) != std::string::npos);
  // The line under the heading is the lead, the ratio it explains after it.
  const auto next = text.find('\n', heading) + 1;
  const std::string lead = "           Diagnosis: shared-memory bank conflicts";
  CHECK(text.compare(next, lead.size(), lead) == 0);
  const auto ratio = text.find("matmul_tiled runs at 1.15x");
  CHECK(ratio > next);
  CHECK(text.find("Diagnosis:", text.find("Diagnosis:") + 1) == std::string::npos);  // said once
  CHECK(text.find("ratio 1.15x (needs 1.30x)") != std::string::npos);
  CHECK(text.find("the second cause we name") != std::string::npos);
  CHECK(text.find("timed on NVIDIA H100 at 1980 MHz") != std::string::npos);
  CHECK(text.find("points: ratio 1.15: full credit from 1.30") != std::string::npos);
  CHECK(text.find("03_tiling: 25.00 / 30 points") != std::string::npos);
  CHECK(text.find("notes.txt: not a student file of any lab") != std::string::npos);
  CHECK(text.find("two copies of matmul_tiled.cu") != std::string::npos);
  // Plain text, readable at 100 columns.
  CHECK(text.find('\x1b') == std::string::npos);
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    CAPTURE(line);
    CHECK(line.size() <= 100);
  }
}

TEST_CASE("report.txt says why a lab was not graded and shows a crashed check's output", "[export][grader]") {
  const std::string text = report_text(every_verdict());
  CAPTURE(text);
  CHECK(text.find("CRASH    square") != std::string::npos);
  CHECK(text.find("killed by SIGSEGV") != std::string::npos);
  CHECK(text.find("| Segmentation fault") != std::string::npos);
  CHECK(text.find("NOT RUN  fast") != std::string::npos);
  CHECK(text.find("not timed: 'square' failed") != std::string::npos);
  CHECK(text.find("== 05_reduction") != std::string::npos);
  CHECK(text.find("  MISSING\n    missing reduction.cu") != std::string::npos);
}

TEST_CASE("Long messages wrap at spaces under their own indent; a test's output is never wrapped",
          "[export][grader]") {
  CHECK(wrap_lines("  one two three four", 12) == "  one two\n  three four");
  CHECK(wrap_lines("short", 12) == "short");
  CHECK(wrap_lines("a/very/long/path/that/cannot/break here", 12) ==
        "a/very/long/path/that/cannot/break\nhere");
  CHECK(wrap_lines("| " + std::string(40, 'x') + " y", 30) == "| " + std::string(40, 'x') + " y");
  CHECK(wrap_lines("one two three", 0) == "one two three");
}
