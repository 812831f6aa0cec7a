#include "views/export.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <pugixml.hpp>
#include <sstream>
#include <string_view>

#include "core/files.h"
#include "views/class_view.h"
#include "views/csv.h"
#include "views/report.h"
#include "views/report_html.h"
#include "views/text.h"

namespace cudalab {

namespace {

double round2(double x) {
  return std::round(x * 100) / 100;
}

std::string test_name(const GradedLab& lab, const GradedCheck& c) {
  return fmt::format("{}: {}", lab.id, c.spec.name);
}

}  // namespace

// How Gradescope shows our text. Its autograder specification ("Output String
// Formatting", gradescope-autograders.readthedocs.io/en/latest/specs/) says
// "text" "will do the basic text formatting ... No HTML, Markdown, or ANSI
// will be rendered", while "simple_format", the default for the top-level
// output, "is very similar to the html format": there "<lab>/<file>" in a
// message would be taken for a tag and vanish. Our messages are plain text
// with <, > and & in them, so "text", said everywhere rather than left to
// the defaults.
constexpr const char* kGradescopeFormat = "text";

nlohmann::json gradescope_json(const GradeDocument& g) {
  nlohmann::json tests = nlohmann::json::array();
  for (const auto& lab : g.labs) {
    for (std::size_t i = 0; i < lab.checks.size(); ++i) {
      const GradedCheck& c = lab.checks[i];
      const CheckScore& s = c.score;
      tests.push_back({{"name", test_name(lab, c)},
                       {"number", fmt::format("{}.{}", lab.id.substr(0, 2), i + 1)},
                       {"score", round2(lab.weight * s.points)},
                       {"max_score", round2(lab.weight * s.max_points)},
                       // status follows points: a passing check that does not count is failed
                       {"status", c.result.passed() && !s.gated ? "passed" : "failed"},
                       {"output", check_output(c)},
                       {"output_format", kGradescopeFormat},
                       {"name_format", kGradescopeFormat},
                       {"visibility", c.spec.visibility}});
    }
  }
  // How it was graded, for scripts: "gpu", "cpu" (CPU mode: correctness
  // only) or "none" (no GPU: built, checks not run).
  const nlohmann::json mode = {{"mode", g.mode()}, {"provisional", g.provisional}, {"gpu", g.gpu_line}};
  return {{"score", round2(g.score)},
          {"execution_time", std::lround(g.seconds)},
          {"output", submission_output(g)},
          {"output_format", kGradescopeFormat},
          {"test_output_format", kGradescopeFormat},
          {"test_name_format", kGradescopeFormat},
          {"visibility", "visible"},
          {"stdout_visibility", "hidden"},
          {"tests", tests},
          {"extra_data", {{"cudalab", mode}}}};
}

// PrairieLearn's results page (the pl-external-grader-results element) puts
// message and output through ansi2html, which escapes &, < and > before it
// adds colour, and names and descriptions through an escaping template: the
// text goes in as written, and escaping it here would show "&lt;" to the
// student.
nlohmann::json prairielearn_json(const GradeDocument& g) {
  nlohmann::json tests = nlohmann::json::array();
  for (const auto& lab : g.labs) {
    for (const GradedCheck& c : lab.checks) {
      const CheckScore& s = c.score;
      const CheckResult& r = c.result;
      // What a student reads first: the lead (expect.h), as the console and
      // report.txt put it first.
      std::string message = leading_line(r.failures);
      if (message.size() > 300) message = message.substr(0, 300) + "...";
      tests.push_back({{"name", test_name(lab, c)},
                       {"description", c.spec.kind == CheckKind::speed ? "speed check" : "correctness check"},
                       {"points", round2(lab.weight * s.points)},
                       {"max_points", round2(lab.weight * s.max_points)},
                       {"message", message},
                       {"output", check_output(c)}});
    }
  }
  return {{"gradable", g.error.empty()},
          {"score", g.max_score > 0 ? g.score / g.max_score : 0.0},
          {"message", fmt::format("{:.2f} / {:g} points", g.score, g.max_score)},
          {"output", submission_output(g)},
          {"tests", tests}};
}

// JUnit XML as Jenkins, GitLab and GitHub's reporters read it (the Jenkins
// schema, junit-10.xsd): <testsuites> and each <testsuite> carry tests,
// failures, errors, skipped and time (seconds); a <testcase> holds at most one
// of <failure> (the code was judged wrong), <error> (it could not be judged:
// it crashed, timed out, or the test ended without a result) or <skipped>,
// then its <system-out>. Every count is of the testcases under it.
std::string junit_xml(const GradeDocument& g) {
  pugi::xml_document doc;
  auto decl = doc.append_child(pugi::node_declaration);
  decl.append_attribute("version") = "1.0";
  decl.append_attribute("encoding") = "UTF-8";
  auto suites = doc.append_child("testsuites");
  suites.append_attribute("name") = ("cudalab: " + g.id).c_str();
  struct Counts {
    int tests = 0, failures = 0, errors = 0, skipped = 0;
    double time = 0;
    void set(pugi::xml_node n) const {
      n.append_attribute("tests") = tests;
      n.append_attribute("failures") = failures;
      n.append_attribute("errors") = errors;
      n.append_attribute("skipped") = skipped;
      n.append_attribute("time") = fmt::format("{:.3f}", time).c_str();
    }
  } all;
  const auto first_line = [](const std::string& s) {
    return s.substr(0, std::min(s.find('\n'), std::size_t{200}));
  };
  for (const auto& lab : g.labs) {
    auto suite = suites.append_child("testsuite");
    suite.append_attribute("name") = lab.id.c_str();
    Counts counts;
    if (lab.status != LabStatus::graded && lab.checks.empty()) {
      // A lab that was not graded lists each check as failed or not run with
      // the reason; one without any is one errored case, so that a reader of
      // the report still sees it.
      auto tc = suite.append_child("testcase");
      tc.append_attribute("classname") = lab.id.c_str();
      tc.append_attribute("name") = "graded";
      tc.append_attribute("time") = "0.000";
      auto e = tc.append_child("error");
      const std::string status(spelling(lab.status));
      e.append_attribute("message") = (lab.message.empty() ? status : first_line(lab.message)).c_str();
      e.append_attribute("type") = status.c_str();
      e.text().set(lab.message.c_str());
      ++counts.tests, ++counts.errors;
    }
    for (const GradedCheck& check : lab.checks) {
      const CheckSpec& c = check.spec;
      const CheckResult& r = check.result;
      auto tc = suite.append_child("testcase");
      tc.append_attribute("classname") = lab.id.c_str();
      tc.append_attribute("name") = c.name.c_str();
      tc.append_attribute("time") = fmt::format("{:.3f}", r.seconds).c_str();
      ++counts.tests;
      counts.time += r.seconds;
      const std::string text = check_output(check);
      const std::string lead = leading_line(r.failures);
      if (r.verdict == Verdict::not_run || r.verdict == Verdict::skipped) {
        tc.append_child("skipped").append_attribute("message") =
            (lead.empty() ? std::string(spelling(r.verdict)) : first_line(lead)).c_str();
        ++counts.skipped;
      } else if (r.verdict == Verdict::crash || r.verdict == Verdict::error ||
                 r.verdict == Verdict::timeout) {
        auto e = tc.append_child("error");
        const std::string verdict(spelling(r.verdict));
        e.append_attribute("message") = (lead.empty() ? verdict : first_line(lead)).c_str();
        e.append_attribute("type") = verdict.c_str();
        e.text().set(text.c_str());
        ++counts.errors;
      } else if (!r.passed()) {
        auto f = tc.append_child("failure");
        f.append_attribute("message") = (lead.empty() ? std::string("failed") : first_line(lead)).c_str();
        f.append_attribute("type") = std::string(spelling(c.kind)).c_str();
        f.text().set(text.c_str());
        ++counts.failures;
      }
      tc.append_child("system-out").text().set(text.c_str());
    }
    counts.set(suite);
    all.tests += counts.tests, all.failures += counts.failures, all.errors += counts.errors;
    all.skipped += counts.skipped, all.time += counts.time;
  }
  all.set(suites);
  std::ostringstream out;
  doc.save(out, "  ");
  return out.str();
}

void write_views(const GradeDocument& g, const std::filesystem::path& dir) {
  write_text(dir / "results.json", gradescope_json(g).dump(2) + "\n");
  write_text(dir / "prairielearn.json", prairielearn_json(g).dump(2) + "\n");
  write_text(dir / "junit.xml", junit_xml(g));
  write_text(dir / "grade.csv", csv_header(g) + csv_row(g));
  write_text(dir / "report.txt", report_text(g));
  write_text(dir / "report.html", report_html(g));
}

GradeDocument write_grade(const SubmissionGrade& g, const std::filesystem::path& dir) {
  GradeDocument doc = grade_document(g, CUDALAB_VERSION);
  write_grade_document(doc, dir);
  return doc;
}

void write_grade_document(const GradeDocument& doc, const std::filesystem::path& dir) {
  save_grade_document(doc, dir / "grade.json");
  write_views(doc, dir);
}

void write_batch_views(const BatchView& b, const std::filesystem::path& dir) {
  write_text(dir / "grades.csv", batch_csv(b));
  write_text(dir / "index.html", batch_html(b));
  write_text(dir / "class.csv", class_csv(class_view(b)));
}

int export_views(const std::vector<std::filesystem::path>& dirs) {
  namespace fs = std::filesystem;
  int failed = 0;
  for (const fs::path& dir : dirs) {
    std::string error;
    if (fs::exists(dir / "grade.json")) {
      if (const auto doc = load_grade_document(dir / "grade.json", error)) {
        write_views(*doc, dir);
        fmt::print("{}: views written from grade.json\n", dir.string());
      } else {
        fmt::print(stderr, "cudalab export: {}\n", error);
        ++failed;
      }
      continue;
    }
    // A batch: every submission folder with a grade.json, in name order.
    std::vector<fs::path> subs;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (e.is_directory() && fs::exists(e.path() / "grade.json")) subs.push_back(e.path());
    if (ec || subs.empty()) {
      fmt::print(stderr, "cudalab export: {}: {}\n", dir.string(),
                 ec ? ec.message() : "no grade.json here or in its folders (grade it first)");
      ++failed;
      continue;
    }
    std::sort(subs.begin(), subs.end());
    BatchView batch;
    for (const auto& sub : subs) {
      BatchEntry entry;
      entry.id = sub.filename().string();
      entry.grade = load_grade_document(sub / "grade.json", error);
      if (!entry.grade) {
        fmt::print(stderr, "cudalab export: {}\n", error);
        entry.problem = "unreadable grade.json";
        ++failed;
      } else {
        write_views(*entry.grade, sub);
        if (batch.lab_ids.empty())
          for (const auto& lab : entry.grade->labs) {
            batch.lab_ids.push_back(lab.id);
            batch.lab_max.push_back(lab.weight * lab.max_points);
          }
      }
      batch.entries.push_back(std::move(entry));
    }
    write_batch_views(batch, dir);
    fmt::print(
        "{}: {} submissions' views, grades.csv, index.html and class.csv written from their grade.json\n",
        dir.string(), subs.size());
  }
  return failed ? 1 : 0;
}

}  // namespace cudalab
