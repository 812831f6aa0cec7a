#include "authoring/calibration_table.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <regex>
#include <sstream>

#include "cudalab/vocabulary.h"
#include "cudalab/vocabulary_fmt.h"

namespace cudalab::calibration {

const TableEntry* Table::find(const std::string& lab, const std::string& check) const {
  for (const auto& e : entries)
    if (e.lab == lab && e.check == check) return &e;
  return nullptr;
}

void Table::put(TableEntry e) {
  entries.erase(std::remove_if(entries.begin(), entries.end(),
                               [&](const TableEntry& x) { return x.lab == e.lab && x.check == e.check; }),
                entries.end());
  entries.push_back(std::move(e));
  std::stable_sort(entries.begin(), entries.end(), [](const TableEntry& a, const TableEntry& b) {
    return std::tie(a.lab, a.check) < std::tie(b.lab, b.check);
  });
}

std::pair<std::string, std::string> split_gpu_label(const std::string& label) {
  static const std::regex re(R"(^(.*?) \((sm_[0-9]+)\)$)");
  std::smatch m;
  if (std::regex_match(label, m, re)) return {m[1].str(), m[2].str()};
  return {label, ""};
}

std::string table_file_name(const std::string& gpu, const std::string& sm) {
  std::string slug;
  for (const char c : gpu + " " + sm) {
    if (std::isalnum(static_cast<unsigned char>(c)))
      slug += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else if (!slug.empty() && slug.back() != '-')
      slug += '-';
  }
  while (!slug.empty() && slug.back() == '-') slug.pop_back();
  // "sm-90" reads as two words: the capability is one.
  if (const auto at = slug.rfind("-sm-"); at != std::string::npos && !sm.empty()) slug.erase(at + 3, 1);
  return (slug.empty() ? std::string("gpu") : slug) + ".toml";
}

// --- reading ------------------------------------------------------------------

namespace {

[[noreturn]] void bad(const std::string& source, const toml::node* at, const std::string& what) {
  throw ManifestError(fmt::format("{}:{}: {}", source,
                                  at ? std::to_string(at->source().begin.line) : std::string("?"), what));
}

std::string need_string(const toml::table& t, const char* key, const std::string& source) {
  const auto v = t[key].value<std::string>();
  if (!v) bad(source, &t, fmt::format("'{}' must be a string", key));
  return *v;
}

double need_number(const toml::table& t, const char* key, const std::string& source) {
  const auto v = t[key].value<double>();
  if (!v || !std::isfinite(*v)) bad(source, &t, fmt::format("'{}' must be a number", key));
  return *v;
}

std::vector<double> numbers(const toml::node_view<const toml::node>& n, const char* key,
                            const std::string& source) {
  const toml::array* a = n.as_array();
  if (!a) bad(source, n.node(), fmt::format("'{}' must be an array of numbers", key));
  std::vector<double> out;
  for (const auto& x : *a) {
    const auto v = x.value<double>();
    if (!v || !std::isfinite(*v)) bad(source, &x, fmt::format("'{}' must hold numbers only", key));
    out.push_back(*v);
  }
  return out;
}

}  // namespace

Table parse_table(const std::string& text, const std::string& source) {
  toml::table doc;
  try {
    doc = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    throw ManifestError(
        fmt::format("{}:{}: not valid TOML: {}", source, e.source().begin.line, e.description()));
  }
  Table t;
  const toml::table* gpu = doc["gpu"].as_table();
  if (!gpu) bad(source, nullptr, "missing the [gpu] table (name, sm)");
  t.gpu = need_string(*gpu, "name", source);
  t.sm = (*gpu)["sm"].value_or(std::string{});
  const toml::array* checks = doc["check"].as_array();
  if (!checks) return t;
  for (const auto& node : *checks) {
    const toml::table* c = node.as_table();
    if (!c) bad(source, &node, "each [[check]] must be a table");
    TableEntry e;
    e.lab = need_string(*c, "lab", source);
    e.check = need_string(*c, "id", source);
    e.date = need_string(*c, "date", source);
    e.runs = static_cast<int>((*c)["runs"].value_or(int64_t{0}));
    if (e.runs < 1) bad(source, c, fmt::format("{} / {}: 'runs' must be at least 1", e.lab, e.check));
    e.device = (*c)["device"].value_or(std::string{});
    e.nvcc = (*c)["nvcc"].value_or(std::string{});
    e.source = (*c)["source"].value_or(std::string{});
    if (const toml::table* m = (*c)["margins"].as_table()) {
      e.margins.correct = need_number(*m, "correct", source);
      e.margins.foil = need_number(*m, "foil", source);
      e.margins.full_credit = need_number(*m, "full_credit", source);
    } else {
      bad(source, c,
          fmt::format("{} / {}: missing margins = {{ correct, foil, full_credit }}", e.lab, e.check));
    }
    e.min_ratio = need_number(*c, "min_ratio", source);
    if (const toml::table* cr = (*c)["credit"].as_table())
      e.credit = Credit{need_number(*cr, "zero_at", source), need_number(*cr, "full_at", source)};
    const std::vector<double> range = numbers((*c)["allowed_min_ratio"], "allowed_min_ratio", source);
    if (range.size() != 2) bad(source, c, "'allowed_min_ratio' must be [lowest, highest]");
    e.lo = range[0];
    e.hi = range[1];
    e.margin = (*c)["margin"].value_or(std::string{});
    const toml::array* vs = (*c)["variants"].as_array();
    if (!vs || vs->empty())
      bad(source, c, fmt::format("{} / {}: 'variants' must list the variants timed", e.lab, e.check));
    for (const auto& vn : *vs) {
      const toml::table* v = vn.as_table();
      if (!v) bad(source, &vn, "each variant must be a table { name, expect, ratios, ... }");
      Measured m;
      m.variant = need_string(*v, "name", source);
      // A variant timed for a speed check is a correct alternative or a foil.
      const std::optional<Verdict> expect = parse_verdict(need_string(*v, "expect", source));
      if (expect != Verdict::pass && expect != Verdict::fail)
        bad(source, v,
            fmt::format("{}: expect must be \"{}\" or \"{}\"", m.variant, Verdict::pass, Verdict::fail));
      m.correct = expect == Verdict::pass;
      m.ratios = numbers((*v)["ratios"], "ratios", source);
      if (const auto n = (*v)["max_noise_pct"].value<double>()) m.noise = {*n};
      m.problem = (*v)["no_ratio"].value_or(std::string{});
      m.runs = e.runs;
      if (!m.ratios.empty()) {
        const double median = need_number(*v, "median", source);
        // The median as written: of the ratios, rounded like them.
        if (std::fabs(median - m.median()) > 1.5e-4)
          bad(source, v,
              fmt::format("{}: median {} is not the median of its ratios ({:.4f})", m.variant, median,
                          m.median()));
      }
      e.variants.push_back(std::move(m));
    }
    t.put(std::move(e));
  }
  return t;
}

Table load_table(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ManifestError(fmt::format("{}: cannot open the calibration table", path.string()));
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_table(ss.str(), path.string());
}

// --- writing ------------------------------------------------------------------

namespace {

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\')
      out += std::string("\\") + c;
    else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(c));
    else
      out += c;
  }
  return out + "\"";
}

