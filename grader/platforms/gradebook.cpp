#include "platforms/gradebook.h"

#include <fmt/format.h>

#include <cmath>
#include <set>

#include "core/files.h"
#include "core/late.h"
#include "views/csv.h"
#include "views/text.h"

namespace fs = std::filesystem;

namespace cudalab {

namespace {

// One student's line in a gradebook: who, in which hand-in, and its grade
// (nullptr: not graded, `problem` says why).
struct StudentRow {
  const HandIn* handin;
  std::size_t member;  // index into the submitters
  const Submitter* who;
  const GradeDocument* grade;
  std::string problem;
};

std::vector<StudentRow> student_rows(const Gradebook& g) {
  std::vector<StudentRow> rows;
  for (std::size_t i = 0; i < g.handins->size(); ++i) {
    const HandIn& h = (*g.handins)[i];
    const BatchEntry* e = i < g.batch->entries.size() ? &g.batch->entries[i] : nullptr;
    const GradeDocument* doc = e && e->grade ? &*e->grade : nullptr;
    std::string problem = !h.problem.empty()         ? h.problem
                          : doc                      ? std::string()
                          : e && !e->problem.empty() ? "not graded: " + e->problem
                                                     : "not graded";
    if (doc && !doc->error.empty()) problem = doc->error;
    // The document's record of who handed it in where there is one (it was
    // graded with it); the export's otherwise.
    const std::vector<Submitter>& who =
        doc && doc->submission ? doc->submission->submitters : h.record.submitters;
    for (std::size_t m = 0; m < who.size(); ++m) rows.push_back({&h, m, &who[m], doc, problem});
  }
  return rows;
}

double max_score(const Gradebook& g, const GradeDocument* doc) {
  if (doc) return doc->max_score;
  double m = 0;
  for (double x : g.batch->lab_max) m += x;
  return m;
}

std::string points(double x) {
  return fmt::format("{:.2f}", std::round(x * 100) / 100);
}

// Gradescope's "Lateness (H:M:S)": how long after the due moment.
std::string lateness_hms(const GradeDocument* doc) {
  if (!doc || !doc->late || !doc->submission) return "";
  std::string error;
  const auto due = parse_instant(doc->late->due, error);
  const auto at = parse_instant(doc->submission->time, error);
  if (!due || !at) return "";
  const std::int64_t s = std::max<std::int64_t>(0, (at->utc_ms - due->utc_ms + 999) / 1000);
  return fmt::format("{:02d}:{:02d}:{:02d}", s / 3600, s / 60 % 60, s % 60);
}

std::string late_penalty(const GradeDocument* doc) {
  return doc && doc->late ? fmt::format("{:g}", doc->late->fraction) : "";
}

std::string score_before(const GradeDocument* doc) {
  return doc && doc->late ? points(doc->late->score_before) : "";
}

std::string reason(const StudentRow& r) {
  if (!r.problem.empty()) return r.problem;
  return r.grade && r.grade->late && r.grade->late->days > 0 ? r.grade->late->reason : "";
}

std::string gradescope_csv(const Gradebook& g) {
  std::string csv =
      csv_line({"Name", "SID", "Email", "Total Score", "Max Points", "Status", "Submission ID",
                "Submission Time", "Lateness (H:M:S)", "Late Penalty", "Score Before Penalty", "Reason"});
  for (const auto& r : student_rows(g)) {
    const bool graded = r.grade && r.problem.empty();
    csv += csv_line({r.who->name, r.who->sid, r.who->email, csv_number(points(graded ? r.grade->score : 0)),
                     csv_number(fmt::format("{:g}", max_score(g, r.grade))), graded ? "Graded" : "Not graded",
                     r.handin->record.id, r.handin->record.time, lateness_hms(r.grade),
                     csv_number(late_penalty(r.grade)), csv_number(score_before(r.grade)), reason(r)});
  }
  return csv;
}

// A question's share of the grade: the labs whose files it submitted.
double question_percent(const Gradebook& g, const GradeDocument& doc, const QuestionSubmission& q) {
  std::set<std::string> labs;
  for (const auto& f : q.files)
    if (g.lab_of_file.count(f)) labs.insert(g.lab_of_file.at(f));
  double got = 0, max = 0;
  for (const auto& lab : doc.labs)
    if (labs.count(lab.id)) got += lab.weight * lab.points, max += lab.weight * lab.max_points;
  if (labs.empty() || max <= 0) return doc.max_score > 0 ? 100 * doc.score / doc.max_score : 0;
  // The late penalty is the whole submission's: the same fraction of each question.
  if (doc.late) got = doc.late->fraction >= 1 ? 0 : got * (1 - doc.late->fraction);
  return 100 * got / max;
}

std::string prairielearn_feedback(const StudentRow& r, double percent) {
  if (!r.problem.empty()) return "cudalab: not graded: " + r.problem;
  std::string text = fmt::format(
      "cudalab: {:.2f} / {:g} points for the assignment, {:.1f}% for this "
      "question",
      r.grade->score, r.grade->max_score, percent);
  if (r.grade->late && r.grade->late->days > 0) text += "; " + r.grade->late->reason;
  return text;
}

std::string prairielearn_csv(const Gradebook& g) {
  std::string csv =
      csv_line({"uid", "group_name", "instance", "qid", "submission_id", "score_perc", "feedback"});
  for (const auto& r : student_rows(g)) {
    // PrairieLearn keys a group's work by the group (its upload reads
    // group_name before uid): one row per question for the whole group.
    const bool group = !r.handin->group.empty();
    if (group && r.member > 0) continue;
    const bool graded = r.grade && r.problem.empty();
    for (const auto& q : r.handin->questions) {
      const double percent = graded ? question_percent(g, *r.grade, q) : 0;
      csv += csv_line({group ? "" : r.who->login, r.handin->group, q.instance, q.qid, q.submission_id,
                       csv_number(fmt::format("{:.2f}", std::round(percent * 100) / 100)),
                       prairielearn_feedback(r, percent)});
    }
  }
  return csv;
}

constexpr const char* kClassroomColumns[] = {
    "assignment_name",   "assignment_url",          "starter_code_url",       "github_username",
    "roster_identifier", "student_repository_name", "student_repository_url", "submission_timestamp",
    "points_awarded",    "points_available"};

std::string classroom_csv(const Gradebook& g) {
  bool groups = false;
  for (const auto& h : *g.handins) groups |= !h.group.empty();
  std::vector<std::string> header(std::begin(kClassroomColumns), std::end(kClassroomColumns));
  if (groups) header.push_back("group_name");
  const std::size_t own = header.size();
  header.insert(header.end(), {"late_days", "late_penalty", "points_before_late", "reason"});
  std::string csv = csv_line(std::vector<CsvCell>(header.begin(), header.end()));
  for (const auto& r : student_rows(g)) {
    const bool graded = r.grade && r.problem.empty();
    // The platform's own row where the export had one, cudalab's points in it.
    // The platform's cells are text from outside; cudalab's points are numbers.
    std::vector<CsvCell> cells(own, "");
    const auto& rows = r.handin->platform_rows;
    if (r.member < rows.size())
      for (const auto& [column, value] : rows[r.member])
        for (std::size_t c = 0; c < own; ++c)
          if (header[c] == column) cells[c] = CsvCell(value);
    const auto set = [&](const char* column, const CsvCell& value) {
      for (std::size_t c = 0; c < own; ++c)
        if (header[c] == column) cells[c] = value;
    };
    if (cells[0].value.empty()) set("assignment_name", g.assignment);
    set("github_username", r.who->login);
    set("roster_identifier", r.who->sid);
    if (r.handin->platform_rows.empty()) set("student_repository_name", r.handin->key);
    set("points_awarded", csv_number(points(graded ? r.grade->score : 0)));
    set("points_available", csv_number(fmt::format("{:g}", max_score(g, r.grade))));
    if (groups) set("group_name", r.handin->group);
    cells.insert(cells.end(),
                 {csv_number(r.grade && r.grade->late ? fmt::format("{}", r.grade->late->days) : ""),
                  csv_number(late_penalty(r.grade)), csv_number(score_before(r.grade)), reason(r)});
    csv += csv_line(cells);
  }
  return csv;
}

// The student's name in the platform's identity.
std::string feedback_name(Platform p, const Submitter& s) {
  switch (p) {
    case Platform::gradescope:
      return !s.sid.empty() ? s.sid : s.email;
    case Platform::prairielearn:
    case Platform::classroom:
      return !s.login.empty() ? s.login : s.sid;
  }
  return s.login;
}

}  // namespace

std::string gradebook_file(Platform p) {
  return fmt::format("gradebook-{}.csv", platform_name(p));
}

std::string gradebook_csv(const Gradebook& g) {
  switch (g.platform) {
    case Platform::gradescope:
      return gradescope_csv(g);
    case Platform::prairielearn:
      return prairielearn_csv(g);
    case Platform::classroom:
      return classroom_csv(g);
  }
  return "";
}

std::vector<std::pair<std::string, std::string>> feedback_files(const Gradebook& g) {
  std::vector<std::pair<std::string, std::string>> out;
  std::set<std::string> taken;
  for (const auto& r : student_rows(g)) {
    std::string name = safe_name(feedback_name(g.platform, *r.who));
    // A student in two hand-ins (two submissions in the export): one file each.
    if (taken.count(name)) name += "-" + r.handin->key;
    taken.insert(name);
    const std::vector<Submitter>& all =
        r.grade && r.grade->submission ? r.grade->submission->submitters : r.handin->record.submitters;
    std::vector<std::string> others;
    for (const auto& s : all)
      if (&s != r.who) others.push_back(submitter_line(s));
    std::string text = fmt::format("student: {}{}\n", submitter_line(*r.who),
                                   others.empty() ? "" : fmt::format(" (with {})", fmt::join(others, "; ")));
    text += fmt::format("assignment: {}\n", g.assignment.empty() ? "(the course's labs)" : g.assignment);
    // The submission's time and lateness are the report's own header
    // (submission_header) where it has them; said here only where it has not.
    if (!r.grade || !r.grade->submission)
      text += fmt::format(
          "submitted: {} ({}{})\n", r.handin->record.time.empty() ? "time not given" : r.handin->record.time,
          platform_name(g.platform), r.handin->record.id.empty() ? "" : " submission " + r.handin->record.id);
    if (!r.problem.empty()) {
      text += fmt::format("\nnot graded: {}\nscore: 0 / {:g}\n", r.problem, max_score(g, r.grade));
      if (r.grade) text += "\n" + report_text(*r.grade);
    } else {
      text += "\n" + report_text(*r.grade);
    }
    out.emplace_back(name + ".txt", std::move(text));
  }
  return out;
}

void write_gradebook(const Gradebook& g, const fs::path& dir) {
  write_text(dir / gradebook_file(g.platform), gradebook_csv(g));
  const fs::path feedback = dir / "feedback";
  std::error_code ec;
  fs::remove_all(feedback, ec);  // a student no longer in the export has no file left
  fs::create_directories(feedback, ec);
  for (const auto& [name, text] : feedback_files(g)) write_text(feedback / name, text);
}

}  // namespace cudalab
