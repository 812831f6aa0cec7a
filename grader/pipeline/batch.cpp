// grader/pipeline/batch.cpp: a batch over one or several GPUs: each worker stages its next submission while
// its GPU runs the current one.
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

std::vector<std::string> parse_gpus(const std::string& spec, int visible_count, const char* visible,
                                    std::string& error) {
  std::vector<std::string> names;  // what CUDA_VISIBLE_DEVICES calls GPU i
  if (visible && *visible) {
    std::stringstream in(visible);
    for (std::string item; std::getline(in, item, ',');)
      if (!item.empty()) names.push_back(item);
  }
  const auto name_of = [&](int i) {
    return i < static_cast<int>(names.size()) ? names[i] : std::to_string(i);
  };
  std::vector<std::string> out;
  if (visible_count <= 0) {
    error = "--gpus: no GPU is usable here";
    return out;
  }
  const auto is_number = [](const std::string& t) {
    return !t.empty() && t.size() < 6 &&
           std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (spec == "all") {
    for (int i = 0; i < visible_count; ++i) out.push_back(name_of(i));
    return out;
  }
  if (spec.find(',') == std::string::npos && is_number(spec)) {
    const int n = std::stoi(spec);
    if (n < 1 || n > visible_count) {
      error = fmt::format("--gpus {}: this machine has {} usable GPU{}", spec, visible_count,
                          visible_count == 1 ? "" : "s");
      return out;
    }
    for (int i = 0; i < n; ++i) out.push_back(name_of(i));
    return out;
  }
  std::stringstream in(spec);
  for (std::string item; std::getline(in, item, ',');) {
    const std::string t = item.size() > 0 && item[0] == ' ' ? item.substr(1) : item;
    if (!is_number(t) || std::stoi(t) >= visible_count) {
      error = fmt::format(
          "--gpus {}: '{}' is not a GPU here (\"all\", a count, or indices 0 to {} separated by commas)",
          spec, t, visible_count - 1);
      return {};
    }
    const std::string name = name_of(std::stoi(t));
    if (std::find(out.begin(), out.end(), name) != out.end()) {
      error = fmt::format("--gpus {}: GPU {} is named twice (one check at a time per GPU)", spec, t);
      return {};
    }
    out.push_back(name);
  }
  if (out.empty()) error = "--gpus: no GPU named";
  return out;
}

std::vector<BatchWorkerTime> grade_batch(
    Grader& grader, std::size_t count, const std::vector<std::string>& gpus, int slot_base,
    const std::function<Grader::Staged(std::size_t k, int slot)>& stage,
    const std::function<void(std::size_t k, SubmissionGrade* grade, const std::string& error)>& done) {
  const std::vector<std::string> devices = gpus.empty() ? std::vector<std::string>{""} : gpus;
  std::mutex m;
  std::size_t next = 0;
  const auto take = [&]() -> std::optional<std::size_t> {
    const std::lock_guard<std::mutex> lock(m);
    if (next >= count) return std::nullopt;
    return next++;
  };
  std::mutex report;
  std::vector<BatchWorkerTime> times(devices.size());
  using Clock = std::chrono::steady_clock;
  const auto seconds_since = [](Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
  };
  const auto worker = [&](std::size_t w) {
    BatchWorkerTime& time = times[w];
    time.gpu = devices[w];
    // Two slots per worker: its next submission builds in one while its GPU
    // runs the checks of the one staged in the other.
    const int slots[2] = {slot_base + static_cast<int>(2 * w), slot_base + static_cast<int>(2 * w + 1)};
    int turn = 0;
    struct Next {
      std::size_t k;
      std::future<Grader::Staged> staged;
    };
    const auto begin = [&](std::size_t k) {
      const int slot = slots[turn];
      turn ^= 1;
      return Next{k, std::async(std::launch::async, [&stage, k, slot] { return stage(k, slot); })};
    };
    std::optional<Next> cur;
    if (const auto k = take()) cur = begin(*k);
    while (cur) {
      std::optional<Next> after;
      std::string error;
      std::optional<SubmissionGrade> g;
      const Clock::time_point waited = Clock::now();
      try {
        Grader::Staged st = cur->staged.get();
        time.waiting_s += seconds_since(waited);
        if (const auto k = take()) after = begin(*k);
        st.gpu = devices[w];
        const Clock::time_point ran = Clock::now();
        g = grader.run(std::move(st));
        time.running_s += seconds_since(ran);
        ++time.graded;
      } catch (const std::exception& e) {
        error = e.what();
        if (!after)
          if (const auto k = take()) after = begin(*k);
      }
      {
        const std::lock_guard<std::mutex> lock(report);
        done(cur->k, g ? &*g : nullptr, error);
      }
      cur = std::move(after);
    }
  };
  std::vector<std::thread> threads;
  for (std::size_t w = 1; w < devices.size(); ++w) threads.emplace_back(worker, w);
  worker(0);
  for (auto& t : threads) t.join();
  return times;
}

std::string describe_batch_time(const std::vector<BatchWorkerTime>& workers, double wall_s) {
  std::string out;
  const double wall = std::max(wall_s, 1e-9);
  for (const auto& w : workers)
    out += fmt::format(
        "GPU {}: {} submission{}, grading {:.0f} s ({:.0f}% of {:.0f} s), waiting for builds {:.0f} s "
        "({:.0f}%)\n",
        w.gpu.empty() ? "(default)" : w.gpu, w.graded, w.graded == 1 ? "" : "s", w.running_s,
        100 * w.running_s / wall, wall_s, w.waiting_s, 100 * w.waiting_s / wall);
  return out;
}

std::size_t check_jobs(int configured, bool cpu_mode, unsigned cores) {
  if (configured > 0) return static_cast<std::size_t>(configured);
  const std::size_t n = std::max(1u, cores);
  return cpu_mode ? n : std::min<std::size_t>(8, n);
}

}  // namespace cudalab
