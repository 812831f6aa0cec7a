#include <fmt/format.h>

#include <stdexcept>

#include "authoring/expect.h"
#include "core/score.h"
#include "cudalab/catch.h"
#include "cudalab/manifest.h"
#include "judged_for_tests.h"
#include "pipeline/grader.h"

using namespace cudalab;

namespace {

CheckSpec speed_spec() {
  CheckSpec s;
  s.id = "fast";
  s.kind = CheckKind::speed;
  s.points = 20;
  s.required = {"square"};
  s.numbers["min_ratio"] = 1.3;
  s.credit = Credit{1.0, 1.3};
  return s;
}

CheckResult result(const std::string& id, Verdict verdict, double ratio = -1) {
  CheckResult r;
  r.id = id;
  r.verdict = verdict;
  if (ratio >= 0) r.measurements.push_back({"ratio", ratio, "x"});
  return r;
}

}  // namespace

// A verdict as if the grader had reached it (the exports' tests do the same).
Judged judged(const std::string& id, Verdict verdict, double ratio = -1) {
  CheckResult r = result(id, verdict, ratio);
  r.kind = id == "fast" ? CheckKind::speed : CheckKind::correctness;
  return JudgedForTests::make(r);
}

TEST_CASE("Correctness checks are all or nothing", "[score][grader]") {
  CheckSpec c;
  c.id = "square";
  c.kind = CheckKind::correctness;
  c.points = 20;
  CHECK(score_check(c, judged("square", Verdict::pass), {}).points == 20);
  CHECK(score_check(c, judged("square", Verdict::fail), {}).points == 0);
  CHECK(score_check(c, judged("square", Verdict::timeout), {}).points == 0);
}

TEST_CASE("A speed check scores nothing unless its correctness checks passed", "[score][grader]") {
  const auto spec = speed_spec();
  const auto fast = judged("fast", Verdict::pass, 1.5);
  const auto s = score_check(spec, fast, {judged("square", Verdict::fail), fast});
  CHECK(s.points == 0);
  CHECK_THAT(s.why, Catch::Contains("'square'"));
  CHECK(s.gated);  // so the exports report it failed, whatever its verdict
  CHECK_FALSE(score_check(spec, fast, {judged("square", Verdict::pass), fast}).gated);
}

TEST_CASE("Speed credit is linear between the curve's ends", "[score][grader]") {
  const auto spec = speed_spec();
  const auto ok = judged("square", Verdict::pass);
  CHECK(score_check(spec, judged("fast", Verdict::pass, 1.3), {ok}).points == 20);
  CHECK(score_check(spec, judged("fast", Verdict::pass, 2.0), {ok}).points == 20);
  CHECK(score_check(spec, judged("fast", Verdict::fail, 1.15), {ok}).points == Approx(10));
  CHECK(score_check(spec, judged("fast", Verdict::fail, 0.9), {ok}).points == 0);
}

TEST_CASE("A speed check that measured nothing scores nothing", "[score][grader]") {
  const auto spec = speed_spec();
  CHECK(score_check(spec, judged("fast", Verdict::fail), {judged("square", Verdict::pass)}).points == 0);
  CHECK(score_check(spec, judged("fast", Verdict::not_run), {judged("square", Verdict::pass)}).points == 0);
}

TEST_CASE("A speed check's ratio counts only when the grader's replay timed it", "[score][trust][grader]") {
  const auto spec = speed_spec();
  const auto ok = judged("square", Verdict::pass);
  // The grader's replay (a Testimony): its ratio gives credit.
  CheckResult replayed = result("fast", Verdict::fail, 1.15);
  replayed.kind = CheckKind::speed;
  const Judged timed = judge_speed_timed(Testimony{replayed, {}});
  REQUIRE(timed.timed_ratio());
  CHECK(score_check(spec, timed, {ok}).points == Approx(10));
  // The student's own traced run (a Claim), failing but carrying a ratio of
  // 9.99, or passing with one: not timed, nothing scored, nothing of its
  // numbers shown.
  for (const Verdict verdict :
       {Verdict::fail, Verdict::pass, Verdict::not_run, Verdict::crash, Verdict::timeout}) {
    CAPTURE(verdict);
    CheckResult forged = result("fast", verdict, 9.99);
    forged.kind = CheckKind::speed;
    forged.failures = {"anything at all"};
    const Judged j = judge_speed_untimed(Claim{forged, {}});
    CHECK_FALSE(j.passed());
    CHECK_FALSE(j.timed_ratio());
    CHECK(j.result().measurements.empty());
    CHECK_THAT(j.result().failures.front(), Catch::Contains("replays and times itself"));
    CHECK(score_check(spec, j, {ok}).points == 0);
  }
}

TEST_CASE("A correctness pass claimed without the reference's evidence is never a pass",
          "[score][trust][grader]") {
  CheckSpec c;
  c.id = "square";
  c.kind = CheckKind::correctness;
  c.points = 20;
  const Judged j =
      judge_correctness(Claim{result("square", Verdict::pass), {}}, "/nonexistent/reference.evidence", c);
  CHECK(j.verdict() == Verdict::error);
  CHECK(score_check(c, j, {}).points == 0);
  // A failure claimed stands as it is, whatever the evidence.
  CHECK(judge_correctness(Claim{result("square", Verdict::fail), {}}, "/nonexistent", c).verdict() ==
        Verdict::fail);
}

