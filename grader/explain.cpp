#include "explain.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "checks.h"
#include "cudalab/diagnosis.h"
#include "cudalab/replay.h"

namespace cudalab {

namespace {

// At or above this, a shared access's conflicts cost more than the access
// (2 conflicts: three passes instead of one); a padded tile counts 0.
constexpr double kConflicting = 1.0;
// Sectors per request this many times the ideal: uncoalesced.
constexpr double kScattered = 1.5;

struct Line {
  std::string where, function, space, op;
  double requests = 0, conflicts = 0, sectors = 0, ideal = 0;
};

std::string where_of(const nlohmann::json& j) {
  const std::string file = j.value("file", "?");
  const int line = j.value("line", 0);
  // simt names files by their full path; the student knows their file by name.
  const auto slash = file.find_last_of('/');
  const std::string name = slash == std::string::npos ? file : file.substr(slash + 1);
  return line > 0 && name != "?" ? fmt::format("{}:{}", name, line) : std::string();
}

}  // namespace

std::string access_lead(const std::string& report_json, const std::string& launch) {
  const auto doc = nlohmann::json::parse(report_json, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("lines") || !doc["lines"].is_array()) return {};
  std::vector<Line> lines;
  for (const auto& j : doc["lines"]) {
    if (!j.is_object()) continue;
    Line l;
    l.where = where_of(j);
    l.function = j.value("function", "");
    l.space = j.value("space", "");
    l.op = j.value("op", "");
    l.requests = j.value("requests", 0.0);
    l.conflicts = j.value("bank_conflicts_per_request", 0.0);
    l.sectors = j.value("sectors_per_request", 0.0);
    l.ideal = l.requests > 0 ? j.value("ideal_sectors", 0.0) / l.requests : 0;
    if (l.requests > 0) lines.push_back(l);
  }
  if (lines.empty()) return {};
  const auto at = [](const Line& l) {
    std::string s = fmt::format("the {} {}", l.space, l.op);
    if (!l.where.empty()) s += " at " + l.where;
    if (!l.function.empty() && l.function != "??") s += " in " + l.function;
    return s;
  };
  const std::string yours = launch.empty() ? "" : " (your launch: " + launch + ")";
  const Line* worst_shared = nullptr;
  const Line* worst_global = nullptr;
  for (const auto& l : lines) {
    if (l.space == "shared" && (!worst_shared || l.conflicts > worst_shared->conflicts)) worst_shared = &l;
    if (l.space == "global" && l.ideal > 0 &&
        (!worst_global || l.sectors / l.ideal > worst_global->sectors / worst_global->ideal))
      worst_global = &l;
  }
  if (worst_shared && worst_shared->conflicts >= kConflicting)
    return fmt::format(
        "shared-memory bank conflicts: {} averages {:.1f} bank conflicts per request (CPU mode's count "
        "on your kernel; 0 is none, 31 is a 32-way conflict), so each of those accesses takes up to {:.0f} "
        "passes instead of one. The threads of a warp reach the same bank: reading a column of a float "
        "tile[32][32] does; pad the shared array by one column, tile[TILE][TILE + 1], so that a column "
        "spreads over all 32 banks",
        at(*worst_shared), worst_shared->conflicts, worst_shared->conflicts + 1);
  if (worst_global && worst_global->sectors >= kScattered * worst_global->ideal)
    return fmt::format(
        "uncoalesced global memory accesses: {} averages {:.1f} 32-byte sectors per request where "
        "{:.1f} would do (CPU mode's count on your kernel): consecutive threads of a warp should touch "
        "consecutive addresses{}",
        at(*worst_global), worst_global->sectors, worst_global->ideal, yours);
  if (worst_shared)
    return fmt::format(
        "not the memory pattern: CPU mode counts no bank conflicts (at most {:.1f} per shared request) and "
        "every global access at its ideal sectors, so the tile is padded and the accesses coalesce. What "
        "costs is how the work is launched{}: look at the block's shape and the elements each thread moves "
        "(a block of 32 x 32 threads moving one element each keeps fewer loads in flight per thread than "
        "32 x 8 threads moving four)",
        worst_shared->conflicts, yours);
  return fmt::format(
      "the kernel uses no shared memory (CPU mode's access report counts none), and its global accesses "
      "coalesce{}: stage the tile through shared memory so that both the reads and the writes run along rows",
      yours);
}

std::string describe_traced_launch(const std::string& trace_json) {
  replay::Trace t;
  std::string error;
  if (!replay::from_json(trace_json, t, error) || t.launches.empty()) return {};
  const replay::Launch& l = t.launches.front();
  std::string s = fmt::format("grid ({}, {}, {}), block ({}, {}, {})", l.grid[0], l.grid[1], l.grid[2],
                              l.block[0], l.block[1], l.block[2]);
  if (t.launches.size() > 1) s += fmt::format(", and {} more launches", t.launches.size() - 1);
  return s;
}

std::string first_sentence(const std::string& message) {
  const auto start = message.find_first_not_of(" \t\n");
  if (start == std::string::npos) return {};
  std::string line = message.substr(start, message.find('\n', start) - start);
  // "0.59x. On this GPU": a sentence ends at a period and a space ("0.59x"
  // itself holds a period).
  if (const auto end = line.find(". "); end != std::string::npos) line = line.substr(0, end + 1);
  return line;
}

bool grid_stride_lab(const LabSpec& lab) {
  if (lab.file.empty()) return false;
  const std::filesystem::path lab_dir = lab.file.parent_path();
  const std::filesystem::path solution_dir = lab_dir.parent_path().parent_path() / "solutions" / lab.id;
  for (const auto& f : lab.student_files)
    for (const auto& dir : {lab_dir, solution_dir}) {
      std::ifstream in(dir / f, std::ios::binary);
      std::stringstream text;
      text << in.rdbuf();
      if (text.str().find("gridDim") != std::string::npos) return true;
    }
  return false;
}

bool timed_and_failed(const CheckResult& r) {
  return r.verdict == Verdict::fail && std::any_of(r.measurements.begin(), r.measurements.end(),
                                                   [](const Measurement& m) { return m.key == "ratio"; });
}

void explain_by_access(const RunContext& ctx, const LabSpec& lab, const CheckSpec& by,
                       const std::filesystem::path& access_binary, const std::filesystem::path& report,
                       const std::string& launch, CheckResult& r) {
  RunContext ac = bare_run(ctx, access_binary);
  ac.access_out = report;
  run_check(ac, lab, by);
  std::ifstream in(report, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  in.close();
  std::error_code ec;
  std::filesystem::remove(report, ec);
  lead_by_access(access_lead(text.str(), launch), r);
}

void lead_by_access(const std::string& lead, CheckResult& r) {
  if (lead.empty()) return;
  // The lab's message names every cause a slow kernel may have (bank
  // conflicts, the block's shape, uncoalesced accesses); the counts name the
  // one it has, and the others must not follow it. Each failure keeps its
  // first sentence: how slow, against what.
  for (auto& f : r.failures) f = first_sentence(f);
  r.failures.insert(r.failures.begin(), "Diagnosis: " + lead + ".");
}

namespace {

constexpr const char* kLead = "Diagnosis: ";
// A hang with no barrier seen (CPU mode's own, or the GPU's second look).
// "Far longer": a grid-stride loop stepping by blockDim.x alone ends, after
// each thread went over the whole array (an unseen vector add, 2026-11-25).
constexpr const char* kLoopLead = "Diagnosis: a loop that never ends, or runs far longer than it should";
// The grid-stride clause only where the lab's launcher strides over the grid:
// in a tiled matmul it names a loop the student has not written.
std::string loop_look(bool grid_stride) {
  return grid_stride
             ? "Look for a loop whose index never advances or whose condition never turns false, or "
               "whose step is too small (a grid-stride loop must step by the whole grid, blockDim.x * "
               "gridDim.x)."
             : "Look for a loop whose index never advances (`t + TILE` where `t += TILE` belongs) or "
               "whose condition never turns false.";
}

// The causes a timed-out check's message offers (kHangCauses) go once a
// second look has named the one it had.
void drop_hang_causes(CheckResult& r) {
  r.failures.erase(std::remove(r.failures.begin(), r.failures.end(), std::string(kHangCauses)),
                   r.failures.end());
}

// "10 s (the least a check gets; ...)" of a timed-out check's message.
std::string limit_of(const CheckResult& r) {
  if (!r.failures.empty()) {
    const std::string& m = r.failures.front();
    const std::string from = "did not finish within ";
    if (const auto a = m.find(from); a != std::string::npos)
      return m.substr(a + from.size(), m.find(" and was stopped") - a - from.size());
  }
  return "its limit";
}

// The loop's lead for timed-out r: "... did not finish within <limit> <where>. Look for ...".
std::string loop_lead(const CheckResult& r, const std::string& where, bool grid_stride) {
  return fmt::format("{}: the check did not finish within {} {}. {}", kLoopLead, limit_of(r), where,
                     loop_look(grid_stride));
}
constexpr const char* kBarrierLead = "Diagnosis: a __syncthreads() that some threads never reach";
constexpr const char* kRaceLead = "Diagnosis: a race between threads";
constexpr const char* kLaunchLead = "Diagnosis: the launch fails";

std::vector<std::string>::const_iterator lead_of(const CheckResult& r) {
  return std::find_if(r.failures.begin(), r.failures.end(),
                      [](const std::string& f) { return f.rfind(kLead, 0) == 0; });
}

bool starts(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

// A race lead tells the student to run racecheck (diagnosis.h): once the
// grader has run it, its report (or that it found none) follows instead.
void drop_racecheck_advice(std::string& lead) {
  // Its words with the lab's id in place of LAB (diagnosis::racecheck_advice),
  // and "On a GPU," before them where the lead came from CPU mode.
  const std::string tail = "--sanitize=racecheck` names the line";
  const auto end = lead.find(tail);
  if (end == std::string::npos) return;
  auto at = lead.rfind(" `./cudalab test ", end);
  if (at == std::string::npos) return;
  const std::string on_gpu = " On a GPU,";
  if (at >= on_gpu.size() && lead.compare(at - on_gpu.size(), on_gpu.size(), on_gpu) == 0)
    at -= on_gpu.size();
  lead.erase(at, end + tail.size() - at);
  // "again. `./cudalab ...` names the line." leaves "again.."
  if (at > 0 && at < lead.size() && lead[at] == '.' && lead[at - 1] == '.') lead.erase(at, 1);
}

// A lead without its final period, to go on with "(Seen in CPU mode ...)".
std::string sentence(const std::string& lead) {
  return !lead.empty() && lead.back() == '.' ? lead.substr(0, lead.size() - 1) : lead;
}

// CPU mode's words for shared memory that no thread filled (NaN there).
bool names_unfilled_shared(const std::string& text) {
  return text.find("shared memory that no thread filled") != std::string::npos ||
         text.find("shared memory that was never filled") != std::string::npos;
}

// The check's small shapes only (cudalab::too_big_for_sanitizer), within the
// hang look's limit: a skipped barrier shows at 1 x 1 x 1, while all of
// gallery 60's ragged shapes took about 10 s in CPU mode (H100, 2026-11-25);
// an access past a shared array, or a race, shows at any shape.
void quick_look(RunContext& c) {
  c.role = RunRole::hang_look;
  c.extra_env.push_back("CUDALAB_QUICK_LOOK=1");
}

// The check's run with nothing of the grader's judging or timing: only its
// messages matter.
RunContext plain(const RunContext& ctx) {
  RunContext c = ctx;
  c.sanitizer.clear();
  c.reference_evidence.clear();
  c.evidence_out.clear();
  c.reference_s = 0;
  c.trace_out.clear();
  c.replay_trace.clear();
  c.replay_code.clear();
  c.access_out.clear();
  // Words, not points: a second look never holds a grade for long.
  c.role = RunRole::second_look;
  return c;
}

}  // namespace

SecondOpinion second_opinion_for(const CheckResult& r, bool have_racecheck) {
  if (r.kind != CheckKind::correctness) return SecondOpinion::none;
  if (r.verdict == Verdict::timeout) return SecondOpinion::cpu_mode;
  if (r.verdict != Verdict::fail) return SecondOpinion::none;
  const auto lead = lead_of(r);
  if (lead == r.failures.end()) return SecondOpinion::none;
  // A failed launch's error and configuration say it all, but for an illegal
  // address: past a __shared__ array it reads as one past the buffers (an
  // unseen tiled matmul with `k <= TILE`, H100 2026-11-25), where CPU mode
  // sees the shared memory.
  if (starts(*lead, kLaunchLead))
    return lead->find("cudaErrorIllegalAddress") != std::string::npos ? SecondOpinion::cpu_mode
                                                                      : SecondOpinion::none;
  if (starts(*lead, kRaceLead)) return have_racecheck ? SecondOpinion::racecheck : SecondOpinion::none;
  if (starts(*lead, kBarrierLead)) return SecondOpinion::none;  // CPU mode's own finding already
  // A few wrong elements here and there, the same on a rerun: a race that
  // happened to bite the same way twice (an H200 did, on gallery 22) or an
  // off-by-one; racecheck tells them apart where it is installed.
  if (have_racecheck && lead->find(", here and there") != std::string::npos) return SecondOpinion::racecheck;
  return SecondOpinion::cpu_mode;
}

bool merge_racecheck(const CheckResult& s, CheckResult& r) {
  if (s.failures.empty() || !starts(s.failures.front(), "compute-sanitizer")) return false;
  const auto lead = lead_of(r);
  if (lead == r.failures.end()) return false;
  const std::size_t i = lead - r.failures.cbegin();
  if (!starts(*lead, kRaceLead)) {
    // Only a race report turns another lead into the race.
    if (s.failures.front().find(kRaceReported) == std::string::npos) return false;
    r.failures[i] =
        "Diagnosis: a race between threads: a rerun on the same inputs did not show it, but racecheck "
        "(compute-sanitizer), run again on this check's small shapes, reports one, on the next line. In a "
        "kernel with shared memory, look for a missing __syncthreads() after the tile is loaded or before it "
        "is loaded again.";
  } else {
    drop_racecheck_advice(r.failures[i]);  // it ran: its lines follow
  }
  r.failures.insert(r.failures.begin() + i + 1,
                    "racecheck on the small shapes of this check: " + s.failures.front());
  return true;
}

bool merge_cpu_mode(const CheckResult& cpu, CheckResult& r, bool grid_stride) {
  const auto seen = lead_of(cpu);
  if (r.verdict == Verdict::timeout) {
    if (seen != cpu.failures.end() && starts(*seen, kBarrierLead)) {
      drop_hang_causes(r);
      r.failures.insert(r.failures.begin(),
                        sentence(*seen) +
                            ". (Seen in CPU mode, where this check ran again on simulated threads: on the "
                            "GPU the threads that reached the barrier waited there for the others, and the "
                            "check never finished.)");
      return true;
    }
    if (cpu.verdict == Verdict::timeout) {
      drop_hang_causes(r);
      r.failures.insert(r.failures.begin(),
                        loop_lead(r,
                                  fmt::format("on the GPU, and run again in CPU mode on its small shapes "
                                              "(simulated threads, which name a __syncthreads() that some "
                                              "threads skip) it did not finish within {:.0f} s either, "
                                              "with no such barrier seen",
                                              kHangLookLimit_s),
                                  grid_stride));
    }
    return cpu.verdict == Verdict::timeout;
  }
  const auto lead = lead_of(r);
  if (seen == cpu.failures.end() || lead == r.failures.end()) return false;
  const std::size_t i = lead - r.failures.cbegin();
  std::string text = sentence(*seen);
  if (starts(*lead, kLaunchLead)) {
    // An illegal address on the GPU: CPU mode's look leads where it names
    // shared memory, simt's store past the kernel's shared variables or the
    // NaN read from just past them.
    if (text.find(diagnosis::kSharedOverrun) != std::string::npos) {
      r.failures[i] = text +
                      ". (Seen in CPU mode, where this check ran again on simulated threads, which see every "
                      "store to shared memory: on the GPU the launch only failed with an illegal address.)";
      return true;
    }
    if (!names_unfilled_shared(text)) return false;
    const std::string on_gpu = "On the GPU: " + lead->substr(std::string(kLead).size());
    r.failures[i] =
        "Diagnosis: a read past the end of a __shared__ array, most likely: on the GPU the launch fails "
        "with an illegal address (below), and in CPU mode, where this check ran again on simulated "
        "threads and the memory just past the kernel's shared arrays holds NaN, " +
        text.substr(std::string(kLead).size()) + ".";
    r.failures.insert(r.failures.begin() + i + 1, on_gpu);
    return true;
  }
  const bool barrier = starts(*seen, kBarrierLead);
  // A race CPU mode saw (a rerun with the threads in another order changed
  // the result): on the GPU it bit the same way twice and read as something
  // else (gallery 23 on an H100: "the boundary checks", its few wrong
  // elements all on ragged shapes).
  if (!barrier && !(starts(*seen, kRaceLead) && !starts(*lead, kRaceLead))) return false;
  text += barrier
              ? ". (Seen in CPU mode, where this check ran again on simulated threads: on the GPU the "
                "threads that skip the barrier only leave stale shared memory, which looks like a "
                "boundary or coverage problem.)"
              : ". (Seen in CPU mode, where this check ran again on simulated threads: on the GPU the race "
                "gave the same wrong elements on a rerun, which looks like a boundary or index problem.)";
  // One lead: the GPU's (a boundary or coverage guess) gives way; the
  // shapes and elements it found stay below as the detail.
  r.failures[i] = text;
  return true;
}

bool race_unconfirmed(const CheckResult& r) {
  const auto lead = lead_of(r);
  if (lead == r.failures.end() || !starts(*lead, kRaceLead)) return false;
  const auto next = lead + 1;
  return next == r.failures.end() || !starts(*next, "racecheck");  // its report, or that it found none
}

bool merge_unconfirmed_race(const CheckResult& cpu, CheckResult& r) {
  if (!race_unconfirmed(r)) return false;
  const auto lead = lead_of(r);
  const std::size_t i = lead - r.failures.cbegin();
  const auto seen = lead_of(cpu);
  const std::string text = seen == cpu.failures.end() ? "" : sentence(*seen);
  if (starts(text, kBarrierLead)) {
    r.failures[i] = text +
                    ". (Seen in CPU mode, where this check ran again on simulated threads: on the GPU the "
                    "threads that skip the barrier read shared memory the others had not filled yet, so the "
                    "results changed from run to run, and racecheck found no race.)";
    return true;
  }
  if (names_unfilled_shared(text)) {
    r.failures[i] =
        "Diagnosis: threads read shared memory that no thread of their block wrote: on the GPU it holds "
        "whatever was there before, so the results changed from run to run, and racecheck "
        "(compute-sanitizer), run again on this check's small shapes, found no race. Every element the "
        "kernel reads from a tile must be loaded (or set to 0) by some thread first: compare the bounds "
        "check of the tile's load with the one of its use, and with the indices the tile is read at. In "
        "CPU mode, where this check ran again on simulated threads and such memory holds NaN: " +
        text.substr(std::string(kLead).size());
    return true;
  }
  // CPU mode's rerun, the threads in another order, changed the result too:
  // the race stands.
  if (starts(text, kRaceLead)) return false;
  drop_racecheck_advice(r.failures[i]);  // it ran, and found none
  r.failures.insert(
      r.failures.begin() + i + 1,
      "racecheck (compute-sanitizer), run again on this check's small shapes, found no race, and "
      "neither did CPU mode: the results may also change from run to run where threads read "
      "shared memory that no thread of their block wrote (a tile loaded only in part)");
  return true;
}

namespace {
bool loop_leads(CheckResult& r, const std::string& where, bool grid_stride) {
  if (r.verdict != Verdict::timeout || r.kind != CheckKind::correctness || lead_of(r) != r.failures.end())
    return false;
  drop_hang_causes(r);
  r.failures.insert(r.failures.begin(), loop_lead(r, where, grid_stride));
  return true;
}
}  // namespace

bool lead_hang_like(const std::string& hung, CheckResult& r, bool grid_stride) {
  return loop_leads(r,
                    fmt::format("on the GPU, nor did '{}' of this lab, which did not finish in CPU mode "
                                "either (simulated threads, which name a __syncthreads() that some "
                                "threads skip), with no such barrier seen",
                                hung),
                    grid_stride);
}

bool lead_hang_in_cpu_mode(CheckResult& r, bool grid_stride) {
  // simt does not wait for ever at a barrier: where every thread still running
  // waits at a __syncthreads() that others finished without, it stops the
  // kernel and names the barrier (kBarrierLead). A check that ran out of time
  // in CPU mode was therefore in a loop, or in far more work than it needs.
  return loop_leads(r,
                    "in CPU mode, whose simulated threads would have named a __syncthreads() that some "
                    "threads skip, and no such barrier was seen",
                    grid_stride);
}

bool second_opinion(const RunContext& ctx, const LabSpec& lab, const CheckSpec& check, SecondOpinion kind,
                    const std::function<std::filesystem::path()>& cpu_binary, CheckResult& r) {
  if (kind == SecondOpinion::racecheck) {
    RunContext c = plain(ctx);
    c.sanitizer = "racecheck";
    const CheckResult s = run_check(c, lab, check);
    merge_racecheck(s, r);
    if (s.verdict == Verdict::timeout) return true;
    if (!race_unconfirmed(r)) return false;
    const std::filesystem::path binary = cpu_binary();
    if (binary.empty()) return false;
    RunContext cc = plain(ctx);
    cc.binary = binary;
    quick_look(cc);  // the small shapes, as racecheck ran them
    const CheckResult cpu = run_check(cc, lab, check);
    if (cpu.verdict == Verdict::pass || cpu.verdict == Verdict::fail) merge_unconfirmed_race(cpu, r);
    return false;
  }
  if (kind == SecondOpinion::cpu_mode) {
    const std::filesystem::path binary = cpu_binary();
    if (binary.empty()) return false;
    RunContext c = plain(ctx);
    c.binary = binary;
    const auto lead = lead_of(r);
    if (r.verdict == Verdict::timeout || (lead != r.failures.end() && starts(*lead, kLaunchLead)))
      quick_look(c);
    const CheckResult cpu = run_check(c, lab, check);
    merge_cpu_mode(cpu, r, grid_stride_lab(lab));
    return cpu.verdict == Verdict::timeout;
  }
  return false;
}

}  // namespace cudalab
