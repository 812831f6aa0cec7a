#include "cudalab/vocabulary.h"

#include <array>
#include <utility>

namespace cudalab {

namespace {

// One table per enum: the spelling of each value, in declaration order.
template <typename E, std::size_t N>
using Table = std::array<std::pair<E, std::string_view>, N>;

constexpr Table<Verdict, 8> kVerdicts{{
    {Verdict::pass, "pass"},
    {Verdict::fail, "fail"},
    {Verdict::not_run, "not_run"},
    {Verdict::skipped, "skipped"},
    {Verdict::timeout, "timeout"},
    {Verdict::crash, "crash"},
    {Verdict::error, "error"},
    {Verdict::running, "running"},
}};

constexpr Table<CheckKind, 2> kCheckKinds{{
    {CheckKind::correctness, "correctness"},
    {CheckKind::speed, "speed"},
}};

constexpr Table<LabStatus, 5> kLabStatuses{{
    {LabStatus::graded, "graded"},
    {LabStatus::missing, "missing"},
    {LabStatus::build_failed, "build_failed"},
    {LabStatus::rejected, "rejected"},
    {LabStatus::not_run, "not_run"},
}};

template <typename E, std::size_t N>
std::string_view spell(const Table<E, N>& table, E value) {
  for (const auto& [e, s] : table)
    if (e == value) return s;
  return "?";
}

template <typename E, std::size_t N>
std::optional<E> parse(const Table<E, N>& table, std::string_view text) {
  for (const auto& [e, s] : table)
    if (s == text) return e;
  return std::nullopt;
}

template <typename E, std::size_t N>
std::string all(const Table<E, N>& table) {
  std::string out;
  for (const auto& [e, s] : table) {
    if (!out.empty()) out += ", ";
    out += s;
  }
  return out;
}

}  // namespace

std::string_view spelling(Verdict v) {
  return spell(kVerdicts, v);
}
std::string_view spelling(CheckKind k) {
  return spell(kCheckKinds, k);
}
std::string_view spelling(LabStatus s) {
  return spell(kLabStatuses, s);
}

std::optional<Verdict> parse_verdict(std::string_view s) {
  return parse(kVerdicts, s);
}
std::optional<CheckKind> parse_check_kind(std::string_view s) {
  return parse(kCheckKinds, s);
}
std::optional<LabStatus> parse_lab_status(std::string_view s) {
  return parse(kLabStatuses, s);
}

std::string spellings_of_verdicts() {
  return all(kVerdicts);
}
std::string spellings_of_check_kinds() {
  return all(kCheckKinds);
}
std::string spellings_of_lab_statuses() {
  return all(kLabStatuses);
}

}  // namespace cudalab
