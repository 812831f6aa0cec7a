// grader/views/report_html.h: the graded submission as a page to look at.
//
// report.html beside results.json: every lab's checks with their messages,
// and for each speed check a chart of where the student's kernel stands: a
// roofline (FLOP per byte of the global-memory traffic each kernel requested,
// counted in CPU mode (traffic.h), against the GFLOP/s the GPU measured,
// under the GPU's DRAM slope and FP32 roof) when the kernel computes, a bandwidth chart
// (achieved GB/s against the DRAM peak) when it only moves data (a
// transpose, a vector add), with the reference and the lab's foils on it,
// and a gauge of its ratio against the pass and full-credit thresholds. The
// batch's index.html lists the submissions, each lab's score distribution
// and where the class failed (class_view.h).
// Self-contained: inline CSS and SVG, no script, nothing fetched; Gradescope
// can show it too (output_format "html"). Host-only (tested).
#pragma once

#include <string>
#include <vector>

#include "core/batch.h"
#include "core/grade_document.h"
#include "core/speed_chart.h"

namespace cudalab {

// &, <, >, " and ' as entities: student text (compiler output, names) is shown, never run.
std::string html_escape(const std::string& s);

// `text` escaped as html_escape does, each span between two backticks of one
// line a <code>: the labs' words (lab.toml's diagnoses and explanations, the
// causes) mark code as Markdown does, and the page shows it as code. A
// backtick without a partner on its line, or two together, stays as it is.
// The plain-text views keep the backticks.
std::string inline_code_html(const std::string& text);

// The chart as inline SVG ("" without points).
std::string speed_chart_svg(const SpeedChart& c, const std::string& title);

// A speed check's ratio (its speed outcome, core/score.h) on a scale with the
// lab.toml thresholds marked: where credit starts (credit.zero_at), the pass
// line (min_ratio) and full credit (credit.full_at), each labelled with its
// number, the student's ratio a point labelled "you: 1.12x"; "" for a check
// that is not a speed check or has no ratio (not timed, CPU mode).
std::string speed_gauge_svg(const std::string& check_id, const CheckScore& score);

// The page of one grade: the total, then each lab's checks in a table, then
// each check: a failing one's diagnosis first (check_diagnosis, in a block
// of its own), a speed check's gauge and chart, then its other messages; a
// check that passed in one line, its messages and chart folded away.
std::string report_html(const GradeDocument& g);

// The batch's page: each lab's score distribution (points against the
// number of submissions), the class view (class_view.h: per check, how many
// failed it and their three most common diagnoses), and a row per submission
// (its total, each lab's points, linked to its report.html, and its status).
std::string batch_html(const BatchView& batch);

}  // namespace cudalab
