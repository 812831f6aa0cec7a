#include "cudalab/catch.h"
#include "cudalab/manifest.h"
#include "expect.h"
#include "score.h"

using namespace cudalab;

namespace {

CheckSpec speed_spec() {
  CheckSpec s;
  s.id = "fast";
  s.kind = "speed";
  s.points = 20;
  s.required = {"square"};
  s.numbers["min_ratio"] = 1.3;
  s.credit = Credit{1.0, 1.3};
  return s;
}

CheckResult result(const std::string& id, const std::string& verdict, double ratio = -1) {
  CheckResult r;
  r.id = id;
  r.verdict = verdict;
  if (ratio >= 0) r.measurements.push_back({"ratio", ratio, "x"});
  return r;
}

}  // namespace

TEST_CASE("Correctness checks are all or nothing") {
  CheckSpec c;
  c.id = "square";
  c.kind = "correctness";
  c.points = 20;
  CHECK(score_check(c, result("square", "pass"), {}).points == 20);
  CHECK(score_check(c, result("square", "fail"), {}).points == 0);
  CHECK(score_check(c, result("square", "timeout"), {}).points == 0);
}

TEST_CASE("A speed check scores nothing unless its correctness checks passed") {
  const auto spec = speed_spec();
  const auto fast = result("fast", "pass", 1.5);
  const auto s = score_check(spec, fast, {result("square", "fail"), fast});
  CHECK(s.points == 0);
  CHECK_THAT(s.why, Catch::Contains("'square'"));
  CHECK(s.gated);  // so the exports report it failed, whatever its verdict
  CHECK_FALSE(score_check(spec, fast, {result("square", "pass"), fast}).gated);
}

TEST_CASE("Speed credit is linear between the curve's ends") {
  const auto spec = speed_spec();
  const auto ok = result("square", "pass");
  CHECK(score_check(spec, result("fast", "pass", 1.3), {ok}).points == 20);
  CHECK(score_check(spec, result("fast", "pass", 2.0), {ok}).points == 20);
  CHECK(score_check(spec, result("fast", "fail", 1.15), {ok}).points == Approx(10));
  CHECK(score_check(spec, result("fast", "fail", 0.9), {ok}).points == 0);
}

TEST_CASE("A speed check that measured nothing scores nothing") {
  const auto spec = speed_spec();
  CHECK(score_check(spec, result("fast", "fail"), {result("square", "pass")}).points == 0);
  CHECK(score_check(spec, result("fast", "not_run"), {result("square", "pass")}).points == 0);
}

TEST_CASE("Expectation files give verdicts and phrases per check") {
  const auto f = parse_expect(R"(
description = "no boundary checks"
base = "solutions"
[expect]
square = "pass"
ragged = { verdict = "fail", says = "boundary" }
)",
                              "expect.toml");
  CHECK(f.description == "no boundary checks");
  REQUIRE(f.expectations.size() == 2);
  const Expectation* ragged = f.find("ragged");
  REQUIRE(ragged);
  CHECK(ragged->verdict == "fail");
  CHECK(ragged->says == "boundary");
  REQUIRE(f.find("square"));
  CHECK(f.find("square")->says.empty());
  CHECK_FALSE(f.find("memory"));
  CHECK_THROWS_WITH(parse_expect("[expect]\nx = \"passes\"\n", "e.toml"), Catch::Contains("verdict must be"));
  CHECK(contains_phrase("Look at the Boundary checks", "boundary"));
}
