#include "authoring/calibration_rules.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <regex>
#include <sstream>
#include <stdexcept>

namespace cudalab::calibration {

// --- measured ratios --------------------------------------------------------

double Measured::median() const {
  if (ratios.empty()) return 0;
  std::vector<double> v = ratios;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
double Measured::lowest() const {
  return ratios.empty() ? 0 : *std::min_element(ratios.begin(), ratios.end());
}
double Measured::highest() const {
  return ratios.empty() ? 0 : *std::max_element(ratios.begin(), ratios.end());
}

// --- the rules ----------------------------------------------------------------

std::string format_number(double v) {
  const double cents = v * 100;
  if (std::fabs(cents - std::round(cents)) < 1e-6) return fmt::format("{:.2f}", v);
  return fmt::format("{:.3f}", v);
}

double nearest_in_range(double current, double lo, double hi) {
  constexpr double eps = 1e-9;
  if (current >= lo - eps && current <= hi + eps) return current;
  for (double grid : {0.05, 0.01, 0.001}) {
    const double v = current < lo ? std::ceil(lo / grid - eps) * grid : std::floor(hi / grid + eps) * grid;
    if (v >= lo - eps && v <= hi + eps) return std::round(v * 1000) / 1000;
  }
  return current < lo ? lo : hi;
}

std::string pct(double f) {
  return fmt::format("{:.0f}%", 100 * f);
}

std::string Proposal::margins_line() const {
  if (!feasible) return why_not;
  std::string s =
      fmt::format("threshold {} below the slowest correct alternative ({}, {:.3f})",
                  pct(1 - min_ratio / slowest_correct_ratio), slowest_correct, slowest_correct_ratio);
  if (!reference.empty() && reference != slowest_correct)
    s += fmt::format(" and {} below the reference ({:.3f})", pct(1 - min_ratio / reference_ratio),
                     reference_ratio);
  if (!fastest_foil.empty()) {
    const double below = 1 - fastest_foil_ratio / min_ratio;
    s += fmt::format("; the fastest foil ({}, {:.3f}) {} below it", fastest_foil, fastest_foil_ratio,
                     below >= 0.5 ? fmt::format("{:.1f}x", min_ratio / fastest_foil_ratio) : pct(below));
  } else {
    s += "; no foil measured for this check";
  }
  return s;
}

Proposal propose(const std::vector<Measured>& measured, double current_min_ratio,
                 const std::optional<Credit>& current_credit, const Margins& margins) {
  Proposal p;
  const Measured* slowest = nullptr;
  const Measured* fastest = nullptr;
  std::vector<std::string> unmeasured_correct;
  for (const auto& m : measured) {
    if (m.ratios.empty()) {
      if (m.correct)
        unmeasured_correct.push_back(
            fmt::format("{} ({})", m.variant, m.problem.empty() ? "no runs" : m.problem));
      else
        p.notes.push_back(
            fmt::format("foil {} recorded no ratio ({}): it fails whatever the threshold; not used",
                        m.variant, m.problem.empty() ? "no runs" : m.problem));
      continue;
    }
    if (m.ratios.size() < static_cast<std::size_t>(m.runs))
      p.notes.push_back(fmt::format("{}: {} of {} runs recorded no ratio ({})", m.variant,
                                    m.runs - static_cast<int>(m.ratios.size()), m.runs, m.problem));
    for (double n : m.noise)
      if (n > 0.5) {
        p.notes.push_back(
            fmt::format("{}: a run's noise was {:.2f}% (the timing aims at 0.5%)", m.variant, n));
        break;
      }
    if (m.variant == "solution" && m.correct) {
      p.reference = m.variant;
      p.reference_ratio = m.median();
    }
    if (m.correct && (!slowest || m.lowest() < slowest->lowest())) slowest = &m;
    if (!m.correct && (!fastest || m.highest() > fastest->highest())) fastest = &m;
  }
  if (!unmeasured_correct.empty()) {
    p.why_not = fmt::format("not calibrated: a correct alternative recorded no ratio: {}",
                            fmt::join(unmeasured_correct, "; "));
    return p;
  }
  if (!slowest) {
    p.why_not = "not calibrated: no correct alternative (expect.toml verdict \"pass\") was measured";
    return p;
  }
  p.slowest_correct = slowest->variant;
  p.slowest_correct_ratio = slowest->lowest();
  if (fastest) {
    p.fastest_foil = fastest->variant;
    p.fastest_foil_ratio = fastest->highest();
  }
  p.hi = (1 - margins.correct) * p.slowest_correct_ratio;
  p.lo = fastest ? p.fastest_foil_ratio / (1 - margins.foil) : 0;
  if (p.lo > p.hi) {
    p.why_not = fmt::format(
        "cannot be met on this GPU: the foil {} ({:.3f}) is too close to the correct alternative {} "
        "({:.3f}): "
        "{:.0f}% apart. The rules need min_ratio at most {:.3f} ({} below {}) and at least {:.3f} (so that "
        "{} is "
        "{} below it); nothing proposed: the check needs another shape or foil on this GPU",
        p.fastest_foil, p.fastest_foil_ratio, p.slowest_correct, p.slowest_correct_ratio,
        100 * (1 - p.fastest_foil_ratio / p.slowest_correct_ratio), p.hi, pct(margins.correct),
        p.slowest_correct, p.lo, p.fastest_foil, pct(margins.foil));
    return p;
  }
  p.feasible = true;
  p.min_ratio = nearest_in_range(current_min_ratio, std::max(p.lo, 0.01), p.hi);
  p.min_changed = std::fabs(p.min_ratio - current_min_ratio) > 1e-9;
  if (current_credit) {
    Credit c = *current_credit;
    // Full credit for every correct alternative, a little below the slowest,
    // and never below the threshold (a failing ratio with full points).
    const double full_hi = (1 - margins.full_credit) * p.slowest_correct_ratio;
    c.full_at = nearest_in_range(c.full_at, p.min_ratio, std::max(full_hi, p.min_ratio));
    // No credit at or below any foil, and some below the threshold.
    const double zero_lo = fastest ? p.fastest_foil_ratio : 0;
    const double zero_hi = std::max(zero_lo, std::min(p.min_ratio, c.full_at) - 0.01);
    c.zero_at = nearest_in_range(c.zero_at, zero_lo, zero_hi);
    p.credit = c;
    p.credit_changed = std::fabs(c.full_at - current_credit->full_at) > 1e-9 ||
                       std::fabs(c.zero_at - current_credit->zero_at) > 1e-9;
  }
  return p;
}

// --- lab.toml -----------------------------------------------------------------

std::string gpu_label(const std::string& record_gpu) {
  static const std::regex re(R"(^(.*?) \((sm_[0-9]+))");
  std::smatch m;
  if (std::regex_search(record_gpu, m, re)) return m[1].str() + " (" + m[2].str() + ")";
  return record_gpu.substr(0, record_gpu.find(','));
}

namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace

std::string apply_to_lab_toml(const std::string& text, const std::string& check_id, double min_ratio,
                              const std::optional<Credit>& credit) {
  std::vector<std::string> lines = split_lines(text);
  // The [[check]] blocks: from the header to the next table header.
  const std::regex id_re("^\\s*id\\s*=\\s*\"" +
                         std::regex_replace(check_id, std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)") + "\"");
  std::size_t start = lines.size(), end = lines.size();
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (trim(lines[i]) != "[[check]]") continue;
    std::size_t j = i + 1;
    while (j < lines.size() && trim(lines[j]).rfind('[', 0) != 0) ++j;
    for (std::size_t k = i + 1; k < j; ++k)
      if (std::regex_search(lines[k], id_re)) {
        start = i;
        end = j;
      }
    if (start != lines.size()) break;
  }
  if (start == lines.size()) throw std::runtime_error("no [[check]] with id = \"" + check_id + "\"");

  const std::regex min_re(R"(^(\s*min_ratio\s*=\s*)([-+0-9.eE]+)(.*)$)");
  const std::regex zero_re(R"((zero_at\s*=\s*)([-+0-9.eE]+))");
  const std::regex full_re(R"((full_at\s*=\s*)([-+0-9.eE]+))");
  bool min_done = false, credit_done = !credit;
  for (std::size_t k = start + 1; k < end; ++k) {
    std::smatch m;
    if (std::regex_match(lines[k], m, min_re)) {
      lines[k] = m[1].str() + format_number(min_ratio) + m[3].str();
      min_done = true;
    } else if (credit && std::regex_search(lines[k], std::regex(R"(^\s*credit\s*=)"))) {
      // The number after `key =`, nothing else of the line.
      const auto set = [&](const std::regex& re, double v) {
        std::smatch n;
        if (!std::regex_search(lines[k], n, re)) return false;
        lines[k] = n.prefix().str() + n[1].str() + format_number(v) + n.suffix().str();
        return true;
      };
      credit_done = set(zero_re, credit->zero_at) && set(full_re, credit->full_at);
    }
  }
  if (!min_done) throw std::runtime_error("check '" + check_id + "' has no `min_ratio = NUMBER` line");
  if (!credit_done)
    throw std::runtime_error("check '" + check_id + "' has no `credit = { zero_at = A, full_at = B }` line");

  std::string out;
  for (const auto& l : lines) out += l + "\n";
  if (!text.empty() && text.back() != '\n') out.pop_back();
  return out;
}

// --- running ------------------------------------------------------------------

}  // namespace cudalab::calibration
