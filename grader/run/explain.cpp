#include "run/explain.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cudalab/diagnosis.h"
#include "cudalab/replay.h"
#include "cudalab/vocabulary.h"
#include "run/checks.h"

namespace cudalab {

namespace {

// At or above this, a shared access's conflicts cost more than the access
// (2 conflicts: three passes instead of one); a padded tile counts 0.
constexpr double kConflicting = 1.0;
// Sectors per request this many times the ideal: uncoalesced. And at least
// this many sectors more than the ideal: a warp whose two rows each read one
// element (a 16 x 16 block's A load in a naive matmul) asks for 2 sectors
// where 1 would hold the 8 bytes, which is a broadcast's price, not a
// scattered access's.
constexpr double kScattered = 1.5;
constexpr double kScatteredExtra = 2;
// A line leads as uncoalesced only where its extra sectors are at least this
// share of all the kernel's global sectors: one scattered store per block
// costs little beside coalesced loads of every element.
constexpr double kScatteredShare = 0.1;
// Global bytes this many times the reference's, for the same calls: the
// reuse the reference makes is missing.
constexpr double kMoreTraffic = 1.5;

struct Line {
  std::string where, function, space, op;
  double requests = 0, conflicts = 0, sectors = 0, ideal = 0;  // sectors and ideal: per request
};

std::string where_of(const nlohmann::json& j) {
  const std::string file = j.value("file", "?");
  const int line = j.value("line", 0);
  // simt names files by their full path; the student knows their file by name.
  const auto slash = file.find_last_of('/');
  const std::string name = slash == std::string::npos ? file : file.substr(slash + 1);
  return line > 0 && name != "?" ? fmt::format("{}:{}", name, line) : std::string();
}

std::vector<Line> lines_of(const std::string& report_json) {
  const auto doc = nlohmann::json::parse(report_json, nullptr, false);
  std::vector<Line> lines;
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("lines") || !doc["lines"].is_array())
    return lines;
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
  return lines;
}

// What a lead needs of one kernel's count.
struct Counted {
  std::vector<Line> lines;
  double global_bytes = 0, global_sectors = 0;
  const Line* worst_shared = nullptr;  // the most bank conflicts per request
  const Line* worst_global = nullptr;  // the most sectors per request over its ideal
  bool uses_shared() const { return worst_shared != nullptr; }
  double worst_conflicts() const { return worst_shared ? worst_shared->conflicts : 0; }
  double worst_scatter() const { return worst_global ? worst_global->sectors / worst_global->ideal : 0; }
};

Counted counted(const std::string& report_json) {
  Counted c;
  c.lines = lines_of(report_json);
  for (const auto& l : c.lines) {
    if (l.space == "shared" && (!c.worst_shared || l.conflicts > c.worst_shared->conflicts))
      c.worst_shared = &l;
    if (l.space != "global") continue;
    c.global_sectors += l.sectors * l.requests;
    if (l.ideal > 0 &&
        (!c.worst_global || l.sectors / l.ideal > c.worst_global->sectors / c.worst_global->ideal))
      c.worst_global = &l;
  }
  c.global_bytes = 32 * c.global_sectors;
  return c;
}

std::string at(const Line& l) {
  std::string s = fmt::format("the {} {}", l.space, l.op);
  if (!l.where.empty()) s += " at " + l.where;
  if (!l.function.empty() && l.function != "??") s += " in " + l.function;
  return s;
}

// " The fix: ..." from lab.toml's [explain] where the lab has words for it.
std::string fix(const std::map<std::string, std::string>& words, const std::string& cause,
                const std::string& otherwise) {
  const auto w = words.find(cause);
  const std::string text = w != words.end() ? w->second : otherwise;
  if (text.empty()) return {};
  std::string t = text;
  while (!t.empty() && (t.back() == '.' || t.back() == ' ')) t.pop_back();
  return ": " + t;
}

// "grid (32, 32, 1), block (32, 8, 1)" of a launch the harness described
// ("kernel<<<grid (...), block (...)>>>", perhaps with its shared memory).
std::string configuration(const std::string& launch) {
  const auto g = launch.find("grid (");
  if (g == std::string::npos) return launch;
  const auto b = launch.find("block (", g);
  const auto close = b == std::string::npos ? std::string::npos : launch.find(')', b);
  return close == std::string::npos ? launch.substr(g) : launch.substr(g, close + 1 - g);
}

std::string human_bytes(double bytes) {
  if (bytes >= 1e9) return fmt::format("{:.2f} GB", bytes / 1e9);
  if (bytes >= 1e6) return fmt::format("{:.2f} MB", bytes / 1e6);
  if (bytes >= 1e3) return fmt::format("{:.1f} kB", bytes / 1e3);
  return fmt::format("{:.0f} B", bytes);
}

}  // namespace

