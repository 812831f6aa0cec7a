// What the diagnosis's rules share (diagnosis_rules.h): the questions they
// ask of a shape, and the lab's words their fixes are said in.
#include "diagnosis_rules.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <utility>

namespace cudalab::diagnosis {

namespace {

// The lab the test binary checks and its mode (set_lab); the grader, which
// judges evidence on several threads, never sets them.
std::string g_lab_id;
bool g_cpu_mode = false;
Words g_lab_words;                  // the test process's lab (set_lab)
thread_local const Words* g_words;  // the words of the diagnose() running on this thread

}  // namespace

void set_lab(const std::string& lab_id, bool cpu_mode, Words words) {
  g_lab_words = std::move(words);
  g_lab_id = lab_id;
  g_cpu_mode = cpu_mode;
}

std::string racecheck_advice() {
  if (g_lab_id.empty()) return kRacecheckAdvice;
  const std::string advice =
      fmt::format(" `./cudalab test {} --sanitize=racecheck` names the line", g_lab_id);
  // --sanitize needs a GPU: CPU mode says where it helps.
  return g_cpu_mode ? " On a GPU," + advice : advice;
}

namespace detail {

WordsScope::WordsScope(const Words* words) : saved_(g_words) {
  g_words = words ? words : &g_lab_words;
}

WordsScope::~WordsScope() {
  g_words = saved_;
}

// The lab's words begin as the general ones do: a capital after a full stop,
// lower case after a colon.
std::string fix(Cause cause, std::string general) {
  if (g_words)
    if (const auto it = g_words->find(cause); it != g_words->end() && !it->second.empty()) {
      std::string words = it->second;
      const auto letter = [](char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; };
      if (!general.empty() && letter(general[0]) && letter(words[0]))
        words[0] = std::isupper(static_cast<unsigned char>(general[0]))
                       ? static_cast<char>(std::toupper(static_cast<unsigned char>(words[0])))
                       : static_cast<char>(std::tolower(static_cast<unsigned char>(words[0])));
      return words;
    }
  return general;
}

std::string args_in(const std::string& label) {
  const auto open = label.find('('), close = label.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) return label;
  return label.substr(open + 1, close - open - 1);
}

std::string args_of(const ShapeFacts& f) {
  return args_in(f.label);
}

bool failed(const ShapeFacts& f) {
  return f.launch_failed || !f.values_ok || !f.memory.empty();
}

std::string join_names(const std::vector<std::string>& names) {
  if (names.empty()) return "";
  if (names.size() == 1) return names[0];
  std::string s;
  for (std::size_t i = 0; i + 1 < names.size(); ++i) s += (i ? ", " : "") + names[i];
  return s + " and " + names.back();
}

long long block_side(const ShapeFacts& f) {
  const auto at = f.launch.rfind("block (");
  if (at == std::string::npos) return 0;
  long long x = 0, y = 0;
  return std::sscanf(f.launch.c_str() + at, "block (%lld, %lld", &x, &y) == 2 ? std::max(x, y) : 0;
}

std::string right_examples(const std::vector<const ShapeFacts*>& good) {
  std::vector<std::string> right;
  for (const auto* g : good)
    if (right.size() < 2) right.push_back(args_of(*g));
  return join_names(right);
}

std::string launch_failure(const ShapeFacts& f) {
  std::string s = fmt::format("the launch fails at {} ({})", args_of(f), f.launch_error);
  if (!f.launch_advice.empty()) s += ": " + f.launch_advice;
  return s;
}

bool read_nan(const ShapeFacts& f) {
  return f.non_finite > 0 && f.shared_nan == 0 && f.inputs_nan != 1;
}

std::string inputs_or(const ShapeFacts& f) {
  if (f.inputs.empty()) return "an input";
  if (f.inputs.size() == 1) return f.inputs.front();
  std::string s;
  for (std::size_t i = 0; i + 1 < f.inputs.size(); ++i) s += (i ? ", " : "") + f.inputs[i];
  return s + " or " + f.inputs.back();
}

std::string though_inputs_hold_none(const ShapeFacts& f) {
  if (f.inputs_nan != 0 || f.inputs.empty()) return "";
  if (f.inputs.size() == 1) return fmt::format(" though {} holds none", f.inputs.front());
  return fmt::format(" though {} hold none", join_names(f.inputs));
}

}  // namespace detail

}  // namespace cudalab::diagnosis
