#include "core/late.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>

#include "cudalab/manifest.h"

namespace cudalab {

namespace {

// Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (Howard
// Hinnant's days_from_civil): no time zone database, no locale.
std::int64_t days_from_civil(int y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return static_cast<std::int64_t>(era) * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

void civil_from_days(std::int64_t z, int& y, unsigned& m, unsigned& d) {
  z += 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  d = doy - (153 * mp + 2) / 5 + 1;
  m = mp < 10 ? mp + 3 : mp - 9;
  y = static_cast<int>(yoe) + static_cast<int>(era) * 400 + (m <= 2);
}

// A cursor over the text that reads fixed-width digits.
struct Cursor {
  const std::string& s;
  std::size_t i = 0;
  bool digits(int n, int& out) {
    out = 0;
    for (int k = 0; k < n; ++k, ++i) {
      if (i >= s.size() || !std::isdigit(static_cast<unsigned char>(s[i]))) return false;
      out = out * 10 + (s[i] - '0');
    }
    return true;
  }
  bool eat(char c) {
    if (i < s.size() && s[i] == c) return ++i, true;
    return false;
  }
  void spaces() {
    while (i < s.size() && s[i] == ' ') ++i;
  }
  bool done() const { return i == s.size(); }
};

}  // namespace

std::optional<Instant> parse_instant(const std::string& text, std::string& error) {
  const auto bad = [&](const std::string& why) {
    error = fmt::format("'{}' is not a date-time with a time zone ({}), e.g. 2026-12-05T23:41:07-05:00", text,
                        why);
    return std::nullopt;
  };
  Cursor c{text};
  int y, mo, d, h, mi, s = 0;
  if (!c.digits(4, y) || !c.eat('-') || !c.digits(2, mo) || !c.eat('-') || !c.digits(2, d))
    return bad("no date YYYY-MM-DD");
  if (mo < 1 || mo > 12 || d < 1 || d > 31) return bad("no such month or day");
  if (c.done()) return bad("a date alone, no time or zone");
  if (!c.eat('T') && !c.eat('t') && !c.eat(' ')) return bad("the time must follow T or a space");
  if (!c.digits(2, h) || !c.eat(':') || !c.digits(2, mi)) return bad("no time HH:MM");
  if (c.eat(':') && !c.digits(2, s)) return bad("seconds must be two digits");
  if (h > 23 || mi > 59 || s > 60) return bad("no such time of day");
  int ms = 0;
  if (c.eat('.') || c.eat(',')) {
    // Any number of fraction digits (Gradescope writes nine); milliseconds kept.
    int n = 0;
    while (!c.done() && std::isdigit(static_cast<unsigned char>(text[c.i]))) {
      if (n < 3) ms = ms * 10 + (text[c.i] - '0');
      ++n, ++c.i;
    }
    if (n == 0) return bad("a '.' without digits");
    for (; n < 3; ++n) ms *= 10;
  }
  c.spaces();
  int offset = 0;
  if (c.eat('Z') || c.eat('z')) {
  } else if (text.compare(c.i, 3, "UTC") == 0 || text.compare(c.i, 3, "GMT") == 0) {
    c.i += 3;
  } else if (c.i < text.size() && (text[c.i] == '+' || text[c.i] == '-')) {
    const int sign = text[c.i++] == '-' ? -1 : 1;
    int oh, om;
    if (!c.digits(2, oh)) return bad("the offset must be +HH:MM or +HHMM");
    c.eat(':');
    if (!c.digits(2, om) || oh > 23 || om > 59) return bad("the offset must be +HH:MM or +HHMM");
    offset = sign * (oh * 60 + om);
  } else {
    return bad(c.done() ? "no time zone" : "unexpected text after the time");
  }
  c.spaces();
  if (!c.done()) return bad("unexpected text after the time zone");
  Instant t;
  t.offset_minutes = offset;
  const std::int64_t local_s =
      days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d)) * 86400 + h * 3600 + mi * 60 +
      s;
  t.utc_ms = (local_s - offset * 60) * 1000 + ms;
  return t;
}

std::string iso8601(const Instant& t) {
  const std::int64_t local_ms = t.utc_ms + static_cast<std::int64_t>(t.offset_minutes) * 60000;
  std::int64_t days = local_ms / 86400000;
  std::int64_t rest = local_ms % 86400000;
  if (rest < 0) rest += 86400000, --days;
  int y;
  unsigned m, d;
  civil_from_days(days, y, m, d);
  const int ms = static_cast<int>(rest % 1000);
  const int secs = static_cast<int>(rest / 1000);
  const int off = std::abs(t.offset_minutes);
  std::string out = fmt::format("{:04d}-{:02d}-{:02d}T{:02d}:{:02d}:{:02d}", y, m, d, secs / 3600,
                                secs / 60 % 60, secs % 60);
  if (ms) out += fmt::format(".{:03d}", ms);
  return out + fmt::format("{}{:02d}:{:02d}", t.offset_minutes < 0 ? '-' : '+', off / 60, off % 60);
}

std::optional<Lateness> lateness(const Assignment& a, const Instant& submitted) {
  if (a.due.empty() || a.late_per_day <= 0) return std::nullopt;
  std::string error;
  const std::optional<Instant> due = parse_instant(a.due, error);
  if (!due)
    throw ManifestError(
        fmt::format("[[assignment]] {}: due = {}: a late rule counts days from a moment: give "
                    "due a time and zone, e.g. {}T23:59:00-05:00",
                    a.name, a.due, a.due.substr(0, 10)));
  Lateness l;
  const std::int64_t late_ms = submitted.utc_ms - due->utc_ms;
  if (late_ms <= 0) return l;  // on time, exactly at the due moment included
  constexpr std::int64_t kDay = 86400000;
  l.days = static_cast<int>((late_ms + kDay - 1) / kDay);
  const std::string days = fmt::format("{} day{} late", l.days, l.days == 1 ? "" : "s");
  if (l.days > a.late_max_days) {
    l.past_max_days = true;
    l.fraction = 1;
    l.reason = fmt::format("{}, more than the {} day{} late work is taken: no points", days, a.late_max_days,
                           a.late_max_days == 1 ? "" : "s");
    return l;
  }
  l.fraction = std::min(1.0, l.days * a.late_per_day);
  l.reason = fmt::format("{}: {:g}% of the points taken ({:g}% a day)", days,
                         std::round(l.fraction * 1000) / 10, a.late_per_day * 100);
  return l;
}

std::optional<LatePenalty> late_penalty(const Assignment& a, const SubmissionRecord& s) {
  if (s.time.empty() || a.due.empty() || a.late_per_day <= 0) return std::nullopt;
  std::string error;
  const std::optional<Instant> t = parse_instant(s.time, error);
  if (!t) throw ManifestError(fmt::format("submission time: {}", error));
  const std::optional<Lateness> l = lateness(a, *t);
  if (!l) return std::nullopt;
  LatePenalty p;
  p.due = a.due;
  p.per_day = a.late_per_day;
  p.max_days = a.late_max_days;
  p.days = l->days;
  p.fraction = l->past_max_days ? 1.0 : l->fraction;
  p.reason = l->reason;
  return p;
}

}  // namespace cudalab