const char* to_string(SlowCause c) {
  switch (c) {
    case SlowCause::none:
      return "none";
    case SlowCause::conflicts:
      return "conflicts";
    case SlowCause::uncoalesced:
      return "uncoalesced";
    case SlowCause::traffic:
      return "traffic";
    case SlowCause::launch:
      return "launch";
    case SlowCause::matches:
      return "matches";
  }
  return "none";
}

AccessCount access_count_of(const CheckResult& run, std::string report_json) {
  AccessCount c;
  c.report = std::move(report_json);
  c.timed_out = run.verdict == Verdict::timeout;
  const std::string prefix = kCountedLaunch;
  for (const auto& n : run.notes) {
    if (n.rfind(prefix, 0) != 0) continue;
    // "counted launch transpose(1024x1024): transpose_kernel<<<grid ...>>>"
    const auto colon = n.find("): ", prefix.size());
    if (colon == std::string::npos) continue;
    c.launches.emplace_back(n.substr(prefix.size(), colon + 1 - prefix.size()),
                            configuration(n.substr(colon + 3)));
  }
  return c;
}

AccessCount count_accesses(const RunContext& ctx, const LabSpec& lab, const CheckSpec& by,
                           const std::filesystem::path& binary, const std::filesystem::path& report) {
  RunContext ac = bare_run(ctx, binary);
  ac.access_out = report;
  // A check that names itself runs one call at a small shape (its counting
  // run); every launch of the harness's calls leaves a note of it.
  ac.extra_env.push_back("CUDALAB_TRAFFIC=student");
  std::filesystem::create_directories(report.parent_path());
  const CheckResult r = run_check(ac, lab, by);
  std::ifstream in(report, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  in.close();
  std::error_code ec;
  std::filesystem::remove(report, ec);
  return access_count_of(r, text.str());
}

std::string access_count_json(const AccessCount& c) {
  nlohmann::json launches = nlohmann::json::array();
  for (const auto& [call, cfg] : c.launches) launches.push_back({{"call", call}, {"launch", cfg}});
  return nlohmann::json{{"report", c.report}, {"launches", launches}}.dump() + "\n";
}

std::optional<AccessCount> access_count_from_json(const std::string& text) {
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("report") || !j["report"].is_string())
    return std::nullopt;
  AccessCount c;
  c.report = j["report"].get<std::string>();
  if (j.contains("launches") && j["launches"].is_array())
    for (const auto& l : j["launches"])
      if (l.is_object()) c.launches.emplace_back(l.value("call", ""), l.value("launch", ""));
  if (lines_of(c.report).empty()) return std::nullopt;
  return c;
}

