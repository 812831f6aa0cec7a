// cudalab/vocabulary_fmt.h: fmt prints the vocabulary's enums as their
// spellings: fmt::format("{}", Verdict::not_run) is "not_run". Apart from
// vocabulary.h so that the headers a lab's code may include do not bring fmt.
#pragma once

#include <fmt/format.h>

#include "cudalab/vocabulary.h"

// fmt prints each as its spelling: fmt::format("{}", Verdict::not_run) is "not_run".
template <>
struct fmt::formatter<cudalab::Verdict> : fmt::formatter<std::string_view> {
  template <typename Context>
  auto format(cudalab::Verdict v, Context& ctx) const {
    return fmt::formatter<std::string_view>::format(cudalab::spelling(v), ctx);
  }
};
template <>
struct fmt::formatter<cudalab::CheckKind> : fmt::formatter<std::string_view> {
  template <typename Context>
  auto format(cudalab::CheckKind k, Context& ctx) const {
    return fmt::formatter<std::string_view>::format(cudalab::spelling(k), ctx);
  }
};
template <>
struct fmt::formatter<cudalab::LabStatus> : fmt::formatter<std::string_view> {
  template <typename Context>
  auto format(cudalab::LabStatus s, Context& ctx) const {
    return fmt::formatter<std::string_view>::format(cudalab::spelling(s), ctx);
  }
};
