#include "core/course.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>

#include "core/files.h"

namespace cudalab {

double CourseSpec::weight(const std::string& lab) const {
  auto it = weights.find(lab);
  return it == weights.end() ? 1.0 : it->second;
}

const Assignment* CourseSpec::find_assignment(const std::string& name) const {
  for (const auto& a : assignments)
    if (a.name == name) return &a;
  return nullptr;
}

CourseSpec select_assignment(const CourseSpec& course, const std::string& name) {
  const Assignment* a = course.find_assignment(name);
  if (!a) {
    std::vector<std::string> names;
    for (const auto& x : course.assignments) names.push_back(x.name);
    throw ManifestError(
        names.empty()
            ? fmt::format("{}: no assignment '{}': the course file declares none ([[assignment]] name, labs)",
                          course.file.string(), name)
            : fmt::format("{}: no assignment '{}' (assignments: {})", course.file.string(), name,
                          fmt::join(names, ", ")));
  }
  CourseSpec c = course;
  c.labs = a->labs;
  c.weights.clear();
  for (const auto& lab : a->labs)
    if (auto w = course.weights.find(lab); w != course.weights.end()) c.weights[lab] = w->second;
  c.assignment = a->name;
  return c;
}

namespace {

[[noreturn]] void fail(const std::string& source, const toml::node* node, const std::string& what) {
  if (node && node->source().begin.line > 0)
    throw ManifestError(fmt::format("{}:{}: {}", source, node->source().begin.line, what));
  throw ManifestError(fmt::format("{}: {}", source, what));
}

// A name a command line and a file name can carry as it is.
bool plain_name(const std::string& s) {
  return !s.empty() && s.size() <= 64 && std::all_of(s.begin(), s.end(), [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_';
  });
}

Assignment parse_assignment(const toml::table& t, const std::string& source, const CourseSpec& c) {
  static const std::set<std::string> known = {"name", "labs", "due", "late"};
  for (const auto& [key, node] : t)
    if (!known.count(std::string(key.str())))
      fail(source, &node,
           fmt::format("[[assignment]]: unknown field '{}' (known: name, labs, due, late)", key.str()));
  Assignment a;
  const auto name = t["name"].value<std::string>();
  if (!name || !plain_name(*name))
    fail(source, &t, "[[assignment]]: name must be letters, digits, '-' or '_' (at most 64), e.g. \"hw3\"");
  a.name = *name;
  for (const auto& other : c.assignments)
    if (other.name == a.name) fail(source, &t, fmt::format("[[assignment]]: '{}' is declared twice", a.name));
  const toml::array* labs = t["labs"].as_array();
  if (!labs || labs->empty())
    fail(source, &t, fmt::format("[[assignment]] {}: labs must list at least one lab", a.name));
  for (const auto& el : *labs) {
    const auto id = el.value<std::string>();
    if (!id) fail(source, &el, fmt::format("[[assignment]] {}: labs must be a list of lab names", a.name));
    if (std::find(c.labs.begin(), c.labs.end(), *id) == c.labs.end())
      fail(source, &el,
           fmt::format("[[assignment]] {}: '{}' is not one of the course's labs ({})", a.name, *id,
                       fmt::join(c.labs, ", ")));
    if (std::find(a.labs.begin(), a.labs.end(), *id) != a.labs.end())
      fail(source, &el, fmt::format("[[assignment]] {}: lab '{}' is listed twice", a.name, *id));
    a.labs.push_back(*id);
  }
  // In the course's order, as every view lists labs.
  std::vector<std::string> listed;
  std::swap(listed, a.labs);
  for (const auto& lab : c.labs)
    if (std::find(listed.begin(), listed.end(), lab) != listed.end()) a.labs.push_back(lab);
  if (const toml::node* due = t.get("due")) {
    if (due->is_date_time() || due->is_date()) {
      std::ostringstream os;
      if (due->is_date_time())
        os << *due->as_date_time();
      else
        os << *due->as_date();
      a.due = os.str();
    } else {
      fail(
          source, due,
          fmt::format(
              "[[assignment]] {}: due must be a TOML date-time or date, e.g. due = 2026-12-05T23:59:00-05:00",
              a.name));
    }
    if (due->is_date_time() && !due->as_date_time()->get().offset)
      fail(source, due,
           fmt::format("[[assignment]] {}: due needs its time zone (2026-12-05T23:59:00-05:00, or Z for "
                       "UTC): graders and students may be in different ones",
                       a.name));
  }
  if (const toml::node* late = t.get("late")) {
    const toml::table* l = late->as_table();
    if (!l)
      fail(source, late,
           fmt::format("[[assignment]] {}: late is a table: late = {{ per_day = 0.1, max_days = 3 }}",
                       a.name));
    if (a.due.empty()) fail(source, late, fmt::format("[[assignment]] {}: late needs a due date", a.name));
    // Lateness is counted from a moment: a date alone names none (its
    // start? its end? in whose time zone?).
    if (const toml::node* due = t.get("due"); due && due->is_date())
      fail(source, due,
           fmt::format("[[assignment]] {}: a late rule needs due as a date-time with its time zone "
                       "(due = {}T23:59:00-05:00, or Z for UTC), not a date alone",
                       a.name, a.due));
    for (const auto& [key, node] : *l)
      if (key.str() != "per_day" && key.str() != "max_days")
        fail(source, &node,
             fmt::format("[[assignment]] {}: late: unknown field '{}' (known: per_day, max_days)", a.name,
                         key.str()));
    const auto per_day = (*l)["per_day"].value<double>();
    if (!per_day || *per_day < 0 || *per_day > 1)
      fail(source, l,
           fmt::format("[[assignment]] {}: late.per_day must be a fraction of the points from 0 to 1",
                       a.name));
    const auto max_days = (*l)["max_days"].value<std::int64_t>();
    if (!max_days || *max_days < 0 || *max_days > 365)
      fail(source, l,
           fmt::format("[[assignment]] {}: late.max_days must be a whole number of days from 0 to 365",
                       a.name));
    a.late_per_day = *per_day;
    a.late_max_days = static_cast<int>(*max_days);
  }
  return a;
}

}  // namespace

CourseSpec parse_course(const std::string& text, const std::string& source,
                        const std::vector<std::string>& known_labs) {
  toml::table doc;
  try {
    doc = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    throw ManifestError(fmt::format("{}:{}:{}: not valid TOML: {}", source, e.source().begin.line,
                                    e.source().begin.column, e.description()));
  }
  // [release] is `cudalab release`'s (tools/release.py reads and checks it).
  for (const auto& [key, node] : doc)
    if (key.str() != "course" && key.str() != "weights" && key.str() != "grading" && key.str() != "release" &&
        key.str() != "assignment")
      fail(
          source, &node,
          fmt::format("unknown table '{}' (known: [course], [weights], [grading], [release], [[assignment]])",
                      key.str()));
  CourseSpec c;
  c.file = source;
  const toml::table* course = doc["course"].as_table();
  if (!course) fail(source, nullptr, "missing the [course] table (title, labs)");
  c.title = (*course)["title"].value_or(std::string{});
  // Without a list, every lab there is counts (in folder order): a lab added
  // to labs/ is graded with no change here. With one, only those: a course
  // can keep a lab that is being written out of the grade.
  const toml::node* labs_node = course->get("labs");
  if (!labs_node) c.labs = known_labs;
  const toml::array* labs = labs_node ? labs_node->as_array() : nullptr;
  if (labs_node && (!labs || labs->empty()))
    fail(source, labs_node, "[course]: labs must list at least one lab (or be left out: every lab counts)");
  if (c.labs.empty() && !labs) fail(source, course, "[course]: there are no labs (no labs/*/lab.toml)");
  if (labs)
    for (const auto& el : *labs) {
      auto id = el.value<std::string>();
      if (!id) fail(source, &el, "[course]: labs must be a list of lab names");
      if (std::find(known_labs.begin(), known_labs.end(), *id) == known_labs.end())
        fail(source, &el, fmt::format("[course]: no lab '{}' (labs: {})", *id, fmt::join(known_labs, ", ")));
      if (std::find(c.labs.begin(), c.labs.end(), *id) != c.labs.end())
        fail(source, &el, fmt::format("[course]: lab '{}' is listed twice", *id));
      c.labs.push_back(*id);
    }
  if (const toml::table* w = doc["weights"].as_table()) {
    for (const auto& [key, node] : *w) {
      const std::string lab(key.str());
      if (std::find(c.labs.begin(), c.labs.end(), lab) == c.labs.end())
        fail(source, &node, fmt::format("[weights]: '{}' is not one of the course's labs", lab));
      auto v = node.value<double>();
      if (!node.is_number() || !v || *v < 0)
        fail(source, &node, fmt::format("[weights]: {} must be a number >= 0", lab));
      c.weights[lab] = *v;
    }
  }
  if (const toml::table* g = doc["grading"].as_table()) {
    static const std::set<std::string> known = {"seed", "build_timeout_s", "check_timeout_s",
                                                "words_allowance_s", "cpu_mode"};
    for (const auto& [key, node] : *g)
      if (!known.count(std::string(key.str())))
        fail(source, &node,
             fmt::format("[grading]: unknown field '{}' (known: seed, build_timeout_s, check_timeout_s, "
                         "words_allowance_s, cpu_mode)",
                         key.str()));
    if (const toml::node* s = g->get("seed")) {
      auto v = s->value<std::int64_t>();
      if (!s->is_integer() || !v || *v < 0) fail(source, s, "[grading]: seed must be a whole number >= 0");
      c.seed = std::to_string(*v);
    }
    if (const toml::node* t = g->get("build_timeout_s")) {
      auto v = t->value<double>();
      if (!t->is_number() || !v || *v <= 0)
        fail(source, t, "[grading]: build_timeout_s must be a positive number");
      c.build_timeout_s = *v;
    }
    if (const toml::node* t = g->get("check_timeout_s")) {
      auto v = t->value<double>();
      if (!t->is_number() || !v || *v <= 0)
        fail(source, t, "[grading]: check_timeout_s must be a positive number");
      c.check_timeout_s = *v;
    }
    if (const toml::node* t = g->get("words_allowance_s")) {
      auto v = t->value<double>();
      if (!t->is_number() || !v || *v < 0)
        fail(source, t, "[grading]: words_allowance_s must be a number >= 0 (0: no second looks)");
      c.words_allowance_s = *v;
    }
    if (const toml::node* m = g->get("cpu_mode")) {
      auto v = m->value<bool>();
      if (!m->is_boolean() || !v) fail(source, m, "[grading]: cpu_mode must be true or false");
      c.cpu_mode = *v;
    }
  }
  if (const toml::node* as = doc.get("assignment")) {
    const toml::array* list = as->as_array();
    if (!list || !list->is_array_of_tables())
      fail(source, as,
           "assignments are written [[assignment]] (a table per assignment: name, labs, due, late)");
    for (const auto& node : *list) c.assignments.push_back(parse_assignment(*node.as_table(), source, c));
  }
  return c;
}

CourseSpec load_course(const std::filesystem::path& path, const std::vector<std::string>& known_labs) {
  const std::optional<std::string> text = read_file(path);
  if (!text) throw ManifestError(fmt::format("{}: cannot open the course file", path.string()));
  return parse_course(*text, path.string(), known_labs);
}

}  // namespace cudalab
