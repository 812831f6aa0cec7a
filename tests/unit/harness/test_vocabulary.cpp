// The shared vocabulary (cudalab/vocabulary.h): every enum value has one
// spelling that reads back as itself, and the record reader refuses a record
// of a format it does not know.
#include <algorithm>
#include <catch2/catch.hpp>

#include "cudalab/vocabulary_fmt.h"
#include "run/checks.h"

using namespace cudalab;

TEST_CASE("Every verdict, check kind and lab status reads back from its spelling", "[vocabulary][harness]") {
  for (Verdict v : {Verdict::pass, Verdict::fail, Verdict::not_run, Verdict::skipped, Verdict::timeout,
                    Verdict::crash, Verdict::error, Verdict::running}) {
    CAPTURE(spelling(v));
    CHECK(parse_verdict(spelling(v)) == v);
    CHECK(fmt::format("{}", v) == spelling(v));
  }
  for (CheckKind k : {CheckKind::correctness, CheckKind::speed}) CHECK(parse_check_kind(spelling(k)) == k);
  for (LabStatus s : {LabStatus::graded, LabStatus::missing, LabStatus::build_failed, LabStatus::rejected,
                      LabStatus::not_run})
    CHECK(parse_lab_status(spelling(s)) == s);
  CHECK(spelling(Verdict::not_run) == "not_run");
  CHECK(spellings_of_check_kinds() == "correctness, speed");
}

TEST_CASE("Every cause a diagnosis names reads back from its spelling and has a title of its own",
          "[vocabulary][harness]") {
  // The spellings list, in order, is the closed list: each reads back as
  // itself, and no two causes share a title (a class view heads its groups
  // with them).
  std::vector<std::string> titles;
  std::string list = spellings_of_causes() + ", ";
  int n = 0;
  for (std::size_t at = 0; (at = list.find(", ")) != std::string::npos; list.erase(0, at + 2), ++n) {
    const std::string s = list.substr(0, at);
    CAPTURE(s);
    const auto c = parse_cause(s);
    REQUIRE(c);
    CHECK(spelling(*c) == s);
    CHECK(static_cast<int>(*c) == n);  // declaration order: no value left out
    const std::string t(title(*c));
    CHECK(t != "?");
    CHECK(std::find(titles.begin(), titles.end(), t) == titles.end());
    titles.push_back(t);
  }
  CHECK(n > static_cast<int>(Cause::unrecorded));
  CHECK_FALSE(parse_cause("Race"));
  CHECK_FALSE(parse_cause("the boundary checks"));
}

TEST_CASE("A misspelt verdict, kind or status is no value at all", "[vocabulary][harness]") {
  CHECK_FALSE(parse_verdict("not-run"));
  CHECK_FALSE(parse_verdict("PASS"));
  CHECK_FALSE(parse_verdict(""));
  CHECK_FALSE(parse_check_kind("correct"));
  CHECK_FALSE(parse_lab_status("build-failed"));
}

TEST_CASE("The grader reads only records of the format the harness writes", "[vocabulary][record][harness]") {
  const auto record = [](const std::string& format, const std::string& verdict) {
    return R"({"format": ")" + format + R"(", "checks": [{"name": "c", "verdict": ")" + verdict +
           R"(", "failures": [], "notes": [], "measurements": []}]})";
  };
  CheckResult r;
  REQUIRE(parse_check_record(record(std::string(kRecordFormat), "pass"), "c", r));
  CHECK(r.verdict == Verdict::pass);
  CheckResult other;
  CHECK_FALSE(parse_check_record(record("cudalab-record/2", "pass"), "c", other));
  CHECK_FALSE(parse_check_record(R"({"checks": [{"name": "c", "verdict": "pass"}]})", "c", other));
  // A verdict outside the vocabulary is no verdict.
  CheckResult odd;
  REQUIRE(parse_check_record(record(std::string(kRecordFormat), "passed"), "c", odd));
  CHECK(odd.verdict == Verdict::error);
}
