#include "cudalab/manifest.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "cudalab/diagnosis.h"

namespace cudalab {

double Credit::fraction(double ratio) const {
  if (ratio >= full_at) return 1.0;
  if (ratio <= zero_at) return 0.0;
  return (ratio - zero_at) / (full_at - zero_at);
}

double CheckSpec::number(const std::string& key) const {
  auto it = numbers.find(key);
  if (it == numbers.end())
    throw ManifestError(
        fmt::format("{}: check '{}' has no number '{}', which its test needs", source, id, key));
  return it->second;
}

const CheckSpec* LabSpec::find_by_name(std::string_view name) const {
  for (const auto& c : checks)
    if (c.name == name) return &c;
  return nullptr;
}

const CheckSpec* LabSpec::find_by_id(std::string_view id) const {
  for (const auto& c : checks)
    if (c.id == id) return &c;
  return nullptr;
}

double LabSpec::total_points() const {
  double sum = 0;
  for (const auto& c : checks) sum += c.points;
  return sum;
}

namespace {

class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void fail(const toml::node* node, const std::string& what) const {
    if (node && node->source().begin.line > 0)
      throw ManifestError(fmt::format("{}:{}: {}", source_, node->source().begin.line, what));
    throw ManifestError(fmt::format("{}: {}", source_, what));
  }

  std::string line_of(const toml::node& node) const {
    return fmt::format("{}:{}", source_, node.source().begin.line);
  }

  std::string string(const toml::table& t, const char* key, const std::string& where, bool required) const {
    const toml::node* n = t.get(key);
    if (!n) {
      if (required) fail(&t, fmt::format("{}: missing '{}'", where, key));
      return {};
    }
    auto s = n->value<std::string>();
    if (!s || s->empty()) fail(n, fmt::format("{}: '{}' must be a non-empty string", where, key));
    return *s;
  }

  std::optional<double> number(const toml::table& t, const char* key, const std::string& where) const {
    const toml::node* n = t.get(key);
    if (!n) return std::nullopt;
    if (!n->is_number()) fail(n, fmt::format("{}: '{}' must be a number", where, key));
    return n->value<double>();
  }

  std::vector<std::string> strings(const toml::table& t, const char* key, const std::string& where) const {
    std::vector<std::string> out;
    const toml::node* n = t.get(key);
    if (!n) return out;
    const toml::array* a = n->as_array();
    if (!a) fail(n, fmt::format("{}: '{}' must be a list of strings", where, key));
    for (const auto& el : *a) {
      auto s = el.value<std::string>();
      if (!s || s->empty())
        fail(&el, fmt::format("{}: '{}' must be a list of non-empty strings", where, key));
      out.push_back(*s);
    }
    return out;
  }

 private:
  std::string source_;
};

bool plain_name(const std::string& s) {
  return !s.empty() && s[0] != '.' && s.find('/') == std::string::npos && s.find('\\') == std::string::npos;
}

bool valid_id(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
  });
}

const std::set<std::string> kLabKeys = {"title",     "student_files", "tests", "references",
                                        "timeout_s", "launchers",     "forbid"};

bool identifier(const std::string& s) {
  return !s.empty() && !(s[0] >= '0' && s[0] <= '9') && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}
const std::set<std::string> kCheckKeys = {"id",       "name",      "kind",   "points", "visibility",
                                          "requires", "timeout_s", "credit", "judge",  "explain"};
const std::set<std::string> kExplainCauses = {"conflicts", "uncoalesced", "traffic", "launch"};
const std::set<std::string> kVisibility = {"visible", "hidden", "after_due_date", "after_published"};

}  // namespace

