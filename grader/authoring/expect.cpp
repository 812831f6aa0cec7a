#include "authoring/expect.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <set>
#include <sstream>

#include "cudalab/manifest.h"
#include "views/report.h"

namespace cudalab {

bool contains_phrase(const std::string& haystack, const std::string& phrase) {
  auto lower = [](std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
  };
  return lower(haystack).find(lower(phrase)) != std::string::npos;
}

const Expectation* ExpectFile::find(const std::string& check_id) const {
  for (const auto& e : expectations)
    if (e.check_id == check_id) return &e;
  return nullptr;
}

ExpectFile ExpectFile::for_cpu_mode(const std::vector<std::string>& speed_checks) const {
  ExpectFile out = *this;
  out.cpu_overrides.clear();
  for (auto& e : out.expectations)
    if (std::find(speed_checks.begin(), speed_checks.end(), e.check_id) != speed_checks.end())
      e = {e.check_id, Verdict::not_run, "", "", std::nullopt, e.explains};
  for (const auto& o : cpu_overrides) {
    bool replaced = false;
    for (auto& e : out.expectations)
      if (e.check_id == o.check_id) e = o, replaced = true;
    if (!replaced) out.expectations.push_back(o);
  }
  return out;
}

ExpectFile parse_expect(const std::string& text, const std::string& source) {
  toml::table doc;
  try {
    doc = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    throw ManifestError(
        fmt::format("{}:{}: not valid TOML: {}", source, e.source().begin.line, e.description()));
  }
  ExpectFile f;
  f.description = doc["description"].value_or(std::string{});
  f.base = doc["base"].value_or(std::string{"solutions"});
  if (f.base != "solutions" && f.base != "labs")
    throw ManifestError(fmt::format("{}: base must be \"solutions\" or \"labs\"", source));
  const toml::table* ex = doc["expect"].as_table();
  if (!ex || ex->empty()) throw ManifestError(fmt::format("{}: missing the [expect] table", source));
  auto read = [&](const toml::table& table, std::vector<Expectation>& into) {
    for (const auto& [key, node] : table) {
      Expectation e;
      e.check_id = std::string(key.str());
      std::string verdict;
      if (auto s = node.value<std::string>()) {
        verdict = *s;
      } else if (const toml::table* t = node.as_table()) {
        verdict = (*t)["verdict"].value_or(std::string{});
        e.says = (*t)["says"].value_or(std::string{});
        e.leads = (*t)["leads"].value_or(std::string{});
        e.explains = (*t)["explains"].value_or(std::string{});
        if (const auto c = (*t)["cause"].value<std::string>()) {
          e.cause = parse_cause(*c);
          if (!e.cause)
            throw ManifestError(fmt::format("{}:{}: {}: cause \"{}\" is not one of {}", source,
                                            node.source().begin.line, e.check_id, *c, spellings_of_causes()));
        }
      }
      // A grade's verdicts only: skipped and running are not an expectation.
      const auto parsed = parse_verdict(verdict);
      if (parsed) e.verdict = *parsed;
      if (!parsed || *parsed == Verdict::skipped || *parsed == Verdict::running)
        throw ManifestError(
            fmt::format("{}:{}: {}: verdict must be one of pass, fail, timeout, crash, not_run, error",
                        source, node.source().begin.line, e.check_id));
      into.push_back(e);
    }
  };
  read(*ex, f.expectations);
  if (const toml::table* cpu = doc["expect_cpu"].as_table()) read(*cpu, f.cpu_overrides);
  return f;
}

std::string message_problem(const std::vector<std::string>& failures) {
  std::vector<std::string> lines;
  for (const auto& f : failures) {
    std::istringstream in(f);
    for (std::string line; std::getline(in, line);) {
      const auto start = line.find_first_not_of(" \t");
      if (start != std::string::npos) lines.push_back(line.substr(start));
    }
  }
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    if (l.rfind("Diagnosis:", 0) == 0 && i > 0)
      return fmt::format("a Diagnosis line that is not the first line: {}", l.substr(0, 120));
    if (l.find("(below)") != std::string::npos && i + 1 == lines.size())
      return fmt::format("\"(below)\" with nothing below it: {}", l.substr(0, 120));
    // A sanitizer's own lines: its frame prefix, an offset into a kernel, its summary.
    const auto offset = l.find("+0x");
    if (l.rfind("=========", 0) == 0 || l.find("hazards displayed") != std::string::npos ||
        (offset != std::string::npos && offset + 3 < l.size() &&
         std::isxdigit(static_cast<unsigned char>(l[offset + 3]))))
      return fmt::format("a sanitizer's raw output, not folded: {}", l.substr(0, 120));
  }
  return "";
}

std::string leading_cause_problem(const std::vector<std::string>& failures, const std::string& leads) {
  int causes = 0;
  for (const auto& f : failures)
    for (const std::string marker : {"Diagnosis:", "Likely cause:"})
      for (auto at = f.find(marker); at != std::string::npos; at = f.find(marker, at + 1)) ++causes;
  if (causes > 1) return fmt::format("the check shows {} causes; a student should read one", causes);
  if (std::string p = message_problem(failures); !p.empty()) return p;
  if (leads.empty()) return "";
  const std::string lead = leading_line(failures);
  if (lead.empty()) return fmt::format("expected a lead that says \"{}\", found no message", leads);
  if (!contains_phrase(lead, leads))
    return fmt::format("expected the lead to say \"{}\", it says: {}", leads, lead.substr(0, 200));
  return "";
}

ExpectFile load_expect(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw ManifestError(fmt::format("{}: cannot open", path.string()));
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_expect(ss.str(), path.string());
}

}  // namespace cudalab
