#include "course.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

namespace cudalab {

double CourseSpec::weight(const std::string& lab) const {
  auto it = weights.find(lab);
  return it == weights.end() ? 1.0 : it->second;
}

namespace {

[[noreturn]] void fail(const std::string& source, const toml::node* node, const std::string& what) {
  if (node && node->source().begin.line > 0)
    throw ManifestError(fmt::format("{}:{}: {}", source, node->source().begin.line, what));
  throw ManifestError(fmt::format("{}: {}", source, what));
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
    if (key.str() != "course" && key.str() != "weights" && key.str() != "grading" && key.str() != "release")
      fail(source, &node,
           fmt::format("unknown table '{}' (known: [course], [weights], [grading], [release])", key.str()));
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
    static const std::set<std::string> known = {"seed", "build_timeout_s", "check_timeout_s", "cpu_mode"};
    for (const auto& [key, node] : *g)
      if (!known.count(std::string(key.str())))
        fail(source, &node,
             fmt::format(
                 "[grading]: unknown field '{}' (known: seed, build_timeout_s, check_timeout_s, cpu_mode)",
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
    if (const toml::node* m = g->get("cpu_mode")) {
      auto v = m->value<bool>();
      if (!m->is_boolean() || !v) fail(source, m, "[grading]: cpu_mode must be true or false");
      c.cpu_mode = *v;
    }
  }
  return c;
}

CourseSpec load_course(const std::filesystem::path& path, const std::vector<std::string>& known_labs) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ManifestError(fmt::format("{}: cannot open the course file", path.string()));
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_course(ss.str(), path.string(), known_labs);
}

}  // namespace cudalab