LabSpec parse_lab(std::string_view text, const std::string& source, const std::string& lab_id) {
  toml::table doc;
  try {
    doc = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    throw ManifestError(fmt::format("{}:{}:{}: not valid TOML: {}", source, e.source().begin.line,
                                    e.source().begin.column, e.description()));
  }
  Reader rd(source);
  LabSpec lab;
  lab.id = lab_id;
  lab.file = source;

  const toml::table* l = doc["lab"].as_table();
  if (!l) rd.fail(doc.get("lab"), "missing the [lab] table (title, student_files, tests)");
  for (const auto& [key, node] : *l)
    if (!kLabKeys.count(std::string(key.str())))
      rd.fail(&node, fmt::format("[lab]: unknown field '{}' (known: title, student_files, tests, "
                                 "references, launchers, forbid, timeout_s)",
                                 key.str()));
  lab.title = rd.string(*l, "title", "[lab]", true);
  lab.student_files = rd.strings(*l, "student_files", "[lab]");
  lab.tests = rd.strings(*l, "tests", "[lab]");
  lab.references = rd.strings(*l, "references", "[lab]");
  if (lab.student_files.empty()) rd.fail(l, "[lab]: student_files must name at least one file");
  if (lab.tests.empty()) rd.fail(l, "[lab]: tests must name at least one file");
  for (const auto* list : {&lab.student_files, &lab.tests, &lab.references})
    for (const auto& f : *list)
      if (!plain_name(f))
        rd.fail(l, fmt::format("[lab]: '{}' must be a plain file or lab name, without folders", f));
  // The global functions the tests call in the student files: the only
  // global names a submission may define besides its kernels (grader/run/policy.h).
  lab.launchers = rd.strings(*l, "launchers", "[lab]");
  for (const auto& f : lab.launchers)
    if (!identifier(f))
      rd.fail(l->get("launchers"),
              fmt::format("[lab]: launchers: '{}' must be the name of a global C++ function", f));
  // Instruction classes the lab's lesson excludes (grader/run/policy.h scans for them).
  lab.forbid = rd.strings(*l, "forbid", "[lab]");
  for (const auto& f : lab.forbid)
    if (std::find(kForbiddenClasses.begin(), kForbiddenClasses.end(), f) == kForbiddenClasses.end())
      rd.fail(l->get("forbid"), fmt::format("[lab]: forbid: unknown instruction class '{}' (known: {})", f,
                                            fmt::join(kForbiddenClasses, ", ")));
  if (auto t = rd.number(*l, "timeout_s", "[lab]")) {
    if (*t <= 0) rd.fail(l->get("timeout_s"), "[lab]: timeout_s must be positive");
    lab.timeout_s = *t;
  }

  const toml::array* checks = doc["check"].as_array();
  if (!checks || checks->empty()) rd.fail(doc.get("check"), "no checks: add at least one [[check]] table");
  for (const auto& [key, node] : doc)
    if (key.str() != "lab" && key.str() != "check" && key.str() != "explain" && key.str() != "diagnosis")
      rd.fail(&node,
              fmt::format("unknown table '{}' (known: [lab], [[check]], [explain], [diagnosis])", key.str()));
  // The lab's own words for the fix of each cause a correctness check's
  // diagnosis can name (cudalab/diagnosis.h).
  if (const toml::node* d = doc.get("diagnosis")) {
    const toml::table* t = d->as_table();
    if (!t) rd.fail(d, "[diagnosis] must be a table");
    for (const auto& [key, node] : *t) {
      const std::string k(key.str());
      const auto cause = parse_cause(k);
      if (!cause || *cause == Cause::none || *cause == Cause::unrecorded)
        rd.fail(&node, fmt::format("[diagnosis]: unknown cause '{}' (known: {})", k, spellings_of_causes()));
      if (!diagnosis::takes_words(*cause))
        rd.fail(&node, fmt::format("[diagnosis]: the diagnosis of '{}' states facts and names no fix that a "
                                   "lab's words could replace",
                                   k));
      lab.diagnosis_words[*cause] = rd.string(*t, k.c_str(), "[diagnosis]", true);
    }
  }
  // The lab's own words for each cause a slow kernel's diagnosis can name
  // (grader/run/explain.h): what the fix is in this lab's terms.
  if (const toml::node* e = doc.get("explain")) {
    const toml::table* t = e->as_table();
    if (!t) rd.fail(e, "[explain] must be a table");
    for (const auto& [key, node] : *t) {
      const std::string k(key.str());
      if (!kExplainCauses.count(k))
        rd.fail(&node,
                fmt::format("[explain]: unknown cause '{}' (known: {})", k, fmt::join(kExplainCauses, ", ")));
      lab.explain_words[k] = rd.string(*t, k.c_str(), "[explain]", true);
    }
  }

  for (std::size_t i = 0; i < checks->size(); ++i) {
    const toml::node& cn = *checks->get(i);
    const toml::table* c = cn.as_table();
    if (!c) rd.fail(&cn, fmt::format("check #{} must be a table", i + 1));
    CheckSpec spec;
    spec.source = rd.line_of(cn);
    const std::string where0 = fmt::format("check #{}", i + 1);
    spec.id = rd.string(*c, "id", where0, true);
    const std::string where = fmt::format("check '{}'", spec.id);
    if (!valid_id(spec.id)) rd.fail(c->get("id"), where + ": id may use only a-z, 0-9, '-' and '_'");
    if (lab.find_by_id(spec.id)) rd.fail(c->get("id"), where + ": a second check has this id");
    spec.name = rd.string(*c, "name", where, true);
    // The name is the Catch2 test case name, passed as a filter: Catch2 reads
    // these characters as filter syntax.
    if (spec.name.find_first_of(",[]*\\\"") != std::string::npos || spec.name[0] == '~' ||
        spec.name[0] == '-' || spec.name[0] == ' ')
      rd.fail(c->get("name"), where + ": name may not contain , [ ] * \\ \" or start with ~, - or a space");
    if (lab.find_by_name(spec.name)) rd.fail(c->get("name"), where + ": a second check has this name");
    const std::string kind = rd.string(*c, "kind", where, true);
    const auto parsed_kind = parse_check_kind(kind);
    if (!parsed_kind) rd.fail(c->get("kind"), where + ": kind must be one of " + spellings_of_check_kinds());
    spec.kind = parsed_kind.value_or(CheckKind::correctness);
    auto points = rd.number(*c, "points", where);
    if (!points) rd.fail(c, where + ": missing 'points'");
    if (*points < 0) rd.fail(c->get("points"), where + ": points must be >= 0");
    spec.points = *points;
    if (c->get("judge")) {
      spec.judge = rd.string(*c, "judge", where, true);
      if (spec.judge != "values" && spec.judge != "memory")
        rd.fail(c->get("judge"), where + ": judge must be \"values\" or \"memory\"");
      if (spec.kind != CheckKind::correctness)
        rd.fail(c->get("judge"), where +
                                     ": judge is for correctness checks (a speed check is judged by the "
                                     "correctness checks it requires)");
    }
    if (c->get("visibility")) {
      spec.visibility = rd.string(*c, "visibility", where, true);
      if (!kVisibility.count(spec.visibility))
        rd.fail(c->get("visibility"),
                where + ": visibility must be visible, hidden, after_due_date or after_published");
    }
    if (auto t = rd.number(*c, "timeout_s", where)) {
      if (*t <= 0) rd.fail(c->get("timeout_s"), where + ": timeout_s must be positive");
      spec.timeout_s = *t;
    }
    spec.required = rd.strings(*c, "requires", where);
    for (const auto& r : spec.required)
      if (!lab.find_by_id(r))
        rd.fail(c->get("requires"),
                fmt::format("{}: requires '{}', which is not an earlier check's id", where, r));
    if (c->get("explain")) {
      spec.explain = rd.string(*c, "explain", where, true);
      const CheckSpec* by = lab.find_by_id(spec.explain);
      if (spec.kind != CheckKind::speed)
        rd.fail(c->get("explain"), where + ": explain is for speed checks (what explains a kernel too slow)");
      // Its own id: the check's counting run (cudalab::traffic_of), one call
      // at a small shape, where its correctness checks take long in CPU mode.
      if (spec.explain != spec.id && (!by || by->kind != CheckKind::correctness))
        rd.fail(c->get("explain"),
                fmt::format("{}: explain = '{}', which is neither an earlier correctness check's id nor "
                            "this check's own",
                            where, spec.explain));
    }
    if (spec.kind == CheckKind::speed && spec.required.empty())
      rd.fail(c, where +
                     ": a speed check must list the correctness checks it requires (requires = [...]): "
                     "a speed measured on wrong output is meaningless");
    if (const toml::node* cr = c->get("credit")) {
      const toml::table* ct = cr->as_table();
      if (!ct) rd.fail(cr, where + ": credit must be a table { zero_at = ..., full_at = ... }");
      auto z = rd.number(*ct, "zero_at", where + ": credit");
      auto f = rd.number(*ct, "full_at", where + ": credit");
      if (!z || !f || *f <= *z || ct->size() != 2)
        rd.fail(cr, where + ": credit must be { zero_at = A, full_at = B } with B > A");
      spec.credit = Credit{*z, *f};
    }
    for (const auto& [key, node] : *c) {
      const std::string k(key.str());
      if (kCheckKeys.count(k)) continue;
      if (!node.is_number())
        rd.fail(&node, fmt::format("{}: unknown field '{}' (thresholds must be numbers)", where, k));
      spec.numbers[k] = *node.value<double>();
    }
    lab.checks.push_back(std::move(spec));
  }
  return lab;
}

LabSpec load_lab(const std::filesystem::path& lab_toml) {
  std::ifstream in(lab_toml, std::ios::binary);
  if (!in) throw ManifestError(fmt::format("{}: cannot open the lab manifest", lab_toml.string()));
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_lab(ss.str(), lab_toml.string(), lab_toml.parent_path().filename().string());
}

}  // namespace cudalab
