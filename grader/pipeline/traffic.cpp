// grader/pipeline/traffic.cpp: the global-memory traffic of each kernel on a speed check's roofline,
// counted in CPU mode (traffic.h): the reference's and foils' once per reference build, the student's once
// per submission.
#include "run/traffic.h"

#include <fmt/format.h>

#include <fstream>
#include <map>
#include <sstream>

#include "core/speed_chart.h"
#include "pipeline/grader.h"
#include "pipeline/internal.h"
#include "run/explain.h"

namespace fs = std::filesystem;

namespace cudalab {

namespace {

std::string read_all(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::optional<CountedTraffic> Grader::reference_traffic(const RunContext& ctx, const LabSpec& lab,
                                                        const CheckSpec& check, const std::string& who,
                                                        std::string& error) {
  const std::string target = lab.id + "-tests-traffic";
  if (error = build_reference_target(lab, target); !error.empty()) return std::nullopt;
  const fs::path binary = build(kReferenceSlot) / "labs" / target;
  const fs::path file =
      slot_dir(cfg_.work_dir, kReferenceSlot) / "traffic" / lab.id / fmt::format("{}.{}.json", check.id, who);
  const std::lock_guard<std::mutex> lock(record_lock(file));
  std::error_code ec;
  // Kept from an earlier submission: the same for all of them, until the
  // reference is built again.
  if (fs::exists(file, ec) && fs::last_write_time(file, ec) >= fs::last_write_time(binary, ec))
    if (auto kept = traffic_from_json(read_all(file))) return kept;
  RunContext rc = ctx;
  rc.role = RunRole::reference;
  auto t = count_kernel_traffic(rc, lab, check, binary, who, error);
  if (!t) {
    error = fmt::format("the reference's {} kernel: {}", who == "student" ? "own" : who, error);
    return std::nullopt;
  }
  fs::create_directories(file.parent_path());
  const fs::path tmp = file.string() + fmt::format(".{}.tmp", run_stem(lab.id, check.id));
  std::ofstream(tmp) << traffic_json(*t);
  fs::rename(tmp, file, ec);
  return t;
}

std::optional<AccessCount> Grader::reference_access_count(const RunContext& ctx, const LabSpec& lab,
                                                          const CheckSpec& by, std::string& error) {
  // The solutions as the student files, instrumented as a submission's are:
  // the same run, counted the same way.
  const std::string target = lab.id + "-tests-access";
  if (error = build_reference_target(lab, target); !error.empty()) return std::nullopt;
  const fs::path binary = build(kReferenceSlot) / "labs" / target;
  const fs::path file = slot_dir(cfg_.work_dir, kReferenceSlot) / "explain" / lab.id / (by.id + ".json");
  const std::lock_guard<std::mutex> lock(record_lock(file));
  std::error_code ec;
  // Kept from an earlier submission: the same for all of them, until the
  // reference is built again.
  if (fs::exists(file, ec) && fs::last_write_time(file, ec) >= fs::last_write_time(binary, ec))
    if (auto kept = access_count_from_json(read_all(file))) return kept;
  RunContext rc = ctx;
  rc.role = RunRole::reference;
  const AccessCount c = count_accesses(rc, lab, by, binary,
                                       slot_dir(cfg_.work_dir, kReferenceSlot) / "explain" / lab.id /
                                           (run_stem(lab.id, by.id) + "-access.json"));
  const std::string kept = access_count_json(c);
  auto parsed = access_count_from_json(kept);
  if (!parsed) {
    error = fmt::format("the reference's run of '{}' in CPU mode recorded no accesses", by.id);
    return std::nullopt;
  }
  fs::create_directories(file.parent_path());
  const fs::path tmp = file.string() + fmt::format(".{}.tmp", run_stem(lab.id, by.id));
  std::ofstream(tmp) << kept;
  fs::rename(tmp, file, ec);
  return parsed;
}

void Grader::chart_traffic(const RunContext& ctx, const LabSpec& lab, const CheckSpec& check, int slot,
                           const CheckResult& timed, CheckResult& out) {
  // Only a roofline places kernels by their traffic: a memory-bound check's
  // bars (GB/s against the DRAM peak) need none, and an untimed check has
  // no chart.
  const SpeedChart chart = speed_chart(timed);
  if (chart.points.empty() || chart.memory_bound()) return;
  std::map<std::string, CountedTraffic> counts;
  std::string error;
  // The student's kernel: its lab's access build, the one a slow check's
  // explanation runs (second_looks.cpp), built here where none was yet.
  // Words only, within the submission's allowance (time_limits.h) as a
  // second look is: a kernel that never ends in CPU mode costs it once.
  const auto spent = [&] { return ctx.words && ctx.words->spent(); };
  const auto skipped = [&] {
    record_no_traffic(words_skipped_note(ctx.words->total_s(), "your kernel's count"), out);
  };
  if (spent()) return skipped();
  bool built = false;
  const std::string log = build_for_words(ctx, lab.id + "-tests-access", slot, built);
  if (!built && spent()) return skipped();
  if (!built) {
    // simt counts accesses through GCC's instrumentation: a build configured
    // with another compiler has no such target.
    record_no_traffic(log.find("unknown target") != std::string::npos
                          ? "this grading host's build has no CPU-mode access count (simt's needs GCC)"
                          : "your files did not build for CPU mode's access count",
                      out);
    return;
  }
  // Words only: a kernel that hangs in CPU mode holds the grade no longer
  // than a second look does.
  RunContext look = ctx;
  look.role = RunRole::second_look;
  auto mine = count_kernel_traffic(look, lab, check, build(slot) / "labs" / (lab.id + "-tests-access"),
                                   "student", error);
  if (spent()) return skipped();  // cut short: not the kernel's whole run
  if (!mine) {
    record_no_traffic("your kernel's count in CPU mode: " + error, out);
    return;
  }
  counts["student"] = *mine;
  // The others on the chart (the reference, the kernel it is compared with):
  // the same for every submission, kept per reference build.
  for (const auto& p : chart.points) {
    if (p.student) continue;
    auto theirs = reference_traffic(ctx, lab, check, p.who, error);
    if (!theirs) {
      record_no_traffic(error, out);
      return;
    }
    if (theirs->flops != mine->flops) {
      record_no_traffic(fmt::format("the {} kernel was counted at another size than yours", p.who), out);
      return;
    }
    counts[p.who] = *theirs;
  }
  record_traffic(counts, out);
}

}  // namespace cudalab
