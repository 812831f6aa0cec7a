// The facts of the running check's shapes (cudalab/diagnosis.h's hooks):
// run.cpp and compare.cpp add to them while a check collects; diagnose()
// reads them (diagnosis.cpp).
#include <algorithm>
#include <cctype>
#include <string>
#include <utility>
#include <vector>

#include "cudalab/diagnosis.h"
#include "diagnosis_rules.h"

namespace cudalab::diagnosis {

namespace {

using detail::args_in;

struct State {
  bool on = false, paused = false;
  bool probed = false;         // accumulation_probed
  bool samples_shown = false;  // an output's wrong elements listed once in this check
  std::vector<ShapeFacts> shapes;
};

// One per thread: the grader judges several checks' evidence side by side,
// each collecting its own facts (a shared state raced: the grader crashed
// with SIGSEGV in a CPU-mode batch of the gallery). A test process collects
// on its one thread (simt's threads are fibers on it).
State& state() {
  thread_local State s;
  return s;
}

// The facts of the shape of `label`, added at the end the first time. By the
// shape alone: the expected values of a large shape come from the reference
// kernel, whose run labels the comparison that follows.
ShapeFacts& shape(const std::string& label) {
  auto& v = state().shapes;
  for (auto& s : v)
    if (args_in(s.label) == args_in(label)) return s;
  ShapeFacts f;
  f.label = label;
  const auto open = label.find('(');
  f.dims = parse_dims(open == std::string::npos ? label : label.substr(open + 1));
  v.push_back(std::move(f));
  return v.back();
}

}  // namespace

void begin() {
  state().on = true;
  state().probed = false;
  state().samples_shown = false;
  state().shapes.clear();
}

void end() {
  state().on = false;
}

bool collecting() {
  return state().on && !state().paused;
}

bool list_samples() {
  if (!collecting()) return true;
  const bool first = !state().samples_shown;
  state().samples_shown = true;
  return first;
}

void pause(bool paused) {
  state().paused = paused;
}

void launch_failed(const std::string& label, const std::string& error, const std::string& advice,
                   bool not_implemented, Cause cause) {
  if (!collecting()) return;
  ShapeFacts& f = shape(label);
  f.launch_failed = true;
  f.launch_cause = cause;
  f.not_implemented = not_implemented;
  f.launch_error = error;
  f.launch_advice = advice;
}

void compared(const std::string& label, const Comparison& c) {
  if (!collecting()) return;
  ShapeFacts& f = shape(label);
  f.compared = true;
  f.values = std::max(f.values, c.rows * c.cols);
  if (c.ok() || !f.values_ok) return;  // the first wrong output tells
  f.values_ok = false;
  f.output = c.name;
  f.pattern = c.pattern;
  f.elements = c.rows * c.cols;
  f.wrong = c.wrong;
  f.unwritten = c.unwritten;
  f.unwritten_trailing = c.unwritten_trailing;
  f.rows = c.rows;
  f.cols = c.cols;
  f.last_rows = c.unwritten_last_rows;
  f.last_cols = c.unwritten_last_cols;
  f.whole_rows = c.unwritten_rows;
  f.whole_cols = c.unwritten_cols;
  f.first_row = c.first_unwritten_row;
  f.first_col = c.first_unwritten_col;
  f.wrong_zero = c.wrong_zero;
  f.non_finite = c.non_finite;
  f.guard_nan = c.guard_nan;
  f.shared_nan = c.shared_nan;
  f.first_nan_row = c.first_nan_row;
  f.first_nan_col = c.first_nan_col;
  if (c.single() && !c.first.empty()) {
    f.got = c.first.front().got;
    f.expected = c.first.front().expected;
    f.allowed = c.allowed;
  }
}

void memory(const std::string& label, const std::vector<std::string>& problems) {
  if (!collecting() || problems.empty()) return;
  ShapeFacts& f = shape(label);
  for (const auto& p : problems)
    if (std::find(f.memory.begin(), f.memory.end(), p) == f.memory.end()) f.memory.push_back(p);
}

void input(const std::string& label, const std::string& name, int holds_nan) {
  if (!collecting()) return;
  ShapeFacts& f = shape(label);
  const bool first = f.inputs.empty();
  if (std::find(f.inputs.begin(), f.inputs.end(), name) == f.inputs.end()) f.inputs.push_back(name);
  // One input with a NaN makes "some"; else one of unknown contents, "not known".
  if (first || holds_nan == 1 || f.inputs_nan == 1)
    f.inputs_nan = first ? holds_nan : 1;
  else if (holds_nan == -1)
    f.inputs_nan = -1;
}

void rerun(const std::string& label, long long changed, bool reordered) {
  if (!state().on) return;
  shape(label).rerun_changed = changed;
  shape(label).rerun_reordered = reordered;
}

void barrier_skipped(const std::string& label, const std::string& what) {
  if (!collecting() || what.empty()) return;
  ShapeFacts& f = shape(label);
  if (f.barrier_skip.empty()) f.barrier_skip = what;
}

void accumulation_probed(const std::string& label, bool accumulates) {
  if (!state().on) return;
  state().probed = true;
  shape(label).accumulates = accumulates;
}

bool accumulation_probe_done() {
  return state().on && state().probed;
}

bool accumulation_found() {
  for (const auto& f : state().shapes)
    if (f.accumulates) return true;
  return false;
}

void launched(const std::string& label, const std::string& launch) {
  if (!collecting() || launch.empty()) return;
  shape(label).launch = launch;
}

void reference_launched(const std::string& label, const std::string& launch) {
  if (!collecting() || launch.empty()) return;
  shape(label).reference_launch = launch;
}

void loop_stops_short(const std::string& label, const std::string& dim, const std::vector<long long>& tiles) {
  if (!collecting()) return;
  ShapeFacts& f = shape(label);
  f.short_loop_tested = true, f.short_loop_tiles = tiles, f.short_loop_dim = dim;
}

bool rerun_done() {
  for (const auto& f : state().shapes)
    if (f.rerun_changed >= 0) return true;
  return false;
}

const std::vector<ShapeFacts>& facts() {
  return state().shapes;
}

std::vector<std::pair<std::string, long long>> parse_dims(const std::string& text) {
  std::vector<std::pair<std::string, long long>> out;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && !std::isalpha(static_cast<unsigned char>(text[i]))) ++i;
    std::size_t j = i;
    while (j < text.size() && (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_')) ++j;
    if (j < text.size() && text[j] == '=' && j > i) {
      std::size_t k = j + 1;
      while (k < text.size() && std::isdigit(static_cast<unsigned char>(text[k]))) ++k;
      if (k > j + 1) out.emplace_back(text.substr(i, j - i), std::stoll(text.substr(j + 1, k - j - 1)));
      i = k;
    } else {
      i = j + 1;
    }
  }
  return out;
}

}  // namespace cudalab::diagnosis
