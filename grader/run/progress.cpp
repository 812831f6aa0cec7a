#include "run/progress.h"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace cudalab {

namespace {

// Beyond this without a newline the output is no status line: dropped, so
// a flood without newlines cannot grow the buffer.
constexpr std::size_t kMaxPendingLine = 64 * 1024;
// A terminal's line redrawn more often than this flickers and costs a fast
// build its time.
constexpr double kRedraw_s = 0.1;
constexpr std::size_t kBarWidth = 20;
// What a terminal's line keeps for the numbers ("12/64 steps, 45 s, about 2
// min left") and, at least, for a detail worth showing.
constexpr std::size_t kNumbersRoom = 38, kDetailRoom = 15;

// Digits at `i` into `out`; false where there are none (or too many to be a count).
bool read_count(std::string_view s, std::size_t& i, std::size_t& out) {
  const std::size_t from = i;
  out = 0;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9' && i - from < 9; ++i)
    out = out * 10 + static_cast<std::size_t>(s[i] - '0');
  return i > from && (i == s.size() || s[i] < '0' || s[i] > '9');
}

// The steps under way, oldest first (see Progress).
std::mutex active_mutex;
std::vector<const Progress*> active;

}  // namespace

std::optional<NinjaStep> parse_ninja_status(std::string_view line) {
  while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) line.remove_suffix(1);
  NinjaStep step;
  std::size_t i = 1;
  if (line.empty() || line[0] != '[' || !read_count(line, i, step.finished) || i >= line.size() ||
      line[i++] != '/' || !read_count(line, i, step.total) || i >= line.size() || line[i++] != ']')
    return std::nullopt;
  // A compiler's "[5/3]" is no ninja step: ninja never finishes more than it has.
  if (step.total == 0 || step.finished > step.total) return std::nullopt;
  if (i < line.size() && line[i] != ' ') return std::nullopt;
  step.description = std::string(line.substr(std::min(line.size(), i + 1)));
  return step;
}

std::string time_left_text(std::size_t done, std::size_t total, double elapsed_s) {
  if (done < kProgressEstimateAfter || done >= total || elapsed_s <= 0) return {};
  const double left = elapsed_s / static_cast<double>(done) * static_cast<double>(total - done);
  // Seconds to the next 5 below a minute and a half, then whole minutes:
  // more digits than that would promise more than a rate can keep.
  if (left < 90) return fmt::format("about {} s left", 5 * std::max(1L, std::lround(std::ceil(left / 5))));
  return fmt::format("about {} min left", std::lround(left / 60));
}

ProgressOptions ProgressOptions::for_stderr() {
  ProgressOptions o;
  const char* env = std::getenv("CUDALAB_PROGRESS");
  o.show = !(env && std::string(env) == "0");
  const char* term = std::getenv("TERM");
  o.terminal = isatty(STDERR_FILENO) && !(term && std::string(term) == "dumb");
  winsize ws{};
  if (o.terminal && ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) o.width = ws.ws_col;
  return o;
}

Progress::Progress(std::string what, std::string unit, ProgressOptions options)
    : what_(std::move(what)), unit_(std::move(unit)), options_(std::move(options)) {
  start_ = series_start_ = last_update_ = now();
  {
    const std::lock_guard<std::mutex> lock(active_mutex);
    active.push_back(this);
  }
  if (options_.show && options_.ticker)
    ticker_ = std::thread([this] {
      std::unique_lock<std::mutex> lock(mutex_);
      while (!finished_) {
        stop_.wait_for(lock, std::chrono::milliseconds(250));
        if (!finished_) show_locked(now(), false);
      }
    });
}

Progress::~Progress() {
  finish(true);
}

bool Progress::inner_shown() const {
  const std::lock_guard<std::mutex> lock(active_mutex);
  const auto self = std::find(active.begin(), active.end(), this);
  return self != active.end() &&
         std::any_of(self + 1, active.end(), [](const Progress* p) { return p->shown_.load(); });
}

double Progress::now() const {
  if (options_.clock) return options_.clock();
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void Progress::update(std::size_t done, std::size_t total, const std::string& detail) {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (finished_) return;
  const double t = now();
  // A new count (ninja's build after its regeneration): its rate starts
  // where the last one ended.
  if (total != total_ || done < done_) {
    series_start_ = (done_ == 0 && total_ == 0) ? start_ : last_update_;
    done_before_ += done_;
  }
  done_ = done;
  total_ = total;
  if (!detail.empty()) detail_ = detail;
  last_update_ = t;
  show_locked(t, false);
}

void Progress::feed(std::string_view output) {
  std::vector<NinjaStep> steps;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    for (char c : output) {
      if (c != '\n' && c != '\r') {
        if (pending_.size() < kMaxPendingLine) pending_ += c;
        continue;
      }
      if (auto step = parse_ninja_status(pending_)) {
        steps.push_back(std::move(*step));
      } else if (total_ == 0 && steps.empty() && pending_.rfind("ninja:", 0) != 0) {
        // No count (Meson's configure): what it said last is what it does.
        const auto from = pending_.find_first_not_of(" \t");
        if (from != std::string::npos) detail_ = pending_.substr(from, 200);
      }
      pending_.clear();
    }
  }
  for (const auto& s : steps) update(s.finished, s.total, s.description);
}

