#include "report.h"

#include <fmt/color.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>

namespace cudalab {

Style Style::for_stdout(bool verbose) {
  Style s;
  s.colour = isatty(STDOUT_FILENO) && !std::getenv("NO_COLOR");
  s.verbose = verbose;
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

std::string describe_measurements(const CheckSpec& spec, const CheckResult& r) {
  if (r.measurements.empty()) return {};
  std::vector<std::string> parts;
  for (const auto& m : r.measurements) {
    if (m.key.rfind("chart_", 0) == 0) continue;  // for report.html's chart
    if (m.key == "ratio") {
      auto need = spec.numbers.find("min_ratio");
      parts.push_back(need == spec.numbers.end()
                          ? fmt::format("ratio {}", fmt_value(m))
                          : fmt::format("ratio {} (needs {:.2f}x)", fmt_value(m), need->second));
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

void print_lab_header(const Style& st, const std::string& id, const std::string& title,
                      const std::string& context) {
  fmt::print("\n{}\n", paint(st, fmt::emphasis::bold, fmt::format("== {}: {}", id, title)));
  if (!context.empty()) fmt::print("   {}\n", context);
}

void print_check(const Style& st, const CheckSpec& spec, const CheckResult& r, const CheckScore& score) {
  fmt::print("  {}  {:<20} {:>6.2f}/{:<6g} {}  ({:.1f} s)\n", badge(st, r.verdict), spec.id, score.points,
             score.max_points, spec.name, r.seconds);
  const std::string pad = "           ";
  if (auto m = describe_measurements(spec, r); !m.empty()) fmt::print("{}\n", indent(m, pad));
  const std::size_t show = st.verbose ? r.failures.size() : std::min<std::size_t>(r.failures.size(), 3);
  for (std::size_t i = 0; i < show; ++i) fmt::print("{}\n", indent(r.failures[i], pad));
  if (show < r.failures.size())
    fmt::print("{}... and {} more (--verbose shows all)\n", pad, r.failures.size() - show);
  for (const auto& n : r.notes) fmt::print("{}\n", indent(n, pad));
  if (!score.why.empty() && score.points < score.max_points && r.verdict != Verdict::skipped)
    fmt::print("{}points: {}\n", pad, score.why);
  if (!r.output.empty() && (st.verbose || r.verdict == Verdict::crash || r.verdict == Verdict::error ||
                            r.verdict == Verdict::timeout))
    fmt::print("{}output:\n{}\n", pad, indent(r.output, pad + "| "));
}

void print_lab_total(const Style& st, const std::string& id, double points, double max_points,
                     const std::string& label) {
  fmt::print("  {}\n", paint(st, fmt::emphasis::bold,
                             fmt::format("{}: {:.2f} / {:g} points{}", id, points, max_points, label)));
}

}  // namespace cudalab
