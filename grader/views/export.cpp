#include "views/export.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <pugixml.hpp>
#include <sstream>
#include <string_view>

#include "authoring/expect.h"
#include "core/files.h"
#include "views/class_view.h"
#include "views/report.h"
#include "views/report_html.h"

namespace cudalab {

namespace {

double round2(double x) {
  return std::round(x * 100) / 100;
}

std::string test_name(const GradedLab& lab, const GradedCheck& c) {
  return fmt::format("{}: {}", lab.id, c.spec.name);
}

}  // namespace

std::string check_output(const GradedCheck& c) {
  // The console's and report.txt's messages (report.h), all of them and
  // unwrapped: a platform's page wraps them to its own width.
  Style style;
  style.verbose = true;
  const std::vector<std::string> messages = check_messages(style, c.spec, c.result, c.score);
  std::string out =
      fmt::format("{} ({:.2f}/{:g} points)", c.result.verdict, c.score.points, c.score.max_points);
  // A check that counts for nothing says why on its first line.
  std::size_t i = 0;
  if (c.score.gated && !messages.empty()) out += ": " + messages[i++];
  out += "\n";
  for (; i < messages.size(); ++i) out += messages[i] + "\n";
  return out;
}

std::string submitter_line(const Submitter& s) {
  std::vector<std::string> ids;
  for (const std::string* x : {&s.sid, &s.login, &s.email})
    if (!x->empty() && std::find(ids.begin(), ids.end(), *x) == ids.end()) ids.push_back(*x);
  const std::string id = fmt::format("{}", fmt::join(ids, ", "));
  return s.name.empty() ? id : id.empty() ? s.name : fmt::format("{} ({})", s.name, id);
}

std::string submission_header(const GradeDocument& g) {
  std::string out;
  if (g.submission) {
    const SubmissionRecord& r = *g.submission;
    std::vector<std::string> who;
    for (const auto& s : r.submitters) who.push_back(submitter_line(s));
    if (!who.empty()) out += fmt::format("submitted by: {}\n", fmt::join(who, "; "));
    out += fmt::format("submitted: {} ({}{})\n", r.time.empty() ? "time not given" : r.time, r.platform,
                       r.id.empty() ? "" : " submission " + r.id);
  }
  if (g.late) {
    if (g.late->days == 0)
      out += fmt::format("on time (due {})\n", g.late->due);
    else
      out += fmt::format("late: {} (due {}); {:.2f} points before the penalty\n", g.late->reason, g.late->due,
                         g.late->score_before);
  }
  return out;
}

std::string submission_output(const GradeDocument& g) {
  std::string out = fmt::format("cudalab: {:.2f} / {:g} points", g.score, g.max_score);
  out += g.gpu        ? fmt::format(" (GPU: {})\n", g.gpu_line)
         : g.cpu_mode ? fmt::format(" (CPU mode, no GPU: {}; correctness only, speed checks not run{})\n",
                                    g.gpu_line, g.provisional ? "; a provisional grade" : "")
                      : fmt::format(" (no GPU: {}; checks not run)\n", g.gpu_line);
  out += submission_header(g);
  if (!g.error.empty()) out += g.error + "\n";
  for (const auto& lab : g.labs) {
    out += fmt::format("{}: {:.2f} / {:g}", lab.id, lab.points, lab.max_points);
    if (lab.weight != 1) out += fmt::format(" (weight {:g})", lab.weight);
    if (lab.status != LabStatus::graded) out += fmt::format(" [{}] {}", lab.status, lab.message);
    out += "\n";
  }
  if (!g.ignored.empty()) {
    out += "ignored:\n";
    for (const auto& i : g.ignored) out += "  " + i + "\n";
  }
  for (const auto& n : g.notes) out += n + "\n";
  return out;
}

std::string report_text(const GradeDocument& g) {
  const Style style = Style::for_file();
  const std::string summary = submission_output(g);
  // The summary's first line (the total and how it was graded) and its error.
  std::string out = summary.substr(0, summary.find('\n') + 1);
  out += submission_header(g);
  if (!g.error.empty()) out += wrap_lines(g.error, style.width) + "\n";
  for (const auto& lab : g.labs) out += graded_lab_text(style, lab);
  if (!g.ignored.empty()) {
    out += fmt::format("\nignored ({}):\n", g.ignored.size());
    for (const auto& i : g.ignored) out += wrap_lines("  " + i, style.width) + "\n";
  }
  if (!g.notes.empty()) {
    out += "\nnotes:\n";
    for (const auto& n : g.notes) out += wrap_lines("  " + n, style.width) + "\n";
  }
  return out;
}

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

namespace {

// -?digits[.digits][e[+-]digits]: what fmt writes for a finite double.
bool plain_number(const std::string& s) {
  std::size_t i = s.size() > 0 && s[0] == '-' ? 1 : 0;
  const auto digits = [&] {
    const std::size_t from = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i > from;
  };
  if (!digits()) return false;
  if (i < s.size() && s[i] == '.' && (++i, !digits())) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == s.size();
}

}  // namespace

std::string csv_field(const std::string& s, CsvKind kind) {
  // OWASP's CSV-injection rule: a leading ' makes the cell text to a
  // spreadsheet, and the quotes keep a separator inside it from starting a
  // cell of its own.
  const bool formula = !s.empty() && std::string_view("=+-@\t\r").find(s[0]) != std::string_view::npos &&
                       !(kind == CsvKind::number && plain_number(s));
  if (!formula && s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = formula ? "\"'" : "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string csv_line(const std::vector<CsvCell>& cells) {
  std::string line;
  for (std::size_t i = 0; i < cells.size(); ++i)
    line += (i ? "," : "") + csv_field(cells[i].value, cells[i].kind);
  return line + "\n";
}

// The columns a grade from a platform's export adds, after the others so
// that theirs keep their places.
constexpr const char* kSubmissionColumns[] = {"submitters", "submitted_at", "days_late", "late_fraction",
                                              "score_before_late"};

std::string csv_header(const std::vector<std::string>& lab_ids, bool submissions) {
  std::vector<CsvCell> h = {"submission", "score", "max_score"};
  h.insert(h.end(), lab_ids.begin(), lab_ids.end());
  h.emplace_back("status");
  if (submissions) h.insert(h.end(), std::begin(kSubmissionColumns), std::end(kSubmissionColumns));
  return csv_line(h);
}

std::string csv_header(const GradeDocument& g) {
  std::vector<std::string> ids;
  for (const auto& lab : g.labs) ids.push_back(lab.id);
  return csv_header(ids, g.submission.has_value());
}

std::string csv_row(const GradeDocument& g) {
  return csv_row(g, g.submission.has_value());
}

// The submission's columns of a row (kSubmissionColumns), empty without one.
void add_submission_cells(std::vector<CsvCell>& row, const GradeDocument* g) {
  if (!g || !g->submission) {
    row.insert(row.end(), std::size(kSubmissionColumns), "");
    return;
  }
  std::vector<std::string> who;
  for (const auto& s : g->submission->submitters) who.push_back(submitter_line(s));
  row.insert(row.end(), {fmt::format("{}", fmt::join(who, "; ")), g->submission->time});
  if (g->late)
    row.insert(row.end(), {csv_number(fmt::format("{}", g->late->days)),
                           csv_number(fmt::format("{:g}", g->late->fraction)),
                           csv_number(fmt::format("{:.2f}", g->late->score_before))});
  else
    row.insert(row.end(), 3, "");
}

std::string csv_row(const GradeDocument& g, bool submissions) {
  std::vector<CsvCell> row = {g.id, csv_number(fmt::format("{:.2f}", g.score)),
                              csv_number(fmt::format("{:g}", g.max_score))};
  std::vector<std::string> status;
  for (const auto& lab : g.labs) {
    row.push_back(csv_number(fmt::format("{:.2f}", lab.weight * lab.points)));
    if (lab.status != LabStatus::graded) status.push_back(fmt::format("{}:{}", lab.id, lab.status));
  }
  if (!g.error.empty()) status.insert(status.begin(), "unreadable");
  row.emplace_back(status.empty() ? "graded" : fmt::format("{}", fmt::join(status, " ")));
  if (submissions) add_submission_cells(row, &g);
  return csv_line(row);
}

bool batch_has_submissions(const BatchView& b) {
  return std::any_of(b.entries.begin(), b.entries.end(),
                     [](const BatchEntry& e) { return e.grade && e.grade->submission; });
}

std::vector<std::string> batch_rows(const BatchView& b) {
  const bool submissions = batch_has_submissions(b);
  std::vector<std::string> rows;
  for (const auto& e : b.entries) {
    if (e.grade) {
      std::string row = csv_row(*e.grade, submissions);
      row.pop_back();  // its newline
      rows.push_back(std::move(row));
    } else {
      std::vector<CsvCell> row = {e.id, csv_number("0.00"), csv_number("0")};
      row.insert(row.end(), b.lab_ids.size(), "");
      row.emplace_back(e.problem.empty() ? "not graded" : e.problem);
      if (submissions) add_submission_cells(row, nullptr);
      std::string line = csv_line(row);
      line.pop_back();  // its newline
      rows.push_back(std::move(line));
    }
  }
  return rows;
}

std::string batch_csv(const BatchView& b) {
  std::string csv = csv_header(b.lab_ids, batch_has_submissions(b));
  for (const auto& row : batch_rows(b)) csv += row + "\n";
  return csv;
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
