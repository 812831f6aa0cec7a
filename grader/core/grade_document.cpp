#include "core/grade_document.h"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "core/files.h"
#include "core/submission_grade.h"

namespace cudalab {

GradeDocument grade_document(const SubmissionGrade& g, const std::string& grader_version) {
  GradeDocument d;
  d.id = g.id;
  d.assignment = g.assignment;
  d.error = g.error;
  d.ignored = g.ignored;
  d.notes = g.notes;
  d.score = g.score, d.max_score = g.max_score, d.seconds = g.seconds;
  d.gpu = g.gpu, d.cpu_mode = g.cpu_mode, d.provisional = g.provisional;
  d.gpu_line = g.gpu_line;
  d.grader_version = grader_version;
  d.submission = g.submission;
  d.late = g.late;
  for (const auto& lab : g.labs) {
    GradedLab l;
    l.id = lab.spec->id;
    l.title = lab.spec->title;
    l.weight = lab.weight;
    l.status = lab.status;
    l.message = lab.message;
    l.points = lab.points, l.max_points = lab.max_points;
    for (std::size_t i = 0; i < lab.results.size() && i < lab.spec->checks.size(); ++i) {
      l.checks.push_back({lab.spec->checks[i], lab.results[i].result(),
                          i < lab.scores.size() ? lab.scores[i] : CheckScore{}});
      GradedCheck& c = l.checks.back();
      c.result.cause = cause_of(c.result, c.score.speed.has_value());
    }
    d.labs.push_back(std::move(l));
  }
  return d;
}

Cause cause_of(const CheckResult& r, bool timed) {
  const bool failed = r.verdict == Verdict::fail || r.verdict == Verdict::timeout ||
                      r.verdict == Verdict::crash || r.verdict == Verdict::error;
  if (!failed) return Cause::none;
  if (r.cause != Cause::none) return r.cause;
  if (r.verdict == Verdict::timeout) return r.kind == CheckKind::speed ? Cause::slow : Cause::timeout;
  if (r.verdict == Verdict::crash) return Cause::crash;
  if (r.kind == CheckKind::speed && r.verdict == Verdict::fail && timed) return Cause::slow;
  return Cause::none;
}

namespace {

nlohmann::json check_json(const GradedCheck& c) {
  nlohmann::json measurements = nlohmann::json::array();
  for (const auto& m : c.result.measurements)
    measurements.push_back({{"key", m.key}, {"value", m.value}, {"unit", m.unit}});
  nlohmann::json j = {
      {"id", c.spec.id},
      {"name", c.spec.name},
      {"kind", spelling(c.spec.kind)},
      {"visibility", c.spec.visibility},
      {"worth", c.spec.points},
      {"requires", c.spec.required},
      {"thresholds", c.spec.numbers},
      {"credit", c.spec.credit ? nlohmann::json{{"zero_at", c.spec.credit->zero_at},
                                                {"full_at", c.spec.credit->full_at}}
                               : nlohmann::json()},
      {"verdict", spelling(c.result.verdict)},
      {"cause", spelling(c.result.cause)},
      {"points", c.score.points},
      {"max_points", c.score.max_points},
      {"why", c.score.why},
      {"gated", c.score.gated},
      {"failures", c.result.failures},
      {"notes", c.result.notes},
      {"measurements", measurements},
      {"output", c.result.output},
      {"seconds", c.result.seconds},
  };
  if (c.score.speed) {
    const SpeedOutcome& s = *c.score.speed;
    j["speed"] = {{"ratio", s.ratio},
                  {"pass_at", s.pass_at ? nlohmann::json(*s.pass_at) : nlohmann::json()},
                  {"zero_at", s.credit ? nlohmann::json(s.credit->zero_at) : nlohmann::json()},
                  {"full_at", s.credit ? nlohmann::json(s.credit->full_at) : nlohmann::json()}};
  }
  return j;
}

// Reads fields of one object, naming the path of the first bad one.
class Reader {
 public:
  Reader(const nlohmann::json& j, std::string where, std::string& error)
      : j_(j), where_(std::move(where)), error_(error) {
    if (!j_.is_object()) fail("", "must be an object");
  }
  bool ok() const { return error_.empty(); }
  const std::string& where() const { return where_; }

