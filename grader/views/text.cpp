#include "views/text.h"

#include <fmt/format.h>

#include <algorithm>

#include "views/report.h"

namespace cudalab {

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

}  // namespace cudalab
