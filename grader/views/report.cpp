#include "views/report.h"

#include <fmt/color.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>

namespace cudalab {

std::string leading_line(const std::vector<std::string>& failures) {
  std::string first;
  for (const auto& f : failures) {
    std::istringstream lines(f);
    for (std::string line; std::getline(lines, line);) {
      const auto start = line.find_first_not_of(" \t");
      if (start == std::string::npos) continue;
      line = line.substr(start);
      if (line.rfind("Diagnosis:", 0) == 0) return line;
      if (first.empty()) first = line;
    }
  }
  return first;
}

Style Style::for_stdout(bool verbose) {
  Style s;
  s.colour = isatty(STDOUT_FILENO) && !std::getenv("NO_COLOR");
  s.verbose = verbose;
  return s;
}

Style Style::for_file() {
  Style s;
  s.verbose = true;
  s.width = 100;
  return s;
}

namespace {

std::string paint(const Style& st, fmt::text_style ts, const std::string& text) {
  return st.colour ? fmt::format(ts, "{}", text) : text;
}

std::string badge(const Style& st, Verdict verdict) {
  if (verdict == Verdict::pass)
    return paint(st, fmt::fg(fmt::terminal_color::green) | fmt::emphasis::bold, "PASS   ");
  if (verdict == Verdict::fail)
    return paint(st, fmt::fg(fmt::terminal_color::red) | fmt::emphasis::bold, "FAIL   ");
  if (verdict == Verdict::timeout)
    return paint(st, fmt::fg(fmt::terminal_color::red) | fmt::emphasis::bold, "TIMEOUT");
  if (verdict == Verdict::crash)
    return paint(st, fmt::fg(fmt::terminal_color::red) | fmt::emphasis::bold, "CRASH  ");
  if (verdict == Verdict::error)
    return paint(st, fmt::fg(fmt::terminal_color::red) | fmt::emphasis::bold, "ERROR  ");
  if (verdict == Verdict::skipped) return paint(st, fmt::fg(fmt::terminal_color::yellow), "SKIPPED");
  return paint(st, fmt::fg(fmt::terminal_color::yellow), "NOT RUN");
}

std::string indent(const std::string& text, const std::string& pad) {
  std::string out = pad;
  for (char c : text) {
    out += c;
    if (c == '\n') out += pad;
  }
  return out;
}

std::string fmt_value(const Measurement& m) {
  if (m.unit == "ms") return fmt::format("{:.3f} ms", m.value);
  if (m.unit == "x") return fmt::format("{:.2f}x", m.value);
  if (m.unit == "%") return fmt::format(m.value < 1 ? "{:.2f}%" : "{:.1f}%", m.value);
  if (m.unit.empty()) return fmt::format("{:g}", m.value);
  return fmt::format("{:.0f} {}", m.value, m.unit);
}

}  // namespace

std::string describe_measurements(const CheckResult& r, const CheckScore& score) {
  std::vector<std::string> parts;
  // The timed ratio first, as the grader scored it, with the line it needed.
  if (score.speed)
    parts.push_back(score.speed->pass_at ? fmt::format("ratio {:.2f}x (needs {:.2f}x)", score.speed->ratio,
                                                       *score.speed->pass_at)
                                         : fmt::format("ratio {:.2f}x", score.speed->ratio));
  for (const auto& m : r.measurements) {
    if (m.key.rfind("chart_", 0) == 0) continue;  // for report.html's chart
    if (is_recorded_ratio(m)) {
      continue;  // the speed outcome's, above
    } else if (m.key == "noise") {
      parts.push_back(fmt::format("noise +-{}", fmt_value(m)));
    } else if (m.key.size() > 3 && m.key.compare(m.key.size() - 3, 3, "_ms") == 0) {
      parts.push_back(fmt::format("{} {}", m.key.substr(0, m.key.size() - 3), fmt_value(m)));
    } else if (m.key.rfind("pct_", 0) == 0) {
      parts.push_back(fmt::format("{} of {}", fmt_value(m), m.key.substr(4)));
    } else {
      parts.push_back(fmt::format("{} {}", m.key, fmt_value(m)));
    }
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string wrap_lines(const std::string& text, std::size_t width) {
  if (width == 0) return text;
  std::string out;
  std::istringstream in(text);
  bool first = true;
  for (std::string line; std::getline(in, line); first = false) {
    if (!first) out += '\n';
    // A line quoted from the test's output is shown as the test wrote it.
    const std::size_t start = std::min(line.find_first_not_of(' '), line.size());
    if (line.size() <= width || start * 2 >= width || line.compare(start, 2, "| ") == 0) {
      out += line;
      continue;
    }
    const std::string pad(start, ' ');
    std::string rest = line.substr(start), current = pad;
    // Break at the last space that keeps the line within width; a word
    // longer than the line (a path, a URL) stays whole.
    while (current.size() + rest.size() > width) {
      const std::size_t room = width - current.size();
      std::size_t cut = rest.rfind(' ', room);
      if (cut == std::string::npos || cut == 0) cut = rest.find(' ', room);
      if (cut == std::string::npos) break;
      out += current + rest.substr(0, cut) + '\n';
      const std::size_t next = rest.find_first_not_of(' ', cut);
      rest = next == std::string::npos ? std::string() : rest.substr(next);
      current = pad;
    }
    out += current + rest;
  }
  if (!text.empty() && text.back() == '\n') out += '\n';
  return out;
}

std::vector<std::string> check_messages(const Style& st, const CheckSpec& spec, const CheckResult& r,
                                        const CheckScore& score) {
  std::vector<std::string> out;
  std::vector<std::string> failures = r.failures;
  if (score.gated) {
    // Counts for nothing because a check it requires did not pass: that
    // first, whatever its own verdict; the grader's "not timed" says it best.
    const bool not_timed = !failures.empty() && failures.front().rfind("not timed: ", 0) == 0;
    out.push_back(not_timed ? failures.front() : "not counted: it " + score.why);
    if (not_timed) failures.erase(failures.begin());
  }
  const std::string measured = describe_measurements(r, score);
  // A speed check that failed on its ratio alone, with no words of its own:
  // it opens with what failed, before the metrics.
  if (r.verdict == Verdict::fail && failures.empty() && score.speed)
    failures.push_back(
        !score.speed->pass_at
            ? fmt::format("too slow: {:.2f}x the speed of the kernel it is timed against", score.speed->ratio)
            : fmt::format("too slow: {:.2f}x the speed of the kernel it is timed against; this check needs "
                          "{:.2f}x",
                          score.speed->ratio, *score.speed->pass_at));
  std::size_t shown_failures = 0;
  if (r.verdict != Verdict::pass && !failures.empty()) {
    // The lead first, with the rest of the failure it is part of: a speed
    // check's Diagnosis line comes after the ratio it explains, and is what a
    // student should read first.
    const std::string lead = leading_line(failures);
    for (auto f = failures.begin(); f != failures.end() && !lead.empty(); ++f) {
      std::string rest;
      bool found = false;
      std::istringstream lines(*f);
      for (std::string line; std::getline(lines, line);) {
        const auto start = line.find_first_not_of(" \t");
        if (!found && start != std::string::npos && line.compare(start, std::string::npos, lead) == 0)
          found = true;
        else if (start != std::string::npos || !rest.empty())
          rest += (rest.empty() ? "" : "\n") + line;
      }
      if (!found) continue;
      out.push_back(rest.empty() ? lead : lead + "\n" + rest);
      failures.erase(f);
      ++shown_failures;
      break;
    }
  }
  const std::size_t limit = st.verbose ? failures.size() + shown_failures : 3;
  std::size_t i = 0;
  for (; i < failures.size() && shown_failures < limit; ++i, ++shown_failures) out.push_back(failures[i]);
  if (i < failures.size())
    out.push_back(fmt::format("... and {} more (--verbose shows all)", failures.size() - i));
  // The metrics after the words: a slow check's lead and how slow it is
  // ("runs at 0.58x ...; needs 0.80x.") read before its GB/s.
  if (!measured.empty()) out.push_back(measured);
  for (const auto& n : r.notes) out.push_back(n);
  if (!score.gated && !score.why.empty() && score.points < score.max_points &&
      r.verdict != Verdict::not_run && r.verdict != Verdict::skipped)
    out.push_back("points: " + score.why);
  if (!r.output.empty() && (st.verbose || r.verdict == Verdict::crash || r.verdict == Verdict::error ||
                            r.verdict == Verdict::timeout))
    out.push_back("output:\n" + indent(r.output, "| "));
  return out;
}

std::string check_text(const Style& st, const CheckSpec& spec, const CheckResult& r,
                       const CheckScore& score) {
  std::string out = fmt::format("  {}  {:<20} {:>6.2f}/{:<6g} {}  ({:.1f} s)\n", badge(st, r.verdict),
                                spec.id, score.points, score.max_points, spec.name, r.seconds);
  const std::string pad = "           ";
  const std::size_t width = st.width > pad.size() ? st.width - pad.size() : 0;
  for (const auto& m : check_messages(st, spec, r, score)) out += indent(wrap_lines(m, width), pad) + "\n";
  return out;
}

std::string lab_header_text(const Style& st, const std::string& id, const std::string& title,
                            const std::string& context) {
  std::string out =
      fmt::format("\n{}\n", paint(st, fmt::emphasis::bold, fmt::format("== {}: {}", id, title)));
  if (!context.empty()) out += fmt::format("   {}\n", context);
  return out;
}

std::string lab_total_text(const Style& st, const std::string& id, double points, double max_points,
                           const std::string& label) {
  return fmt::format("  {}\n",
                     paint(st, fmt::emphasis::bold,
                           fmt::format("{}: {:.2f} / {:g} points{}", id, points, max_points, label)));
}

std::string graded_lab_text(const Style& st, const GradedLab& lab) {
  std::string out =
      lab_header_text(st, lab.id, lab.title, lab.weight != 1 ? fmt::format("weight {:g}", lab.weight) : "");
  if (lab.status != LabStatus::graded && !lab.message.empty()) {
    std::string status(spelling(lab.status));
    for (char& c : status)
      c = c == '_' ? ' ' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    const std::string pad = "    ";
    out += "  " + status + "\n" +
           indent(wrap_lines(lab.message, st.width > pad.size() ? st.width - pad.size() : 0), pad) + "\n";
  } else {
    for (const GradedCheck& c : lab.checks) out += check_text(st, c.spec, c.result, c.score);
  }
  return out + lab_total_text(st, lab.id, lab.points, lab.max_points, "");
}

void print_lab_header(const Style& st, const std::string& id, const std::string& title,
                      const std::string& context) {
  fmt::print("{}", lab_header_text(st, id, title, context));
}

void print_check(const Style& st, const CheckSpec& spec, const CheckResult& r, const CheckScore& score) {
  fmt::print("{}", check_text(st, spec, r, score));
}

void print_lab_total(const Style& st, const std::string& id, double points, double max_points,
                     const std::string& label) {
  fmt::print("{}", lab_total_text(st, id, points, max_points, label));
}

}  // namespace cudalab