  std::string str(const char* key) {
    const nlohmann::json* v = get(key);
    if (!v) return {};
    if (!v->is_string()) return fail(key, "must be a string"), std::string{};
    return v->get<std::string>();
  }
  double num(const char* key) {
    const nlohmann::json* v = get(key);
    if (!v) return 0;
    if (!v->is_number()) return fail(key, "must be a number"), 0.0;
    return v->get<double>();
  }
  bool boolean(const char* key) {
    const nlohmann::json* v = get(key);
    if (!v) return false;
    if (!v->is_boolean()) return fail(key, "must be true or false"), false;
    return v->get<bool>();
  }
  std::vector<std::string> strings(const char* key) {
    std::vector<std::string> out;
    const nlohmann::json* v = get(key);
    if (!v) return out;
    if (!v->is_array()) return fail(key, "must be an array of strings"), out;
    for (const auto& s : *v) {
      if (!s.is_string()) return fail(key, "must be an array of strings"), out;
      out.push_back(s.get<std::string>());
    }
    return out;
  }
  const nlohmann::json& array(const char* key) {
    static const nlohmann::json empty = nlohmann::json::array();
    const nlohmann::json* v = get(key);
    if (!v) return empty;
    if (!v->is_array()) return fail(key, "must be an array"), empty;
    return *v;
  }
  const nlohmann::json* optional(const char* key) const {
    return ok() && j_.is_object() && j_.contains(key) && !j_[key].is_null() ? &j_[key] : nullptr;
  }
  void fail(const std::string& key, const std::string& what) {
    if (error_.empty()) error_ = fmt::format("{}{}{} {}", where_, key.empty() ? "" : ".", key, what);
  }