SlowLead slow_lead(const AccessCount& yours, const AccessCount* reference,
                   const std::map<std::string, std::string>& words, const std::string& gpu_launch) {
  SlowLead lead;
  const Counted mine = counted(yours.report);
  if (mine.lines.empty()) return lead;
  Counted theirs;
  if (reference) theirs = counted(reference->report);
  const bool compared = reference && !theirs.lines.empty();
  const std::string on_gpu = gpu_launch.empty() ? "" : " (your launch on the GPU: " + gpu_launch + ")";

  // a. Bank conflicts the reference does not have.
  if (mine.worst_conflicts() >= kConflicting && (!compared || theirs.worst_conflicts() < kConflicting)) {
    const Line& l = *mine.worst_shared;
    lead.cause = SlowCause::conflicts;
    lead.where = l.where;
    lead.text = fmt::format(
        "shared-memory bank conflicts: {} averages {:.1f} bank conflicts per request (CPU mode's count on "
        "your kernel; 0 is none, 31 is a 32-way conflict{}), so each of those accesses takes up to {:.0f} "
        "passes instead of one{}",
        at(l), l.conflicts,
        compared ? fmt::format("; the reference's kernel averages at most {:.1f}", theirs.worst_conflicts())
                 : "",
        l.conflicts + 1,
        fix(words, "conflicts",
            "the threads of a warp reach the same bank; change the shared array's layout or the index so "
            "that consecutive threads touch consecutive 4-byte words"));
    return lead;
  }

  // b. A global line far from its ideal sectors, carrying a real share of the
  // traffic, more scattered than anything in the reference.
  const Line* scattered = nullptr;
  for (const auto& l : mine.lines) {
    if (l.space != "global" || l.ideal <= 0) continue;
    const double extra = (l.sectors - l.ideal) * l.requests;
    if (l.sectors < kScattered * l.ideal || l.sectors < l.ideal + kScatteredExtra ||
        extra < kScatteredShare * mine.global_sectors)
      continue;
    if (compared && l.sectors / l.ideal < kScattered * theirs.worst_scatter()) continue;
    if (!scattered || l.sectors / l.ideal > scattered->sectors / scattered->ideal) scattered = &l;
  }
  if (scattered) {
    lead.cause = SlowCause::uncoalesced;
    lead.where = scattered->where;
    lead.text = fmt::format(
        "global memory accesses not coalesced: {} averages {:.1f} 32-byte sectors per request where {:.1f} "
        "would do (CPU mode's count on your kernel{}){}{}",
        at(*scattered), scattered->sectors, scattered->ideal,
        compared ? fmt::format("; the reference's accesses average at most {:.1f} times their ideal",
                               theirs.worst_scatter())
                 : "",
        fix(words, "uncoalesced", "consecutive threads of a warp should touch consecutive addresses"),
        on_gpu);
    return lead;
  }
  // What follows compares with the reference; without its count nothing is
  // measured against, and no lead is better than a guess.
  if (!compared) return lead;

  // c. More global traffic than the reference for the same calls.
  if (theirs.global_bytes > 0 && mine.global_bytes >= kMoreTraffic * theirs.global_bytes) {
    lead.cause = SlowCause::traffic;
    lead.text = fmt::format(
        "more global-memory traffic: your kernel requests {} from global memory where the reference's "
        "requests {} for the same calls, {:.1f} times as much (32-byte sectors, counted in CPU mode), and "
        "its accesses coalesce{}",
        human_bytes(mine.global_bytes), human_bytes(theirs.global_bytes),
        mine.global_bytes / theirs.global_bytes,
        fix(words, "traffic", "each value the threads of a block share should come from global memory once"));
    return lead;
  }

  // d. The memory pattern matches: the launch, where it differs, call for call.
  const std::string same = fmt::format(
      "CPU mode counts your kernel's memory accesses as the reference's ({} of global traffic where the "
      "reference's requests {}, every access near its ideal sectors{})",
      human_bytes(mine.global_bytes), human_bytes(theirs.global_bytes),
      !mine.uses_shared() ? std::string()
      : mine.worst_conflicts() < 0.05
          ? std::string(", no bank conflicts in shared memory")
          : fmt::format(", at most {:.1f} bank conflicts per shared request", mine.worst_conflicts()));
  for (auto it = yours.launches.rbegin(); it != yours.launches.rend(); ++it) {
    const auto ref = std::find_if(reference->launches.rbegin(), reference->launches.rend(),
                                  [&](const auto& r) { return r.first == it->first; });
    if (ref == reference->launches.rend()) continue;
    if (ref->second != it->second) {
      lead.cause = SlowCause::launch;
      lead.text = fmt::format(
          "not the memory pattern: {}. What differs is the launch: for {} yours is {}, the reference's "
          "{}{}{}",
          same, it->first, it->second, ref->second, on_gpu,
          fix(words, "launch", "the block's shape and how many elements each thread handles"));
      return lead;
    }
    break;  // the last call both made, launched alike
  }
  lead.cause = SlowCause::matches;
  lead.text = fmt::format(
      "not the memory pattern: {}, and launched as the reference is. The time goes into the work each "
      "thread does between its accesses, which these counts do not see",
      same);
  return lead;
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
  return r.verdict == Verdict::fail && r.recorded_ratio().has_value();
}

void explain_by_access(const RunContext& ctx, const LabSpec& lab, const CheckSpec& by,
                       const std::filesystem::path& access_binary, const AccessCount* reference,
                       const std::filesystem::path& report, const std::string& launch, CheckResult& r) {
  RunContext look = ctx;
  look.role = RunRole::second_look;
  const AccessCount yours = count_accesses(look, lab, by, access_binary, report);
  if (yours.timed_out) {
    r.notes.push_back(
        "why this check was slow was not looked into: the grader counts a slow kernel's memory accesses in "
        "CPU "
        "mode, and there your launcher's kernels did not finish (a kernel that waits for another block, or "
        "for "
        "a kernel on another stream, waits for ever where blocks run one after the other)");
    return;
  }
  const SlowLead lead = slow_lead(yours, reference, lab.explain_words, launch);
  lead_by_access(lead.text, r);
  if (!lead.text.empty()) r.cause = cause_of(lead.cause);
}

