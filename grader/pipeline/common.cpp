// grader/pipeline/common.cpp: helpers the pipeline's stages share (declared in internal.h).
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <future>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "cudalab/replay.h"
#include "pipeline/grader.h"
#include "pipeline/internal.h"
#include "run/explain.h"
#include "run/policy.h"
#include "run/process.h"
#include "run/sandbox.h"
#include "run/submission.h"

namespace fs = std::filesystem;

namespace cudalab {

// The folders of a ':'-separated list in the environment that exist.
std::vector<fs::path> env_dirs(const char* var) {
  std::vector<fs::path> out;
  const char* v = std::getenv(var);
  std::stringstream in(v ? v : "");
  std::error_code ec;
  for (std::string item; std::getline(in, item, ':');)
    if (!item.empty() && item[0] == '/' && fs::is_directory(item, ec)) out.push_back(item);
  return out;
}

// Calls f(0) to f(count - 1), at most `jobs` at once, started in index order
// (a caller that sorts the longest first ends soon after it). The first
// exception is rethrown once the calls under way have finished; no call
// starts after it.
void for_each_side_by_side(std::size_t count, std::size_t jobs, const std::function<void(std::size_t)>& f) {
  std::atomic<std::size_t> next{0};
  std::exception_ptr failed;
  std::mutex lock;
  const auto worker = [&] {
    for (std::size_t i; (i = next++) < count;) {
      try {
        f(i);
      } catch (...) {
        const std::lock_guard<std::mutex> guard(lock);
        if (!failed) failed = std::current_exception();
        next = count;
      }
    }
  };
  std::vector<std::thread> threads;
  for (std::size_t w = 1; w < std::min(jobs, count); ++w)
    threads.emplace_back(worker);  // the caller is the last
  worker();
  for (auto& t : threads) t.join();
  if (failed) std::rethrow_exception(failed);
}

void TaskPool::add(std::function<void()> task) {
  const std::lock_guard<std::mutex> guard(lock_);
  if (!failed_) queue_.push_back(std::move(task));
  ready_.notify_one();
}

void TaskPool::run(std::size_t jobs) {
  std::vector<std::thread> threads;
  for (std::size_t w = 1; w < std::max<std::size_t>(1, jobs); ++w) threads.emplace_back([this] { work(); });
  work();  // the caller is the last
  for (auto& t : threads) t.join();
  if (failed_) std::rethrow_exception(failed_);
}

void TaskPool::work() {
  std::unique_lock<std::mutex> held(lock_);
  for (;;) {
    ready_.wait(held, [&] { return !queue_.empty() || running_ == 0; });
    if (queue_.empty()) return;  // and none running: nothing can add one
    std::function<void()> task = std::move(queue_.front());
    queue_.pop_front();
    ++running_;
    held.unlock();
    try {
      task();
    } catch (...) {
      const std::lock_guard<std::mutex> guard(lock_);
      if (!failed_) failed_ = std::current_exception();
      queue_.clear();
    }
    held.lock();
    --running_;
    ready_.notify_all();
  }
}

// CUDALAB_PROFILE=1: where a grade's time goes, on stderr ("+12.34 s  lab
// 03_tiling built"), to find what to cut. Off by default.
void profile(const std::string& what) {
  static const bool on = [] {
    const char* v = std::getenv("CUDALAB_PROFILE");
    return v && *v && std::string(v) != "0";
  }();
  if (!on) return;
  static const auto t0 = std::chrono::steady_clock::now();
  fmt::print(stderr, "+{:7.2f} s  {}\n",
             std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), what);
}

fs::path reference_binary(const fs::path& build, const LabSpec& lab, bool cpu_mode) {
  return build / "labs" / (lab.id + (cpu_mode ? "-tests-cpu" : "-tests"));
}

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  if (from.empty()) return;
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
}

fs::path slot_dir(const fs::path& work_dir, int slot) {
  if (slot == Grader::kReferenceSlot) return work_dir / "reference";
  return slot == 0 ? work_dir : work_dir / fmt::format("slot-{}", slot);
}

// Splits a compile command as Meson writes it (arguments with spaces quoted).
std::vector<std::string> split_command(const std::string& cmd) {
  std::vector<std::string> out;
  std::string cur;
  char quote = 0;
  bool have = false;
  for (std::size_t i = 0; i < cmd.size(); ++i) {
    const char c = cmd[i];
    if (quote) {
      if (c == quote)
        quote = 0;
      else if (c == '\\' && quote == '"' && i + 1 < cmd.size())
        cur += cmd[++i];
      else
        cur += c;
    } else if (c == '\'' || c == '"') {
      quote = c, have = true;
    } else if (c == ' ') {
      if (have || !cur.empty()) out.push_back(cur), cur.clear(), have = false;
    } else {
      cur += c;
    }
  }
  if (have || !cur.empty()) out.push_back(cur);
  return out;
}

// Whether compile_commands.json's entry `e` compiles the student file `f` of
// `lab` from the overlay: nvcc's object (GPU), or g++'s of its simt
// translation (CPU mode). labs/meson.build compiles them into a library of
// their own, linked last.
std::vector<std::string> compiler_argv(const std::string& cmd) {
  std::vector<std::string> argv = split_command(cmd);
  if (argv.size() > 1 && fs::path(argv[0]).filename() == "ccache") argv.erase(argv.begin());
  return argv;
}

bool student_object(const nlohmann::json& e, const fs::path& overlay, const LabSpec& lab,
                    const std::string& f, bool cpu) {
  const std::string src = (overlay / lab.id / f).string();
  const std::string prefix = "labs/lib" + lab.id + (cpu ? "-student-cpu.a.p/" : "-student.a.p/");
  const std::string cpu_src = "cpu-" + lab.id + "-" + f + ".cpp";
  const std::string file = e.is_object() ? e.value("file", "") : "";
  const bool mine = cpu ? file.size() >= cpu_src.size() &&
                              file.compare(file.size() - cpu_src.size(), cpu_src.size(), cpu_src) == 0
                        : file == src;
  return mine && e.value("output", "").rfind(prefix, 0) == 0;
}

bool student_output(const std::string& name, const std::vector<std::string>& lab_ids) {
  const auto starts = [&](const std::string& prefix) { return name.rfind(prefix, 0) == 0; };
  return std::any_of(lab_ids.begin(), lab_ids.end(), [&](const std::string& lab) {
    return starts("lib" + lab + "-student") || starts("cpu-" + lab + "-") || name == lab + "-tests" ||
           starts(lab + "-tests-") || starts(lab + "-tests.");
  });
}

std::size_t clear_student_outputs(const fs::path& build, const std::vector<std::string>& lab_ids) {
  std::size_t removed = 0;
  std::error_code ec;
  std::vector<fs::path> doomed;
  for (fs::directory_iterator it(build / "labs", ec), end; !ec && it != end; it.increment(ec))
    if (student_output(it->path().filename().string(), lab_ids)) doomed.push_back(it->path());
  for (const auto& p : doomed) {
    fs::remove_all(p, ec);
    if (ec)
      throw std::runtime_error(
          fmt::format("the grader could not remove {} from its build folder: {}", p.string(), ec.message()));
    ++removed;
  }
  return removed;
}

}  // namespace cudalab