 private:
  const nlohmann::json* get(const char* key) {
    if (!ok()) return nullptr;
    if (!j_.contains(key)) return fail(key, "is missing"), nullptr;
    return &j_[key];
  }
  const nlohmann::json& j_;
  std::string where_;
  std::string& error_;
};

template <typename E>
E enum_field(Reader& r, const char* key, std::optional<E> (*parse)(std::string_view),
             const std::string& allowed) {
  const std::string s = r.str(key);
  const auto e = parse(s);
  if (!e && r.ok()) r.fail(key, fmt::format("is \"{}\", not one of {}", s, allowed));
  return e.value_or(E{});
}

GradedCheck read_check(const nlohmann::json& j, const std::string& where, int version, std::string& error) {
  const bool v1 = version == 1;
  GradedCheck c;
  Reader r(j, where, error);
  c.spec.id = c.result.id = r.str("id");
  c.spec.name = c.result.name = r.str("name");
  c.spec.kind = c.result.kind = enum_field(r, "kind", parse_check_kind, spellings_of_check_kinds());
  c.spec.visibility = r.str("visibility");
  c.spec.points = r.num("worth");
  c.spec.required = r.strings("requires");
  if (const nlohmann::json* t = r.optional("thresholds")) {
    if (!t->is_object()) r.fail("thresholds", "must be an object of numbers");
    for (const auto& [k, v] : t->items()) {
      if (!v.is_number())
        r.fail("thresholds." + k, "must be a number");
      else
        c.spec.numbers[k] = v.get<double>();
    }
  }
  if (const nlohmann::json* cr = r.optional("credit")) {
    Reader credit(*cr, where + ".credit", error);
    c.spec.credit = Credit{credit.num("zero_at"), credit.num("full_at")};
  }
  c.result.verdict = enum_field(r, "verdict", parse_verdict, spellings_of_verdicts());
  if (!v1)
    c.result.cause = enum_field(r, "cause", parse_cause, spellings_of_causes());
  else if (c.result.verdict == Verdict::fail || c.result.verdict == Verdict::timeout ||
           c.result.verdict == Verdict::crash || c.result.verdict == Verdict::error)
    c.result.cause = Cause::unrecorded;
  c.score.points = r.num("points");
  c.score.max_points = r.num("max_points");
  c.score.why = r.str("why");
  c.score.gated = r.boolean("gated");
  c.result.failures = r.strings("failures");
  c.result.notes = r.strings("notes");
  const nlohmann::json& ms = r.array("measurements");
  for (std::size_t i = 0; r.ok() && i < ms.size(); ++i) {
    Reader m(ms[i], fmt::format("{}.measurements[{}]", where, i), error);
    Measurement x;
    x.key = m.str("key");
    x.value = m.num("value");
    x.unit = m.str("unit");
    c.result.measurements.push_back(x);
  }
  c.result.output = r.str("output");
  c.result.seconds = r.num("seconds");
  if (version < 3) {
    // The outcome as the grader that wrote it scored it: from the check's
    // recorded ratio (its own timing: a Judged keeps no other) and thresholds.
    c.score.speed = speed_outcome(c.spec, c.result.recorded_ratio());
  } else if (const nlohmann::json* sp = r.optional("speed")) {
    Reader s(*sp, where + ".speed", error);
    SpeedOutcome o;
    o.ratio = s.num("ratio");
    if (const nlohmann::json* v = s.optional("pass_at"); v && !v->is_null()) o.pass_at = s.num("pass_at");
    const nlohmann::json* z = s.optional("zero_at");
    const nlohmann::json* f = s.optional("full_at");
    if (z && f && !z->is_null() && !f->is_null()) o.credit = Credit{s.num("zero_at"), s.num("full_at")};
    c.score.speed = o;
  }
  return c;
}

}  // namespace

nlohmann::json to_json(const GradeDocument& d) {
  nlohmann::json labs = nlohmann::json::array();
  for (const auto& l : d.labs) {
    nlohmann::json checks = nlohmann::json::array();
    for (const auto& c : l.checks) checks.push_back(check_json(c));
    labs.push_back({{"id", l.id},
                    {"title", l.title},
                    {"weight", l.weight},
                    {"status", spelling(l.status)},
                    {"message", l.message},
                    {"points", l.points},
                    {"max_points", l.max_points},
                    {"checks", checks}});
  }
  nlohmann::json j = {{"format", kGradeFormat},
                      {"id", d.id},
                      {"grader_version", d.grader_version},
                      {"mode", d.mode()},
                      {"gpu", d.gpu},
                      {"cpu_mode", d.cpu_mode},
                      {"provisional", d.provisional},
                      {"gpu_line", d.gpu_line},
                      {"score", d.score},
                      {"max_score", d.max_score},
                      {"seconds", d.seconds},
                      {"error", d.error},
                      {"ignored", d.ignored},
                      {"notes", d.notes},
                      {"labs", labs}};
  // New optional fields: readers of cudalab-grade/1 before them ignore them.
  if (!d.assignment.empty()) j["assignment"] = d.assignment;
  if (d.submission) {
    nlohmann::json who = nlohmann::json::array();
    for (const auto& s : d.submission->submitters)
      who.push_back({{"name", s.name}, {"sid", s.sid}, {"email", s.email}, {"login", s.login}});
    j["submission"] = {{"platform", d.submission->platform},
                       {"id", d.submission->id},
                       {"time", d.submission->time},
                       {"submitters", who}};
  }
  if (d.late)
    j["late"] = {{"due", d.late->due},           {"per_day", d.late->per_day},
                 {"max_days", d.late->max_days}, {"days", d.late->days},
                 {"fraction", d.late->fraction}, {"score_before", d.late->score_before},
                 {"reason", d.late->reason}};
  return j;
}

std::optional<GradeDocument> grade_document_from_json(const nlohmann::json& j, std::string& error) {
  error.clear();
  if (!j.is_object() || !j.contains("format") || !j["format"].is_string())
    return error = "not a cudalab grade document (no \"format\")", std::nullopt;
  const int version = j["format"] == kGradeFormat     ? 3
                      : j["format"] == kGradeFormatV2 ? 2
                      : j["format"] == kGradeFormatV1 ? 1
                                                      : 0;
  if (version == 0)
    return error =
               fmt::format("grade document of format \"{}\"; this cudalab reads \"{}\", \"{}\" and \"{}\"",
                           j["format"].get<std::string>(), kGradeFormat, kGradeFormatV2, kGradeFormatV1),
           std::nullopt;
  GradeDocument d;
  Reader r(j, "grade", error);
  d.id = r.str("id");
  if (j.contains("assignment")) d.assignment = r.str("assignment");
  d.grader_version = r.str("grader_version");
  d.gpu = r.boolean("gpu");
  d.cpu_mode = r.boolean("cpu_mode");
  d.provisional = r.boolean("provisional");
  d.gpu_line = r.str("gpu_line");
  d.score = r.num("score");
  d.max_score = r.num("max_score");
  d.seconds = r.num("seconds");
  d.error = r.str("error");
  d.ignored = r.strings("ignored");
  d.notes = r.strings("notes");
  const nlohmann::json& labs = r.array("labs");
  for (std::size_t i = 0; error.empty() && i < labs.size(); ++i) {
    const std::string where = fmt::format("grade.labs[{}]", i);
    Reader lr(labs[i], where, error);
    GradedLab l;
    l.id = lr.str("id");
    l.title = lr.str("title");
    l.weight = lr.num("weight");
    l.status = enum_field(lr, "status", parse_lab_status, spellings_of_lab_statuses());
    l.message = lr.str("message");
    l.points = lr.num("points");
    l.max_points = lr.num("max_points");
    const nlohmann::json& checks = lr.array("checks");
    for (std::size_t c = 0; error.empty() && c < checks.size(); ++c)
      l.checks.push_back(read_check(checks[c], fmt::format("{}.checks[{}]", where, c), version, error));
    d.labs.push_back(std::move(l));
  }
  if (const nlohmann::json* sub = r.optional("submission")) {
    Reader sr(*sub, "grade.submission", error);
    SubmissionRecord rec;
    rec.platform = sr.str("platform");
    rec.id = sr.str("id");
    rec.time = sr.str("time");
    const nlohmann::json& who = sr.array("submitters");
    for (std::size_t i = 0; error.empty() && i < who.size(); ++i) {
      Reader w(who[i], fmt::format("grade.submission.submitters[{}]", i), error);
      rec.submitters.push_back({w.str("name"), w.str("sid"), w.str("email"), w.str("login")});
    }
    d.submission = rec;
  }
  if (const nlohmann::json* late = r.optional("late")) {
    Reader lr(*late, "grade.late", error);
    LatePenalty p;
    p.due = lr.str("due");
    p.per_day = lr.num("per_day");
    p.max_days = static_cast<int>(lr.num("max_days"));
    p.days = static_cast<int>(lr.num("days"));
    p.fraction = lr.num("fraction");
    p.score_before = lr.num("score_before");
    p.reason = lr.str("reason");
    d.late = p;
  }
  if (!error.empty()) return std::nullopt;
  return d;
}

std::optional<GradeDocument> load_grade_document(const std::filesystem::path& file, std::string& error) {
  const std::optional<std::string> text = read_file(file);
  if (!text) return error = fmt::format("cannot read {}", file.string()), std::nullopt;
  const auto j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return error = fmt::format("{}: not valid JSON", file.string()), std::nullopt;
  auto d = grade_document_from_json(j, error);
  if (!d) error = fmt::format("{}: {}", file.string(), error);
  return d;
}

void save_grade_document(const GradeDocument& d, const std::filesystem::path& file) {
  write_text(file, to_json(d).dump(2) + "\n");  // a reader never sees half a document
}

}  // namespace cudalab
