#include "class_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>

#include "report.h"

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

namespace {

bool word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}
bool digit(char c) {
  return std::isdigit(static_cast<unsigned char>(c)) != 0;
}

}  // namespace

std::string normalize_diagnosis(const std::string& diagnosis) {
  std::string s = diagnosis;
  const std::string lead = "Diagnosis: ";
  if (s.rfind(lead, 0) == 0) s.erase(0, lead.size());
  std::string out;
  std::size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    // A number starts where no word goes on into it; "17x33" is a shape: the
    // 'x' between two numbers does not make the second part of a word.
    const bool after_shape = out.size() >= 2 && out.back() == 'x' && out[out.size() - 2] == '#';
    const bool starts = digit(c) || (c == '.' && i + 1 < s.size() && digit(s[i + 1]));
    if (starts && (out.empty() || !word_char(out.back()) || after_shape) &&
        !(c == '.' && !out.empty() && out.back() == '#')) {
      if (c == '0' && i + 2 < s.size() && (s[i + 1] == 'x' || s[i + 1] == 'X') &&
          std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
        i += 2;
        while (i < s.size() && std::isxdigit(static_cast<unsigned char>(s[i]))) ++i;
      } else {
        while (i < s.size() && digit(s[i])) ++i;
        if (i + 1 < s.size() && s[i] == '.' && digit(s[i + 1])) {
          ++i;
          while (i < s.size() && digit(s[i])) ++i;
        }
        if (i + 1 < s.size() && (s[i] == 'e' || s[i] == 'E') &&
            (digit(s[i + 1]) ||
             ((s[i + 1] == '-' || s[i + 1] == '+') && i + 2 < s.size() && digit(s[i + 2])))) {
          i += 2;
          while (i < s.size() && digit(s[i])) ++i;
        }
      }
      out += '#';
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
    ++i;
  }
  while (!out.empty() && (out.back() == ' ' || out.back() == '.')) out.pop_back();
  return out;
}

std::string diagnosis_cause(const std::string& normalized) {
  int depth = 0;
  for (std::size_t i = 0; i + 1 < normalized.size(); ++i) {
    const char c = normalized[i];
    if (c == '(' || c == '[') ++depth;
    if ((c == ')' || c == ']') && depth > 0) --depth;
    // "(your launch: grid ...)" explains, it does not end the cause; a cause
    // cut after a word or two would group unrelated diagnoses.
    if (depth == 0 && (c == ':' || c == ';' || c == '.') && normalized[i + 1] == ' ' && i >= 12)
      return normalized.substr(0, i);
  }
  return normalized;
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

void count(std::vector<DiagnosisCount>& to, const std::string& text, const std::string& who) {
  const std::string cause = diagnosis_cause(text);
  for (auto& d : to)
    if (d.text == cause) {
      ++d.count;
      d.who.push_back(who);
      return;
    }
  to.push_back({cause, 1, text, {who}});
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
        count(not_graded.diagnoses,
              !e.grade                  ? submission_status(e).word
              : !e.grade->error.empty() ? std::string("error")
              : !lab                    ? std::string("not in the grade")
                                        : lab_status_words(lab->status),
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
          const std::string d = check_diagnosis(c);
          count(
              it->diagnoses,
              d.empty() ? fmt::format("{} (no message)", spelling(c.result.verdict)) : normalize_diagnosis(d),
              e.id);
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
    header.insert(header.end(), {fmt::format("diagnosis_{}", i), fmt::format("count_{}", i),
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
                   {c.diagnoses[i].text, number(c.diagnoses[i].count),
                    csv_number(fmt::format("{:.3f}", static_cast<double>(c.diagnoses[i].count) / c.of)),
                    fmt::format("{}", fmt::join(c.diagnoses[i].who, "; "))});
      else
        row.insert(row.end(), 4, "");
    }
    csv += csv_line(row);
  }
  return csv;
}

}  // namespace cudalab