// A ratio to 4 decimals, trailing zeros dropped down to 3: what a record or
// calibrate's own log gives, no more digits than that.
std::string ratio_text(double v) {
  std::string s = fmt::format("{:.4f}", v);
  if (s.back() == '0') s.pop_back();
  return s;
}

}  // namespace

std::string format_table(const Table& t) {
  const std::string label = t.sm.empty() ? t.gpu : fmt::format("{} ({})", t.gpu, t.sm);
  std::string out = fmt::format(
      "# Calibration of the speed checks on one GPU: {}.\n"
      "# Per lab and speed check: what `cudalab calibrate` timed (each variant's\n"
      "# ratio = reference time / variant time, one per run, each run its own\n"
      "# process; expect \"pass\": the reference and the correct alternatives,\n"
      "# \"fail\": the mistakes the check is about) and the thresholds its rules\n"
      "# derived (docs/calibration.md). Written by `cudalab calibrate --write`,\n"
      "# which replaces the checks it times; tests/unit/grader/test_calibration_tables.cpp\n"
      "# checks each lab.toml against it.\n\n"
      "[gpu]\nname = {}\nsm = {}\n",
      label, quoted(t.gpu), quoted(t.sm));
  for (const auto& e : t.entries) {
    out += fmt::format("\n[[check]]\nlab = {}\nid = {}\ndate = {}\nruns = {}\n", quoted(e.lab),
                       quoted(e.check), quoted(e.date), e.runs);
    if (!e.device.empty()) out += fmt::format("device = {}\n", quoted(e.device));
    if (!e.nvcc.empty()) out += fmt::format("nvcc = {}\n", quoted(e.nvcc));
    if (!e.source.empty()) out += fmt::format("source = {}\n", quoted(e.source));
    out += fmt::format("margins = {{ correct = {}, foil = {}, full_credit = {} }}\n",
                       format_number(e.margins.correct), format_number(e.margins.foil),
                       format_number(e.margins.full_credit));
    out += fmt::format("min_ratio = {}\n", format_number(e.min_ratio));
    if (e.credit)
      out += fmt::format("credit = {{ zero_at = {}, full_at = {} }}\n", format_number(e.credit->zero_at),
                         format_number(e.credit->full_at));
    out += fmt::format("allowed_min_ratio = [{:.3f}, {:.3f}]\n", e.lo, e.hi);
    if (!e.margin.empty()) out += fmt::format("margin = {}\n", quoted(e.margin));
    out += "variants = [\n";
    for (const auto& m : e.variants) {
      std::vector<std::string> ratios;
      for (double r : m.ratios) ratios.push_back(ratio_text(r));
      out += fmt::format("  {{ name = {}, expect = \"{}\"", quoted(m.variant),
                         m.correct ? Verdict::pass : Verdict::fail);
      if (!m.ratios.empty()) out += fmt::format(", median = {}", ratio_text(m.median()));
      out += fmt::format(", ratios = [{}]", fmt::join(ratios, ", "));
      if (!m.noise.empty())
        out += fmt::format(", max_noise_pct = {:.2f}", *std::max_element(m.noise.begin(), m.noise.end()));
      if (!m.problem.empty()) out += fmt::format(", no_ratio = {}", quoted(m.problem));
      out += " },\n";
    }
    out += "]\n";
  }
  return out;
}

