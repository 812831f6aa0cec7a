#include "views/class_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>

#include "views/csv.h"
#include "views/report.h"

namespace cudalab {

std::string check_diagnosis(const GradedCheck& check) {
  if (check.result.verdict == Verdict::pass) return {};
  Style style;
  style.verbose = true;
  const std::vector<std::string> messages = check_messages(style, check.spec, check.result, check.score);
  if (messages.empty()) return {};
  const std::string& first = messages.front();
  return first.substr(0, first.find('\n'));
}

std::string SubmissionStatus::text() const {
  std::string s = word;
  if (!detail.empty()) s += " (" + detail + ")";
  if (days_late > 0) s += fmt::format(", late ({} day{})", days_late, days_late == 1 ? "" : "s");
  return s;
}

SubmissionStatus submission_status(const BatchEntry& e) {
  SubmissionStatus st;
  if (!e.grade) {
    const std::string& p = e.problem;
    st.word = p == "error" || p.rfind("unreadable", 0) == 0 ? "error" : "not graded";
    if (!p.empty() && p != st.word) st.detail = p;
    return st;
  }
  const GradeDocument& g = *e.grade;
  if (g.late) st.days_late = g.late->days;
  if (!g.error.empty()) {
    st.word = "error";
    st.detail = g.error.substr(0, g.error.find('\n'));
    return st;
  }
  // The worst of the labs' statuses, and the labs that have it.
  static const std::vector<std::pair<LabStatus, const char*>> kWorstFirst = {
      {LabStatus::build_failed, "compile error"},
      {LabStatus::rejected, "rejected"},
      {LabStatus::missing, "missing file"},
      {LabStatus::not_run, "not run"}};
  for (const auto& [status, word] : kWorstFirst) {
    std::vector<std::string> labs;
    for (const auto& lab : g.labs)
      if (lab.status == status) labs.push_back(lab.id);
    if (!labs.empty()) {
      st.word = word;
      st.detail = fmt::format("{}", fmt::join(labs, ", "));
      return st;
    }
  }
  st.word = "graded";
  return st;
}

namespace {

bool failed(Verdict v) {
  return v == Verdict::fail || v == Verdict::timeout || v == Verdict::crash || v == Verdict::error;
}

void count(std::vector<DiagnosisCount>& to, const std::string& cause, const std::string& text,
           const std::string& example, const std::string& who) {
  for (auto& d : to)
    if (d.cause == cause) {
      ++d.count;
      d.who.push_back(who);
      return;
    }
  to.push_back({cause, text, 1, example, {who}});
}

std::string lab_status_words(LabStatus s) {
  switch (s) {
    case LabStatus::build_failed:
      return "compile error";
    case LabStatus::missing:
      return "missing file";
    case LabStatus::rejected:
      return "rejected";
    case LabStatus::not_run:
      return "not run";
    case LabStatus::graded:
      break;
  }
  return "graded";
}

}  // namespace

ClassView class_view(const BatchView& b) {
  ClassView v;
  v.submissions = static_cast<int>(b.entries.size());
  std::vector<std::string> labs = b.lab_ids;
  for (const auto& e : b.entries)
    if (e.grade)
      for (const auto& lab : e.grade->labs)
        if (std::find(labs.begin(), labs.end(), lab.id) == labs.end()) labs.push_back(lab.id);
  for (const std::string& lab_id : labs) {
    ClassCheck not_graded;
    not_graded.lab = lab_id, not_graded.check = "(not graded)", not_graded.kind = "lab";
    not_graded.name = "the lab was not graded";
    not_graded.of = v.submissions;
    std::vector<ClassCheck> checks;
    for (const auto& e : b.entries) {
      const GradedLab* lab = nullptr;
      if (e.grade)
        for (const auto& l : e.grade->labs)
          if (l.id == lab_id) lab = &l;
      if (!lab || lab->status != LabStatus::graded) {
        ++not_graded.failed;
        const std::string words = !e.grade                  ? submission_status(e).word
                                  : !e.grade->error.empty() ? std::string("error")
                                  : !lab                    ? std::string("not in the grade")
                                                            : lab_status_words(lab->status);
        const std::string id =
            !e.grade || !e.grade->error.empty() || !lab ? words : std::string(spelling(lab->status));
        count(not_graded.diagnoses, id, words, lab ? lab->message.substr(0, lab->message.find('\n')) : "",
              e.id);
        continue;
      }
      for (const GradedCheck& c : lab->checks) {
        auto it = std::find_if(checks.begin(), checks.end(),
                               [&](const ClassCheck& x) { return x.check == c.spec.id; });
        if (it == checks.end()) {
          ClassCheck x;
          x.lab = lab_id, x.check = c.spec.id, x.name = c.spec.name,
          x.kind = std::string(spelling(c.spec.kind));
          checks.push_back(x);
          it = checks.end() - 1;
        }
        ++it->of;
        if (c.result.verdict == Verdict::pass) {
          ++it->passed;
        } else if (failed(c.result.verdict)) {
          ++it->failed;
          // A failure without a cause (a process that ended without a
          // verdict) is grouped by what became of it.
          const Cause cause = c.result.cause;
          const std::string id =
              cause != Cause::none ? std::string(spelling(cause)) : std::string(spelling(c.result.verdict));
          const std::string words = cause != Cause::none
                                        ? std::string(title(cause))
                                        : fmt::format("{}, no cause named", spelling(c.result.verdict));
          count(it->diagnoses, id, words, check_diagnosis(c), e.id);
        } else {
          ++it->not_run;
        }
      }
    }
    v.checks.push_back(not_graded);
    for (auto& c : checks) v.checks.push_back(std::move(c));
  }
  for (auto& c : v.checks)
    std::stable_sort(c.diagnoses.begin(), c.diagnoses.end(),
                     [](const DiagnosisCount& a, const DiagnosisCount& b) { return a.count > b.count; });
  return v;
}

std::string class_csv(const ClassView& v) {
  std::vector<CsvCell> header = {"lab", "check", "kind", "of", "passed", "failed", "not_run"};
  for (int i = 1; i <= 3; ++i)
    header.insert(header.end(),
                  {fmt::format("cause_{}", i), fmt::format("diagnosis_{}", i), fmt::format("count_{}", i),
                   fmt::format("share_{}", i), fmt::format("who_{}", i)});
  std::string csv = csv_line(header);
  const auto number = [](auto x) { return csv_number(fmt::format("{}", x)); };
  for (const auto& c : v.checks) {
    // A diagnosis quotes what a check printed: text, like the ids.
    std::vector<CsvCell> row = {
        c.lab, c.check, c.kind, number(c.of), number(c.passed), number(c.failed), number(c.not_run)};
    for (std::size_t i = 0; i < 3; ++i) {
      if (i < c.diagnoses.size() && c.of > 0)
        row.insert(row.end(),
                   {c.diagnoses[i].cause, c.diagnoses[i].text, number(c.diagnoses[i].count),
                    csv_number(fmt::format("{:.3f}", static_cast<double>(c.diagnoses[i].count) / c.of)),
                    fmt::format("{}", fmt::join(c.diagnoses[i].who, "; "))});
      else
        row.insert(row.end(), 5, "");
    }
    csv += csv_line(row);
  }
  return csv;
}

}  // namespace cudalab