TEST_CASE("Words can be rewritten, verdicts and timed ratios cannot", "[score][trust][grader]") {
  const Judged before = judged("square", Verdict::fail);
  Judged j = before;
  j.edit_words([](CheckResult& w) {
    w.verdict = Verdict::pass;
    w.measurements.push_back({"ratio", 9.99, "x"});
    w.failures.insert(w.failures.begin(), "Diagnosis: a second look.");
    w.cause = Cause::race;  // the lead's cause is words too (an H200's gallery lost it here)
  });
  CHECK(j.verdict() == Verdict::fail);
  CHECK(j.result().measurements.empty());
  CHECK(j.result().failures.front() == "Diagnosis: a second look.");
  CHECK(j.result().cause == Cause::race);
  // A sanitizer's report fails a pass; it never raises anything.
  Judged p = judged("square", Verdict::pass);
  p.lower_to_fail("compute-sanitizer (racecheck) reported an error");
  CHECK(p.verdict() == Verdict::fail);
  CHECK(p.result().cause == Cause::sanitizer_report);
  Judged t = judged("square", Verdict::timeout);
  t.lower_to_fail("x");
  CHECK(t.verdict() == Verdict::timeout);
}

TEST_CASE("A chart's counts join a verdict after it, and nothing else does", "[score][trust][grader]") {
  Judged j = judged("speed", Verdict::fail);
  j.add_chart_measurements(
      {{"chart_traffic_flops", 4.2e6, "FLOP"}, {"ratio", 9.99, "x"}, {"student_ms", 0.1, "ms"}});
  REQUIRE(j.result().measurements.size() == 1);
  CHECK(j.result().measurements.front().key == "chart_traffic_flops");
  CHECK(j.verdict() == Verdict::fail);
  CHECK_FALSE(j.timed_ratio());
}

TEST_CASE("The grader's own word never passes a check", "[score][trust][grader]") {
  CheckSpec c;
  c.id = "square";
  c.kind = CheckKind::correctness;
  CHECK(judge_by_grader(c, Verdict::pass, "").verdict() == Verdict::error);
  CHECK(judge_failed_testimony(Testimony{result("square", Verdict::pass), {}}).verdict() == Verdict::error);
}

TEST_CASE("./cudalab test previews the points of the checks it ran itself", "[score][grader]") {
  const auto spec = speed_spec();
  CHECK(preview_check_score(spec, result("fast", Verdict::fail, 1.15), {result("square", Verdict::pass)})
            .points == Approx(10));
}

TEST_CASE("Expectation files give verdicts and phrases per check", "[score][grader]") {
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
  CHECK(ragged->verdict == Verdict::fail);
  CHECK(ragged->says == "boundary");
  REQUIRE(f.find("square"));
  CHECK(f.find("square")->says.empty());
  CHECK_FALSE(f.find("memory"));
  CHECK_THROWS_WITH(parse_expect("[expect]\nx = \"passes\"\n", "e.toml"), Catch::Contains("verdict must be"));
  // A cause is one of the closed list's spellings, nothing else.
  const auto c =
      parse_expect("[expect]\nragged = { verdict = \"fail\", cause = \"boundary_checks\" }\n", "e.toml");
  REQUIRE(c.find("ragged"));
  CHECK(c.find("ragged")->cause == Cause::boundary_checks);
  CHECK_FALSE(f.find("square")->cause);
  CHECK_THROWS_WITH(
      parse_expect("[expect]\nragged = { verdict = \"fail\", cause = \"the boundary checks\" }\n", "e.toml"),
      Catch::Contains("cause \"the boundary checks\" is not one of none, not_implemented"));
  CHECK(contains_phrase("Look at the Boundary checks", "boundary"));
}

TEST_CASE(
    "a submission's correctness checks run side by side: one per core in CPU mode, up to eight on a GPU",
    "[score][grader]") {
  CHECK(check_jobs(0, /*cpu_mode=*/true, 2) == 2);
  CHECK(check_jobs(0, true, 16) == 16);
  CHECK(check_jobs(0, /*cpu_mode=*/false, 16) == 8);
  CHECK(check_jobs(0, false, 4) == 4);
  CHECK(check_jobs(0, false, 2) == 2);
  // A machine that cannot say how many cores it has still runs checks.
  CHECK(check_jobs(0, true, 0) == 1);
  CHECK(check_jobs(0, false, 0) == 1);
  // The instructor's choice wins (1: one check at a time, as before).
  CHECK(check_jobs(1, false, 16) == 1);
  CHECK(check_jobs(6, true, 2) == 6);
}