Cause cause_of(SlowCause c) {
  switch (c) {
    case SlowCause::conflicts:
      return Cause::slow_conflicts;
    case SlowCause::uncoalesced:
      return Cause::slow_uncoalesced;
    case SlowCause::traffic:
      return Cause::slow_traffic;
    case SlowCause::launch:
      return Cause::slow_launch;
    case SlowCause::none:
    case SlowCause::matches:
      break;
  }
  return Cause::slow;
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
std::string loop_lead(CheckResult& r, const std::string& where, bool grid_stride) {
  r.cause = Cause::hang;
  return fmt::format("{}: the check did not finish within {} {}. {}", kLoopLead, limit_of(r), where,
                     loop_look(grid_stride));
}

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

// The causes whose leads name shared memory that no thread filled (CPU mode
// fills it with NaN): read from it, never written, or NaN stored from it.
bool unfilled_shared(Cause c) {
  return c == Cause::unwritten_shared || c == Cause::never_written || c == Cause::scattered_unwritten;
}

// A lead the GPU's values suggest without seeing why: stale shared memory
// or a skipped barrier can look like any of them.
bool guessed_from_values(Cause c) {
  return c == Cause::index_arithmetic || c == Cause::wrong_values || c == Cause::boundary_checks ||
         c == Cause::misplaced_stores || c == Cause::scattered_unwritten || c == Cause::one_tile_only ||
         c == Cause::large_shapes_only;
}

// A launch that failed, by its cause.
bool failed_launch(Cause c) {
  return c == Cause::launch_fails || c == Cause::empty_grid || c == Cause::block_too_large ||
         c == Cause::illegal_address;
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
  if (failed_launch(r.cause))
    return r.cause == Cause::illegal_address ? SecondOpinion::cpu_mode : SecondOpinion::none;
  if (r.cause == Cause::race) return have_racecheck ? SecondOpinion::racecheck : SecondOpinion::none;
  if (r.cause == Cause::barrier_skipped) return SecondOpinion::none;  // CPU mode's own finding already
  // A few wrong elements here and there, the same on a rerun: a race that
  // happened to bite the same way twice (an H200 did, on gallery 22) or an
  // off-by-one; racecheck tells them apart where it is installed.
  if (have_racecheck && r.cause == Cause::wrong_values) return SecondOpinion::racecheck;
  return SecondOpinion::cpu_mode;
}

bool merge_racecheck(const CheckResult& s, CheckResult& r) {
  if (s.failures.empty() || !starts(s.failures.front(), "compute-sanitizer")) return false;
  const auto lead = lead_of(r);
  if (lead == r.failures.end()) return false;
  const std::size_t i = lead - r.failures.cbegin();
  if (r.cause != Cause::race) {
    // Only a race report turns another lead into the race.
    if (s.failures.front().find(kRaceReported) == std::string::npos) return false;
    r.cause = Cause::race;
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

namespace {

// CPU mode's lead in place of the GPU's (failure i): `lead`, its cause, and
// why the GPU showed it otherwise (`on_gpu`, which follows "simulated
// threads").
void lead_seen_in_cpu_mode(CheckResult& r, std::size_t i, Cause cause, const std::string& lead,
                           const std::string& on_gpu) {
  r.cause = cause;
  r.failures[i] =
      lead + ". (Seen in CPU mode, where this check ran again on simulated threads" + on_gpu + ".)";
}

}  // namespace

bool merge_cpu_mode(const CheckResult& cpu, CheckResult& r, bool grid_stride) {
  const auto seen = lead_of(cpu);
  if (r.verdict == Verdict::timeout) {
    if (seen != cpu.failures.end() && cpu.cause == Cause::barrier_skipped) {
      drop_hang_causes(r);
      r.cause = Cause::barrier_skipped;
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
  if (failed_launch(r.cause)) {
    // An illegal address on the GPU: CPU mode's look leads where it names
    // shared memory, simt's store past the kernel's shared variables or the
    // NaN read from just past them.
    if (cpu.cause == Cause::shared_overrun) {
      r.cause = Cause::shared_overrun;
      r.failures[i] = text +
                      ". (Seen in CPU mode, where this check ran again on simulated threads, which see every "
                      "store to shared memory: on the GPU the launch only failed with an illegal address.)";
      return true;
    }
    if (!unfilled_shared(cpu.cause)) return false;
    const std::string on_gpu = "On the GPU: " + lead->substr(std::string(kLead).size());
    r.cause = Cause::shared_overrun;
    r.failures[i] =
        "Diagnosis: a read past the end of a __shared__ array, most likely: on the GPU the launch fails "
        "with an illegal address (below), and in CPU mode, where this check ran again on simulated "
        "threads and the memory just past the kernel's shared arrays holds NaN, " +
        text.substr(std::string(kLead).size()) + ".";
    r.failures.insert(r.failures.begin() + i + 1, on_gpu);
    return true;
  }
  // Shared memory that no thread wrote holds NaN in CPU mode, whatever was
  // there on the GPU: its wrong values read as an index or boundary problem
  // there (variant tile_column_not_loaded on an H200: "the index arithmetic"
  // at 16^3, "here and there" on the ragged shapes).
  if (cpu.cause == Cause::unwritten_shared && guessed_from_values(r.cause)) {
    lead_seen_in_cpu_mode(
        r, i, Cause::unwritten_shared, text,
        " and shared memory that no thread wrote holds NaN: on the GPU it holds whatever was "
        "there before, which reads as wrong values");
    return true;
  }
  const bool barrier = cpu.cause == Cause::barrier_skipped;
  // A race CPU mode saw (a rerun with the threads in another order changed
  // the result): on the GPU it bit the same way twice and read as something
  // else (gallery 23 on an H100: "the boundary checks", its few wrong
  // elements all on ragged shapes).
  if (!barrier && !(cpu.cause == Cause::race && r.cause != Cause::race)) return false;
  // One lead: the GPU's (a boundary or coverage guess) gives way; the
  // shapes and elements it found stay below as the detail.
  lead_seen_in_cpu_mode(r, i, barrier ? Cause::barrier_skipped : Cause::race, text,
                        barrier
                            ? ": on the GPU the threads that skip the barrier only leave stale shared "
                              "memory, which looks like a boundary or coverage problem"
                            : ": on the GPU the race gave the same wrong elements on a rerun, which looks "
                              "like a boundary or index problem");
  return true;
}

bool race_unconfirmed(const CheckResult& r) {
  const auto lead = lead_of(r);
  if (lead == r.failures.end() || r.cause != Cause::race) return false;
  const auto next = lead + 1;
  return next == r.failures.end() || !starts(*next, "racecheck");  // its report, or that it found none
}

bool merge_unconfirmed_race(const CheckResult& cpu, CheckResult& r) {
  if (!race_unconfirmed(r)) return false;
  const auto lead = lead_of(r);
  const std::size_t i = lead - r.failures.cbegin();
  const auto seen = lead_of(cpu);
  const std::string text = seen == cpu.failures.end() ? "" : sentence(*seen);
  if (seen != cpu.failures.end() && cpu.cause == Cause::barrier_skipped) {
    lead_seen_in_cpu_mode(
        r, i, Cause::barrier_skipped, text,
        ": on the GPU the threads that skip the barrier read shared memory the others had "
        "not filled yet, so the results changed from run to run, and racecheck found no race");
    return true;
  }
  if (seen != cpu.failures.end() && unfilled_shared(cpu.cause)) {
    r.cause = Cause::unwritten_shared;
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
  if (cpu.cause == Cause::race) return false;
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
  // kernel and names the barrier (Cause::barrier_skipped). A check that ran out of time
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
    // A lead from the values alone (a few wrong here and there) that
    // racecheck did not turn into a race: CPU mode's look may still see why.
    if (r.cause != Cause::race)
      return second_opinion(ctx, lab, check, SecondOpinion::cpu_mode, cpu_binary, r);
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
    if (r.verdict == Verdict::timeout || (lead != r.failures.end() && failed_launch(r.cause))) quick_look(c);
    const CheckResult cpu = run_check(c, lab, check);
    merge_cpu_mode(cpu, r, grid_stride_lab(lab));
    return cpu.verdict == Verdict::timeout;
  }
  return false;
}

}  // namespace cudalab