TableEntry make_entry(const std::string& lab, const std::string& check, const std::vector<Measured>& measured,
                      const Proposal& p, const Margins& margins) {
  TableEntry e;
  e.lab = lab;
  e.check = check;
  e.margins = margins;
  e.min_ratio = p.min_ratio;
  e.credit = p.credit;
  e.lo = p.lo;
  e.hi = p.hi;
  e.margin = p.margins_line();
  for (const auto& m : measured) {
    Measured v = m;
    v.verdicts.clear();  // the verdicts under the thresholds of the time: not the calibration's
    // Rounded as the file writes them, so that the entry equals its reading.
    for (double& r : v.ratios) r = std::round(r * 1e4) / 1e4;
    if (!v.noise.empty())
      v.noise = {std::round(*std::max_element(v.noise.begin(), v.noise.end()) * 100) / 100};
    e.runs = std::max(e.runs, v.runs);
    e.variants.push_back(std::move(v));
  }
  return e;
}

// --- the rules against a lab.toml ---------------------------------------------

std::vector<std::string> threshold_problems(const TableEntry& e, double min_ratio,
                                            const std::optional<Credit>& credit) {
  std::vector<std::string> out;
  const Proposal p = propose(e.variants, min_ratio, credit, e.margins);
  if (!p.feasible) {
    out.push_back(p.why_not);
    return out;
  }
  if (p.min_changed)
    out.push_back(fmt::format(
        "min_ratio {} is outside [{:.3f}, {:.3f}], the range the rules allow with these measurements "
        "(at least {:.0f}% below the slowest correct run, {} at {:.3f}{}): they would move it to {}",
        format_number(min_ratio), p.lo, p.hi, 100 * e.margins.correct, p.slowest_correct,
        p.slowest_correct_ratio,
        p.fastest_foil.empty()
            ? std::string()
            : fmt::format(", and the fastest foil run, {} at {:.3f}, at least {:.0f}% below it",
                          p.fastest_foil, p.fastest_foil_ratio, 100 * e.margins.foil),
        format_number(p.min_ratio)));
  if (credit && p.credit && p.credit_changed)
    out.push_back(fmt::format(
        "credit {} to {} breaks the rules with these measurements (full credit for every correct run, at "
        "least "
        "{:.0f}% below the slowest, {} at {:.3f}, and not below min_ratio; none at or below the fastest "
        "foil{}): they would move it to {} to {}",
        format_number(credit->zero_at), format_number(credit->full_at), 100 * e.margins.full_credit,
        p.slowest_correct, p.slowest_correct_ratio,
        p.fastest_foil.empty() ? std::string()
                               : fmt::format(" run, {} at {:.3f}", p.fastest_foil, p.fastest_foil_ratio),
        format_number(p.credit->zero_at), format_number(p.credit->full_at)));
  return out;
}

}  // namespace cudalab::calibration