TEST_CASE("--gpus names the GPUs a batch grades on, as CUDA_VISIBLE_DEVICES shows each alone",
          "[score][grader]") {
  std::string error;
  CHECK(parse_gpus("all", 2, nullptr, error) == std::vector<std::string>{"0", "1"});
  CHECK(parse_gpus("1", 4, nullptr, error) == std::vector<std::string>{"0"});
  CHECK(parse_gpus("3", 4, "", error) == std::vector<std::string>{"0", "1", "2"});
  CHECK(parse_gpus("2,0", 4, nullptr, error) == std::vector<std::string>{"2", "0"});
  CHECK(error.empty());
  // Under CUDA_VISIBLE_DEVICES, index i is its i-th entry, whatever it names.
  CHECK(parse_gpus("all", 2, "5,7", error) == std::vector<std::string>{"5", "7"});
  CHECK(parse_gpus("1", 2, "GPU-aa,GPU-bb", error) == std::vector<std::string>{"GPU-aa"});
  CHECK(error.empty());
}

TEST_CASE("--gpus that asks for a GPU the machine does not have says what it has", "[score][grader]") {
  std::string error;
  CHECK(parse_gpus("3", 2, nullptr, error).empty());
  CHECK(error == "--gpus 3: this machine has 2 usable GPUs");
  error.clear();
  CHECK(parse_gpus("0,2", 2, nullptr, error).empty());
  CHECK(error.find("'2' is not a GPU here") != std::string::npos);
  error.clear();
  CHECK(parse_gpus("1,1", 2, nullptr, error).empty());
  CHECK(error.find("named twice") != std::string::npos);
  error.clear();
  CHECK(parse_gpus("two", 2, nullptr, error).empty());
  CHECK(!error.empty());
  error.clear();
  CHECK(parse_gpus("0", 4, nullptr, error).empty());
  CHECK(error == "--gpus 0: this machine has 4 usable GPUs");
  error.clear();
  CHECK(parse_gpus("all", 0, nullptr, error).empty());
  CHECK(error == "--gpus: no GPU is usable here");
}

TEST_CASE("a batch over several GPUs grades every submission once, each on one GPU at a time",
          "[score][grader]") {
  // Without a GPU or a build: a stand-in stage that throws for one
  // submission; the batch must still report every submission exactly once.
  GraderConfig cfg;
  Grader grader(cfg);
  std::vector<int> seen(7, 0);
  std::vector<std::string> errors(7);
  const std::vector<BatchWorkerTime> times = grade_batch(
      grader, 7, {"0", "1", "2"}, 0,
      [](std::size_t k, int slot) -> Grader::Staged {
        CHECK(slot >= 0);
        CHECK(slot < 6);  // two per GPU
        throw std::runtime_error(fmt::format("no build for {}", k));
      },
      [&](std::size_t k, SubmissionGrade* g, const std::string& error) {
        CHECK(g == nullptr);
        ++seen[k];
        errors[k] = error;
      });
  for (std::size_t k = 0; k < seen.size(); ++k) {
    CHECK(seen[k] == 1);
    CHECK(errors[k] == fmt::format("no build for {}", k));
  }
  // No submission was graded (every build failed): no worker counts one.
  REQUIRE(times.size() == 3);
  for (const auto& t : times) CHECK(t.graded == 0);
  CHECK(times[0].gpu == "0");
  CHECK(times[2].gpu == "2");
}

TEST_CASE("A failed build always shows something: the compiler, ninja's error, or its last lines",
          "[score][grader]") {
  const std::string overlay = "/grade/overlay/labs";
  const std::string compiler = "[1/2] Compiling\nFAILED: labs/x.o\nc++ -c x\n" + overlay +
                               "/05_reduction/reduction.cu:12:3: error: expected ';'\nninja: build stopped\n";
  CHECK_THAT(build_failure_log(compiler, overlay, false, "exit code 1"),
             Catch::Contains("labs/05_reduction/reduction.cu:12:3: error: expected ';'") &&
                 !Catch::Contains(overlay));
  // A target the build does not have: only ninja speaks.
  CHECK_THAT(build_failure_log("ninja: error: unknown target 'labs/05_reduction-tests'\n", overlay, false,
                               "exit code 1"),
             Catch::Contains("unknown target 'labs/05_reduction-tests'"));
  // Only lines the tidying drops, and blank ones: the last lines, and how it ended.
  const std::string dropped = "[1/1] Linking target labs/x\nFAILED: labs/x\n\n   \n";
  const std::string s = build_failure_log(dropped, overlay, false, "exit code 1");
  CHECK_THAT(s,
             Catch::StartsWith("the build failed (exit code 1) without a compiler message; its last lines:"));
  CHECK_THAT(s, Catch::Contains("FAILED: labs/x"));
  CHECK_THAT(build_failure_log("", overlay, false, "killed by SIGKILL"),
             Catch::Contains("(killed by SIGKILL) without a compiler message or any other output"));
}

TEST_CASE("a batch says per GPU how much of its time went to grading and how much to waiting for builds",
          "[unit][score]") {
  const std::string text = describe_batch_time({{"0", 10, 90, 30}, {"1", 1, 5, 115}}, 120);
  CHECK(text ==
        "GPU 0: 10 submissions, grading 90 s (75% of 120 s), waiting for builds 30 s (25%)\n"
        "GPU 1: 1 submission, grading 5 s (4% of 120 s), waiting for builds 115 s (96%)\n");
}
