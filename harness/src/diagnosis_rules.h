// diagnosis_rules.h: what the diagnosis's files share, private to
// harness/src. The rules that pick a check's lead (diagnosis.cpp for a check
// of arrays, diagnosis_one_value.cpp for a check of one value) ask the same
// questions of a shape and write their fixes in the same lab's words
// (diagnosis_rules.cpp); the hooks that collect the facts (diagnosis_facts.cpp)
// read a label's argument list as the leads do.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cudalab/diagnosis.h"
#include "cudalab/vocabulary.h"

namespace cudalab::diagnosis::detail {

// The shapes of one check, in the order they ran, and the same split into
// those that failed and those that passed.
struct Shapes {
  const std::vector<ShapeFacts>& all;
  std::vector<const ShapeFacts*> bad, good;
};
// A rule: the lead where its facts hold, else nothing (the next rule is tried).
using Rule = std::optional<Lead> (*)(const Shapes&);

// "M=17 N=33 K=9" of "matmul_tiled(M=17 N=33 K=9)".
std::string args_in(const std::string& label);
// "M=17 N=33 K=9" for the student (the label's argument list).
std::string args_of(const ShapeFacts& f);
// Whether the shape failed: its launch, its values or its memory.
bool failed(const ShapeFacts& f);
// "A", "A and B", "A, B and C".
std::string join_names(const std::vector<std::string>& names);
// The largest side of the block of a shape's launch ("...block (16, 16,
// 1)>>>"), 0 where no launch was seen.
long long block_side(const ShapeFacts& f);
// The first two right shapes, for "right on every shape where ... (these)".
std::string right_examples(const std::vector<const ShapeFacts*>& good);
// "the launch fails at n=1 (...): advice" of a shape whose launch failed.
std::string launch_failure(const ShapeFacts& f);

// A value computed from a read past the end of an input: NaN (the guard
// zones hold NaN, cudalab/buffer.h) that is not the output's fill nor CPU
// mode's shared-memory fill, where the inputs hold none (or are not known to).
bool read_nan(const ShapeFacts& f);
// "in", "A or B", "an input": what a read past the end read past.
std::string inputs_or(const ShapeFacts& f);
// " though A and B hold none" where the inputs are known to hold no NaN.
std::string though_inputs_hold_none(const ShapeFacts& f);

// The fix for `cause` in the lab's words (lab.toml's [diagnosis]), else the
// general words the lead was written with.
std::string fix(Cause cause, std::string general);
// The lab's words that fix() speaks with on this thread while it lives:
// `words`, or the test process's (set_lab) where that is nullptr. The grader
// judges checks of several labs side by side.
class WordsScope {
 public:
  explicit WordsScope(const Words* words);
  ~WordsScope();
  WordsScope(const WordsScope&) = delete;
  WordsScope& operator=(const WordsScope&) = delete;

 private:
  const Words* saved_;
};

// Whether every shape the check compared had one output value.
bool single_value_check(const std::vector<ShapeFacts>& facts);
// The lead of such a check (diagnosis_one_value.cpp), which speaks of the
// value, never of elements, rows or columns. Some shape failed.
Lead single_value_lead(const Shapes& shapes);

}  // namespace cudalab::diagnosis::detail
