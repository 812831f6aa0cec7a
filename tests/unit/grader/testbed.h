// tests/unit/grader/testbed.h: what the grader's unit tests share: lab 03 as
// they grade it, the grade document the views are written from, a variant's
// measured speed. Verdicts made up for them: judged_for_tests.h.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "calibrate.h"
#include "course.h"
#include "grade_document.h"

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

}  // namespace testbed
