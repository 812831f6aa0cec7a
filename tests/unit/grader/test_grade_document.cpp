// The grade document (grade_document.h): what the grader writes reads back as
// the same document, every view written from the read-back document is the
// same as from the original, the schema in grader/schema/ describes exactly
// what is written, and a reader refuses what is not a document of its format.
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "core/course.h"
#include "core/grade_document.h"
#include "judged_for_tests.h"
#include "testbed.h"
#include "views/csv.h"
#include "views/export.h"
#include "views/report_html.h"
#include "views/text.h"

using namespace cudalab;

namespace {

SubmissionGrade graded(const LabSpec& spec, const LabSpec& other) {
  SubmissionGrade g;
  g.id = "alice";
  g.gpu = true;
  g.gpu_line = "NVIDIA H100";
  g.seconds = 12.4;
  g.ignored = {"notes.txt: not a student file of any lab"};
  LabGrade lab;
  lab.spec = &spec;
  lab.weight = 2;
  CheckResult sq;
  sq.id = "square", sq.name = spec.checks[0].name, sq.kind = CheckKind::correctness;
  sq.verdict = Verdict::fail;
  sq.failures = {"Diagnosis: the boundary checks.", "C[1][2] = 3 (expected 4) <here>"};
  sq.cause = Cause::boundary_checks;
  sq.notes = {"shape 17x17"};
  sq.output = "printed \"text\"";
  CheckResult fast;
  fast.id = "fast", fast.name = spec.checks[1].name, fast.kind = CheckKind::speed;
  fast.verdict = Verdict::pass;
  fast.measurements = {{"ratio", 1.15, "x"}, {"student_ms", 0.5, "ms"}};
  lab.results = JudgedForTests::make({sq, fast});
  g.labs.push_back(lab);
  LabGrade missing;
  missing.spec = &other;
  missing.status = LabStatus::build_failed;
  missing.message = "matmul_tiled.cu:3: error: expected ';'";
  g.labs.push_back(missing);
  score_submission(g);
  return g;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The part of JSON Schema that grade.schema.json uses: type, const, enum,
// required, properties, additionalProperties, items, $ref, oneOf. Returns
// the first place that does not conform, or "".
std::string conforms(const nlohmann::json& v, const nlohmann::json& schema, const nlohmann::json& root,
                     const std::string& at) {
  if (schema.contains("$ref")) {
    const std::string ref = schema["$ref"];  // "#/$defs/name"
    return conforms(v, root["$defs"][ref.substr(ref.rfind('/') + 1)], root, at);
  }
  if (schema.contains("oneOf")) {
    int matched = 0;
    for (const auto& s : schema["oneOf"]) matched += conforms(v, s, root, at).empty();
    return matched == 1 ? "" : at + ": matches " + std::to_string(matched) + " of oneOf";
  }
  if (schema.contains("const") && v != schema["const"]) return at + ": not " + schema["const"].dump();
  if (schema.contains("enum")) {
    bool found = false;
    for (const auto& e : schema["enum"]) found |= v == e;
    if (!found) return at + ": " + v.dump() + " not in " + schema["enum"].dump();
  }
  if (schema.contains("type")) {
    const std::string t = schema["type"];
    const bool ok = (t == "object" && v.is_object()) || (t == "array" && v.is_array()) ||
                    (t == "string" && v.is_string()) || (t == "number" && v.is_number()) ||
                    (t == "boolean" && v.is_boolean()) || (t == "null" && v.is_null());
    if (!ok) return at + ": not of type " + t;
  }
  if (v.is_object()) {
    for (const auto& r : schema.value("required", nlohmann::json::array()))
      if (!v.contains(r.get<std::string>())) return at + ": missing " + r.get<std::string>();
    const nlohmann::json props = schema.value("properties", nlohmann::json::object());
    for (const auto& [k, x] : v.items()) {
      if (props.contains(k)) {
        if (auto e = conforms(x, props[k], root, at + "." + k); !e.empty()) return e;
      } else if (schema.contains("additionalProperties")) {
        const auto& extra = schema["additionalProperties"];
        if (extra.is_boolean() && !extra.get<bool>()) return at + ": " + k + " is not in the schema";
        if (extra.is_object())
          if (auto e = conforms(x, extra, root, at + "." + k); !e.empty()) return e;
      }
    }
  }
  if (v.is_array() && schema.contains("items"))
    for (std::size_t i = 0; i < v.size(); ++i)
      if (auto e = conforms(v[i], schema["items"], root, at + "[" + std::to_string(i) + "]"); !e.empty())
        return e;
  return "";
}

}  // namespace

TEST_CASE("A grade document reads back as itself, and its views read back the same",
          "[grade-document][grader]") {
  const LabSpec spec = testbed::tiled_lab(), other = testbed::tiled_lab();
  const GradeDocument doc = grade_document(graded(spec, other), "1.2.3");
  const nlohmann::json j = to_json(doc);
  CHECK(j["format"] == std::string(kGradeFormat));
  CHECK(j["labs"][1]["status"] == "build_failed");
  CHECK(j["labs"][0]["checks"][0]["verdict"] == "fail");
  std::string error;
  const auto back = grade_document_from_json(nlohmann::json::parse(j.dump()), error);
  REQUIRE(back);
  CHECK(error.empty());
  CHECK(to_json(*back) == j);
  // Every view is a function of the document alone.
  CHECK(gradescope_json(*back) == gradescope_json(doc));
  CHECK(prairielearn_json(*back) == prairielearn_json(doc));
  CHECK(junit_xml(*back) == junit_xml(doc));
  CHECK(csv_row(*back) == csv_row(doc));
  CHECK(submission_output(*back) == submission_output(doc));
  CHECK(report_html(*back) == report_html(doc));
  // And they carry what the grade says.
  CHECK(gradescope_json(*back)["tests"][1]["output"].get<std::string>().find("needs 1.30x") !=
        std::string::npos);
}

TEST_CASE("grader/schema/grade.schema.json describes every field the grader writes",
          "[grade-document][grader]") {
  const auto schema =
      nlohmann::json::parse(read_file(CUDALAB_SOURCE_ROOT "/grader/schema/grade.schema.json"));
  CHECK(schema["properties"]["format"]["const"] == std::string(kGradeFormat));
  const LabSpec spec = testbed::tiled_lab(), other = testbed::tiled_lab();
  const nlohmann::json j = to_json(grade_document(graded(spec, other), "1.2.3"));
  CHECK(conforms(j, schema, schema, "grade") == "");
  // The validator itself fails on what does not conform.
  nlohmann::json extra = j;
  extra["labs"][0]["checks"][0]["surprise"] = 1;
  CHECK(conforms(extra, schema, schema, "grade") == "grade.labs[0].checks[0]: surprise is not in the schema");
  nlohmann::json bad = j;
  bad["labs"][0]["status"] = "build-failed";
  CHECK_FALSE(conforms(bad, schema, schema, "grade").empty());
}

TEST_CASE("A grade document of another format, or with a bad field, is refused with its place named",
          "[grade-document][grader]") {
  const LabSpec spec = testbed::tiled_lab(), other = testbed::tiled_lab();
  const nlohmann::json j = to_json(grade_document(graded(spec, other), "1.2.3"));
  std::string error;
  nlohmann::json v4 = j;
  v4["format"] = "cudalab-grade/4";
  CHECK_FALSE(grade_document_from_json(v4, error));
  CHECK(error ==
        "grade document of format \"cudalab-grade/4\"; this cudalab reads \"cudalab-grade/3\", "
        "\"cudalab-grade/2\" and \"cudalab-grade/1\"");
  nlohmann::json cause = j;
  cause["labs"][0]["checks"][0]["cause"] = "the boundary checks";  // a title, not a spelling
  CHECK_FALSE(grade_document_from_json(cause, error));
  CHECK(error.find("grade.labs[0].checks[0].cause is \"the boundary checks\", not one of none,") == 0);
  CHECK_FALSE(grade_document_from_json(nlohmann::json::parse(R"({"score": 3})"), error));
  CHECK(error.find("no \"format\"") != std::string::npos);
  nlohmann::json verdict = j;
  verdict["labs"][0]["checks"][1]["verdict"] = "passed";
  CHECK_FALSE(grade_document_from_json(verdict, error));
  CHECK(error.find("grade.labs[0].checks[1].verdict is \"passed\", not one of pass, fail") == 0);
  nlohmann::json missing = j;
  missing["labs"][1].erase("points");
  CHECK_FALSE(grade_document_from_json(missing, error));
  CHECK(error == "grade.labs[1].points is missing");
  nlohmann::json wrong = j;
  wrong["score"] = "60";
  CHECK_FALSE(grade_document_from_json(wrong, error));
  CHECK(error == "grade.score must be a number");
}

TEST_CASE("A failing check's cause is kept in the grade, and a grade of the first format reads as unrecorded",
          "[grade-document][grader]") {
  // The schema's list of causes is the closed list, in its order.
  const auto schema =
      nlohmann::json::parse(read_file(CUDALAB_SOURCE_ROOT "/grader/schema/grade.schema.json"));
  std::string listed;
  for (const auto& c : schema["$defs"]["check"]["properties"]["cause"]["enum"])
    listed += (listed.empty() ? "" : ", ") + c.get<std::string>();
  CHECK(listed == spellings_of_causes());
  const LabSpec spec = testbed::tiled_lab(), other = testbed::tiled_lab();
  SubmissionGrade g = graded(spec, other);
  // A timeout without a diagnosis is a cause too; a pass has none.
  CheckResult r = g.labs[0].results[1].result();
  REQUIRE(r.verdict == Verdict::pass);
  CHECK(cause_of(r, true) == Cause::none);
  r.cause = Cause::race;  // a pass keeps none, whatever a process said
  CHECK(cause_of(r, true) == Cause::none);
  r.verdict = Verdict::timeout, r.cause = Cause::none;
  CHECK(cause_of(r, false) == Cause::slow);  // a speed check's timed runs that ran out of time
  r.kind = CheckKind::correctness;
  CHECK(cause_of(r, false) == Cause::timeout);
  r.verdict = Verdict::fail, r.cause = Cause::boundary_checks;
  CHECK(cause_of(r, false) == Cause::boundary_checks);
  // A speed check that failed: slow where the grader timed it, no cause
  // where it never was (whatever its record's measurements say).
  r.kind = CheckKind::speed, r.cause = Cause::none, r.measurements = {{"ratio", 0.5, "x"}};
  CHECK(cause_of(r, true) == Cause::slow);
  CHECK(cause_of(r, false) == Cause::none);

  nlohmann::json j = to_json(grade_document(g, "1.2.3"));
  CHECK(j["format"] == "cudalab-grade/3");
  CHECK(j["labs"][0]["checks"][0]["cause"] == "boundary_checks");
  CHECK(j["labs"][0]["checks"][1]["cause"] == "none");
  std::string error;
  // The same document as the first format wrote it: no causes.
  j["format"] = "cudalab-grade/1";
  bool any_failed = false;
  for (auto& lab : j["labs"])
    for (auto& c : lab["checks"]) {
      c.erase("cause");
      any_failed |= c["verdict"] != "pass";
    }
  REQUIRE(any_failed);
  const auto old = grade_document_from_json(j, error);
  REQUIRE(old);
  CHECK(error.empty());
  for (const auto& lab : old->labs)
    for (const auto& c : lab.checks)
      CHECK(c.result.cause == (c.result.verdict == Verdict::pass || c.result.verdict == Verdict::not_run ||
                                       c.result.verdict == Verdict::skipped
                                   ? Cause::none
                                   : Cause::unrecorded));
  // Written again, it is a document of the current format.
  CHECK(to_json(*old)["format"] == "cudalab-grade/3");
}

TEST_CASE("An assignment's grade document names the assignment, and a course's does not",
          "[grade-document][grader]") {
  const LabSpec spec = testbed::tiled_lab(), other = testbed::tiled_lab();
  SubmissionGrade g = graded(spec, other);
  CHECK_FALSE(to_json(grade_document(g, "1.2.3")).contains("assignment"));
  g.assignment = "hw3";
  const nlohmann::json j = to_json(grade_document(g, "1.2.3"));
  CHECK(j["assignment"] == "hw3");
  const auto schema =
      nlohmann::json::parse(read_file(CUDALAB_SOURCE_ROOT "/grader/schema/grade.schema.json"));
  CHECK(conforms(j, schema, schema, "grade") == "");
  std::string error;
  const auto back = grade_document_from_json(j, error);
  REQUIRE(back);
  CHECK(back->assignment == "hw3");
  CHECK(to_json(*back) == j);
}

TEST_CASE(
    "A grade from a platform's export keeps its submitters, time and late penalty, and the schema has them",
    "[grade-document][grader]") {
  const auto schema =
      nlohmann::json::parse(read_file(CUDALAB_SOURCE_ROOT "/grader/schema/grade.schema.json"));
  const LabSpec spec = testbed::tiled_lab(), other = testbed::tiled_lab();
  GradeDocument doc = grade_document(graded(spec, other), "1.2.3");
  doc.submission = SubmissionRecord{"gradescope",
                                    "123",
                                    "2026-12-06T01:00:00-05:00",
                                    {{"Ada L", "100", "ada@u.edu", ""}, {"Bo", "101", "bo@u.edu", ""}}};
  doc.late =
      LatePenalty{"2026-12-05T23:59:00-05:00", 0.1, 3, 1, 0.1, 40, "1 day late: 10% of the points taken"};
  doc.score = 36;
  const nlohmann::json j = to_json(doc);
  CHECK(conforms(j, schema, schema, "grade") == "");
  CHECK(j["submission"]["submitters"][1]["sid"] == "101");
  CHECK(j["late"]["score_before"] == 40);
  std::string error;
  const auto back = grade_document_from_json(nlohmann::json::parse(j.dump()), error);
  REQUIRE(back);
  CHECK(to_json(*back) == j);
  // A document without them writes neither key: older readers see what they knew.
  const nlohmann::json plain = to_json(grade_document(graded(spec, other), "1.2.3"));
  CHECK_FALSE(plain.contains("submission"));
  CHECK_FALSE(plain.contains("late"));
  // A bad field in them is refused with its place named.
  nlohmann::json bad = j;
  bad["submission"]["submitters"][0]["sid"] = 100;
  CHECK_FALSE(grade_document_from_json(bad, error));
  CHECK(error == "grade.submission.submitters[0].sid must be a string");
  // Every view a student or TA reads names them and the penalty.
  for (const std::string& view : {report_text(doc), report_html(doc)}) {
    CHECK_THAT(view, Catch::Contains("submitted by: Ada L (100, ada@u.edu); Bo (101, bo@u.edu)"));
    CHECK_THAT(view, Catch::Contains("1 day late: 10% of the points taken"));
    CHECK_THAT(view, Catch::Contains("40.00 points before the penalty"));
  }
}

TEST_CASE("A timed speed check's outcome is kept typed in the grade, and made for older documents",
          "[grade-document][grader]") {
  const LabSpec spec = testbed::tiled_lab(), other = testbed::tiled_lab();
  const GradeDocument doc = grade_document(graded(spec, other), "1.2.3");
  const GradedCheck& fast = doc.labs[0].checks[1];
  REQUIRE(fast.score.speed);
  CHECK(fast.score.speed->ratio == Approx(1.15));
  REQUIRE(fast.score.speed->pass_at);
  CHECK(*fast.score.speed->pass_at == Approx(spec.checks[1].numbers.at("min_ratio")));
  CHECK_FALSE(doc.labs[0].checks[0].score.speed);  // a correctness check has none

  nlohmann::json j = to_json(doc);
  const nlohmann::json& speed = j["labs"][0]["checks"][1]["speed"];
  CHECK(speed["ratio"] == Approx(1.15));
  CHECK(speed["pass_at"] == Approx(*fast.score.speed->pass_at));
  CHECK_FALSE(j["labs"][0]["checks"][0].contains("speed"));
  std::string error;
  // Read back: the outcome, not the measurement, says the ratio.
  nlohmann::json moved = j;
  moved["labs"][0]["checks"][1]["speed"]["ratio"] = 0.7;
  const auto back = grade_document_from_json(moved, error);
  REQUIRE(back);
  CHECK(back->labs[0].checks[1].score.speed->ratio == Approx(0.7));
  // A /2 document has no outcome: it is made from the recorded ratio and
  // the thresholds, as the grader that wrote it scored it.
  nlohmann::json v2 = j;
  v2["format"] = "cudalab-grade/2";
  v2["labs"][0]["checks"][1].erase("speed");
  const auto old = grade_document_from_json(v2, error);
  REQUIRE(old);
  REQUIRE(old->labs[0].checks[1].score.speed);
  CHECK(old->labs[0].checks[1].score.speed->ratio == Approx(1.15));
  CHECK(old->labs[0].checks[1].score.speed->pass_at == fast.score.speed->pass_at);
  CHECK_FALSE(old->labs[0].checks[0].score.speed);
}
