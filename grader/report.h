// grader/report.h: the console report for people (colour on a terminal).
#pragma once

#include <string>
#include <vector>

#include "checks.h"
#include "cudalab/manifest.h"
#include "score.h"

namespace cudalab {

struct Style {
  bool colour = false;
  bool verbose = false;
  static Style for_stdout(bool verbose);
};

void print_lab_header(const Style& style, const std::string& id, const std::string& title,
                      const std::string& context);
void print_check(const Style& style, const CheckSpec& spec, const CheckResult& result,
                 const CheckScore& score);
void print_lab_total(const Style& style, const std::string& id, double points, double max_points,
                     const std::string& label);

// "student 2.11 ms, naive 3.13 ms: 1.48x (needs 1.30x), 8149 GFLOP/s ..."
std::string describe_measurements(const CheckSpec& spec, const CheckResult& result);

}  // namespace cudalab
