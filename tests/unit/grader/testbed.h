// tests/unit/grader/testbed.h: what the grader's unit tests share: lab 03 as
// they grade it, the grade document the views are written from, a variant's
// measured speed. Verdicts made up for them: judged_for_tests.h.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "authoring/calibrate.h"
#include "core/course.h"
#include "core/grade_document.h"
#include "views/csv.h"
#include "views/export.h"
#include "views/text.h"

namespace testbed {

// Lab 03 with two checks: 'square', correctness, 20 points; 'fast', speed,
// 10 points, only once 'square' passes, full credit at 1.3x the naive kernel,
// none at 1.0x, its result shown after the due date. The title has markup in
// it, which a page must escape.
inline cudalab::LabSpec tiled_lab() {
  return cudalab::parse_lab(R"(
[lab]
title = "Tiled <matmul>"
student_files = ["matmul_tiled.cu"]
tests = ["t.cpp"]
[[check]]
id = "square"
name = "tiled matmul is correct on squares"
kind = "correctness"
points = 20
[[check]]
id = "fast"
name = "tiled matmul is faster than naive"
kind = "speed"
points = 10
visibility = "after_due_date"
requires = ["square"]
min_ratio = 1.3
credit = { zero_at = 1.0, full_at = 1.3 }
)",
                            "lab.toml", "03_tiling");
}

// The views take the grade document; the tests build a SubmissionGrade as
// the grader does and take its document.
inline cudalab::GradeDocument doc_of(const cudalab::SubmissionGrade& g) {
  return cudalab::grade_document(g, "test");
}

// A variant's speed ratios as `cudalab calibrate` measured them, one per run,
// each run with a noise of 0.1.
inline cudalab::calibration::Measured measured(const std::string& variant, bool correct,
                                               std::vector<double> ratios) {
  cudalab::calibration::Measured x;
  x.variant = variant;
  x.correct = correct;
  x.noise = std::vector<double>(ratios.size(), 0.1);
  x.runs = static_cast<int>(ratios.size());
  x.ratios = std::move(ratios);
  return x;
}

// A check of a grade document as the grader leaves it: `spec` from the lab,
// a verdict and its messages, the points it got.
inline cudalab::GradedCheck graded_check(const cudalab::CheckSpec& spec, cudalab::Verdict verdict,
                                         std::vector<std::string> failures = {},
                                         cudalab::Cause cause = cudalab::Cause::none) {
  cudalab::GradedCheck c;
  c.spec = spec;
  c.result.id = spec.id, c.result.name = spec.name, c.result.kind = spec.kind;
  c.result.verdict = verdict;
  c.result.failures = std::move(failures);
  c.result.cause = cause;
  c.score.max_points = spec.points;
  c.score.points = verdict == cudalab::Verdict::pass ? spec.points : 0;
  return c;
}

// A class of six hand-ins of tiled_lab(), for the class view: alice passes
// both checks; bob and carol fail 'square' at the ragged edge, on different
// shapes (one diagnosis once the numbers are out); dave fails it with
// another diagnosis; erin's lab did not compile and she was 2 days late;
// frank's hand-in has no grade (the export listed no files).
inline cudalab::BatchView class_batch() {
  using namespace cudalab;
  const LabSpec spec = tiled_lab();
  BatchView b;
  b.lab_ids = {"03_tiling"};
  b.lab_max = {30};
  const auto graded = [&](const std::string& id, std::vector<GradedCheck> checks) {
    GradeDocument d;
    d.id = id;
    d.max_score = 30;
    GradedLab lab;
    lab.id = "03_tiling", lab.title = spec.title, lab.max_points = 30;
    lab.checks = std::move(checks);
    for (const auto& c : lab.checks) lab.points += c.score.points;
    d.score = lab.points;
    d.labs.push_back(lab);
    return d;
  };
  const auto square = [&](Verdict v, std::vector<std::string> f = {}, Cause cause = Cause::none) {
    return graded_check(spec.checks[0], v, std::move(f), cause);
  };
  const auto fast = [&](Verdict v, std::vector<std::string> f = {}) {
    return graded_check(spec.checks[1], v, std::move(f));
  };
  b.entries.push_back({"alice", graded("alice", {square(Verdict::pass), fast(Verdict::pass)}), ""});
  b.entries.push_back(
      {"bob",
       graded("bob", {square(Verdict::fail,
                             {"C(16, 0) is 3.5, expected 4.25",
                              "Diagnosis: the boundary checks. Right on every shape where M, N and K are "
                              "multiples of 16, wrong on every shape where K is not (K=9 at M=17 N=33 K=9)."},
                             Cause::boundary_checks),
                      fast(Verdict::not_run, {"not timed: 'square' failed"})}),
       ""});
  b.entries.push_back(
      {"carol",
       // The same cause in other words (its lead names the one ragged
       // dimension): one group; prose cut at its first full stop would not be.
       graded("carol",
              {square(Verdict::fail,
                      {"Diagnosis: the boundary checks: threads of the last partial tile must load 0 "
                       "for elements past the edge of the inputs (at M=33 N=5 K=5).\n"
                       "C(32, 4) is 0, expected 7.5"},
                      Cause::boundary_checks),
               fast(Verdict::not_run, {"not timed: 'square' failed"})}),
       ""});
  b.entries.push_back(
      {"dave",
       graded("dave", {square(Verdict::crash, {"Diagnosis: a __syncthreads() that some threads never reach."},
                              Cause::barrier_skipped),
                       fast(Verdict::not_run, {"not timed: 'square' failed"})}),
       ""});
  GradeDocument erin = graded("erin", {});
  erin.labs[0].status = LabStatus::build_failed;
  erin.labs[0].message = "matmul_tiled.cu(12): error: identifier \"tile\" is undefined";
  LatePenalty late;
  late.due = "2025-03-01T23:59:00+01:00", late.days = 2, late.per_day = 0.1, late.fraction = 0.2;
  late.reason = "2 days late: 20% of the points taken";
  erin.late = late;
  b.entries.push_back({"erin", erin, ""});
  b.entries.push_back({"frank", std::nullopt, "the export lists it without files"});
  return b;
}

}  // namespace testbed