void Progress::tick() {
  const std::lock_guard<std::mutex> lock(mutex_);
  show_locked(now(), false);
}

void Progress::finish(bool ok) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (finished_) return;
    finished_ = true;
    if (options_.show && shown_) {
      const double elapsed = now() - start_;
      std::string line;
      if (!ok)
        line = fmt::format("{}: failed after {:.0f} s", what_, elapsed) +
               (total_ ? fmt::format(" ({}/{} {})", done_, total_, unit_) : "");
      else if (total_)
        line = fmt::format("{}: done, {} {} in {:.0f} s", what_, done_before_ + total_, unit_, elapsed);
      else
        line = fmt::format("{}: done in {:.0f} s", what_, elapsed);
      // On a terminal the bar gives way to the last line.
      const std::string clear = options_.terminal ? "\r\033[K" : "";
      if (options_.write)
        options_.write(clear + line + "\n");
      else
        std::fputs((clear + line + "\n").c_str(), stderr);
    }
  }
  stop_.notify_all();
  if (ticker_.joinable()) ticker_.join();
  const std::lock_guard<std::mutex> lock(active_mutex);
  active.erase(std::remove(active.begin(), active.end(), this), active.end());
}

std::string Progress::text() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return text_locked(now());
}

std::string Progress::text_locked(double now) const {
  std::vector<std::string> parts;
  if (total_) parts.push_back(fmt::format("{}/{} {}", done_, total_, unit_));
  parts.push_back(fmt::format("{:.0f} s", now - start_));
  if (std::string left = time_left_text(done_, total_, now - series_start_); !left.empty())
    parts.push_back(std::move(left));
  if (!options_.terminal) {
    // A log line names the last unit done: where a build spends its time.
    std::string line = fmt::format("{}: {}", what_, fmt::join(parts, ", "));
    if (!detail_.empty()) line += fmt::format(" ({})", detail_.substr(0, 100));
    return line;
  }
  // One column short of the width: a line that wraps cannot be redrawn.
  // Where it does not fit, the bar goes first, then the end of `what`: the
  // numbers are what the line is for.
  const std::size_t fits = options_.width > 1 ? options_.width - 1 : 1;
  const std::string numbers = fmt::format("{}", fmt::join(parts, ", "));
  // The bar's width from the room the longest numbers leave, not these: a
  // bar that widens and narrows as the estimate comes and goes is hard to read.
  std::size_t bar_width = 0;
  for (std::size_t w : {kBarWidth, kBarWidth / 2})
    if (!bar_width && what_.size() + w + 3 + kNumbersRoom <= fits) bar_width = w;
  std::string bar;
  if (total_ && bar_width) {
    const std::size_t filled = std::min(bar_width, bar_width * done_ / total_);
    bar = " [" + std::string(filled, '#') + std::string(bar_width - filled, '.') + "]";
  }
  std::string what = what_;
  if (what.size() + bar.size() + 1 + numbers.size() > fits)
    what = what.substr(0, fits > numbers.size() + 4 ? fits - numbers.size() - 4 : 0) + "...";
  std::string line = what + bar + " " + numbers;
  if (!detail_.empty() && line.size() + 3 + kDetailRoom <= fits)
    line += " (" + detail_.substr(0, fits - line.size() - 3) + ")";
  if (line.size() > fits) line = line.substr(0, fits);
  return line;
}

void Progress::show_locked(double now, bool force) {
  if (!options_.show || finished_) return;
  if (!force && now - start_ < options_.delay_s) return;
  if (!force && inner_shown()) return;
  if (shown_ && !force && now - last_line_ < (options_.terminal ? kRedraw_s : options_.line_interval_s))
    return;
  const std::string text = text_locked(now);
  const std::string out = options_.terminal ? "\r" + text + "\033[K" : text + "\n";
  if (options_.write)
    options_.write(out);
  else {
    std::fputs(out.c_str(), stderr);
    std::fflush(stderr);
  }
  shown_ = true;
  last_line_ = now;
}

}  // namespace cudalab
