#include "authoring/calibrate.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "authoring/calibration_table.h"
#include "authoring/expect.h"
#include "core/files.h"
#include "core/time_limits.h"
#include "run/checks.h"
#include "run/meson_project.h"
#include "run/process.h"

namespace fs = std::filesystem;

namespace cudalab::calibration {

std::vector<Participant> participants(const LabSpec& lab, const CheckSpec& check,
                                      const fs::path& variants_dir) {
  const fs::path vdir = variants_dir / lab.id;
  std::vector<std::string> variants;
  if (fs::is_directory(vdir))
    for (const auto& e : fs::directory_iterator(vdir))
      if (e.is_directory() && fs::exists(e.path() / "expect.toml"))
        variants.push_back(e.path().filename().string());
  std::sort(variants.begin(), variants.end());
  std::vector<Participant> out;
  for (const auto& v : variants) {
    const ExpectFile ex = load_expect(vdir / v / "expect.toml");
    const Expectation* e = ex.find(check.id);
    if (!e || (e->verdict != Verdict::pass && e->verdict != Verdict::fail)) continue;
    bool gated = false;
    for (const auto& req : check.required)
      if (const Expectation* r = ex.find(req); r && r->verdict != Verdict::pass) gated = true;
    if (!gated) out.push_back({v, e->verdict == Verdict::pass});
  }
  return out;
}

namespace {

struct Item {  // one variant on one speed check
  std::string lab, check_id, variant;
  bool correct = false;
};

struct LabPlan {
  LabSpec spec;
  std::vector<Item> items;
};

// The nvcc this program's build was configured with: it built the variant
// binaries that calibrate times ("" in a build without CUDA).
std::string nvcc_version() {
#ifdef CUDALAB_NVCC_VERSION
  return CUDALAB_NVCC_VERSION;
#else
  return "";
#endif
}

std::string today() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

std::string stamp() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
  return buf;
}

bool in_build_ninja(const fs::path& build_root, const std::string& rule) {
  return MesonProject(build_root).has_output(rule);
}

// The variants' test binaries are in tests/, the GPU probe in harness/.
bool compile_targets(const fs::path& build_root, const std::vector<std::string>& targets, bool verbose) {
  const MesonProject project(build_root);
  std::vector<std::string> outputs;
  for (const auto& t : targets) outputs.push_back(project.output_of(t, {"tests", "harness"}));
  const ProcessResult p = run_process(project.build(targets, outputs, 3600));
  if (p.ok()) return true;
  const std::string& out = p.output;
  fmt::print(stderr, "cudalab calibrate: the build failed ({}):\n{}\n", p.describe(),
             verbose || out.size() < 6000 ? out : "[...]\n" + out.substr(out.size() - 6000));
  return false;
}

// "" where a GPU is usable, else why not.
std::string probe_gpu(const Options& o, std::string& name) {
  if (!in_build_ninja(o.build_root, "harness/cudalab-gpuinfo"))
    return fmt::format("{} has no CUDA parts (nvcc was not found when it was configured)",
                       o.build_root.string());
  if (!o.no_build && !compile_targets(o.build_root, {"cudalab-gpuinfo"}, o.verbose))
    return "the GPU probe (cudalab-gpuinfo) did not build";
  const fs::path probe = o.build_root / "harness" / "cudalab-gpuinfo";
  if (!fs::exists(probe)) return fmt::format("the GPU probe {} is not built (--no-build)", probe.string());
  ProcessOptions opt;
  opt.argv = {probe.string()};
  opt.timeout_s = kGpuProbeLimit_s;
  const ProcessResult p = run_process(opt);
  const auto j = nlohmann::json::parse(p.output, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return "the GPU probe failed: " + p.describe();
  if (!j.value("usable", false)) return j.value("reason", std::string("no usable GPU"));
  std::string cc = j.value("compute_capability", "");
  cc.erase(std::remove(cc.begin(), cc.end(), '.'), cc.end());
  name = fmt::format("{} (sm_{})", j.value("name", "?"), cc);
  return {};
}

fs::path record_path(const fs::path& dir, const Item& it, int run) {
  return dir / it.lab / it.check_id / fmt::format("{}-{}.json", it.variant, run);
}

struct Reading {
  Measured m;
  std::vector<std::string> gpus;  // the records' gpu lines
  bool skipped = false;           // a record said: no usable GPU
  std::string skipped_reason;
};

// Reads <dir>/<lab>/<check>/<variant>-<n>.json, n = 1, 2, ...
Reading read_records(const fs::path& dir, const Item& it, const CheckSpec& check) {
  Reading r;
  r.m.variant = it.variant;
  r.m.correct = it.correct;
  for (int run = 1;; ++run) {
    const fs::path p = record_path(dir, it, run);
    if (!fs::exists(p)) break;
    ++r.m.runs;
    const std::string text = read_text(p);
    CheckResult cr;
    std::string skipped;
    const bool ok = parse_check_record(text, check.name, cr, &skipped);
    const auto doc = nlohmann::json::parse(text, nullptr, false);
    if (doc.is_object() && doc.contains("gpu") && doc["gpu"].is_string()) r.gpus.push_back(doc["gpu"]);
    if (!skipped.empty()) {
      r.skipped = true;
      r.skipped_reason = skipped;
    }
    if (!ok) {
      if (r.m.problem.empty())
        r.m.problem = skipped.empty() ? fmt::format("run {}: no result for the check in {}", run, p.string())
                                      : "skipped: " + skipped;
      continue;
    }
    r.m.verdicts.push_back(cr.verdict);
    const std::optional<double> ratio = cr.recorded_ratio();
    if (!ratio) {
      if (r.m.problem.empty()) {
        std::string why = cr.failures.empty() ? std::string(spelling(cr.verdict)) : cr.failures.front();
        if (const auto nl = why.find('\n'); nl != std::string::npos) why.resize(nl);
        if (why.size() > 140) why = why.substr(0, 137) + "...";
        r.m.problem = why;
      }
      continue;
    }
    r.m.ratios.push_back(*ratio);
    if (const Measurement* n = cr.find("noise")) r.m.noise.push_back(n->value);
  }
  return r;
}

std::string range_text(const Measured& m) {
  if (m.ratios.empty()) return "no ratio";
  if (m.ratios.size() == 1) return fmt::format("{:.3f}", m.ratios[0]);
  return fmt::format("{:.3f} ({:.3f}-{:.3f})", m.median(), m.lowest(), m.highest());
}

std::string verdict_text(const Measured& m) {
  if (m.verdicts.empty()) return "-";
  const auto passes = std::count(m.verdicts.begin(), m.verdicts.end(), Verdict::pass);
  if (passes == static_cast<long>(m.verdicts.size())) return "pass";
  if (passes == 0) return "fail";
  return fmt::format("pass {}/{}", passes, m.verdicts.size());
}

std::string credit_text(const std::optional<Credit>& c) {
  return c ? fmt::format("credit {} to {}", format_number(c->zero_at), format_number(c->full_at))
           : "no credit curve";
}

}  // namespace

// --- the steps of run_calibration ---------------------------------------------

namespace {

struct Row {  // a line of the summary at the end
  std::string lab, check, reference, proposal, margins;
};

// What the steps of run_calibration share, in the order they fill it.
struct Calibrating {
  Options o;                   // as given, with the default folders filled in
  bool dry = false;            // --from-records: read an earlier run's records, time nothing
  std::vector<LabPlan> plans;  // per lab, every speed check and its participants
  std::string gpu_name;        // the probe's "NAME (sm_XY)" ("" in a dry run)
  fs::path records;            // the records read (and, timing, written first)
  // The table entries' provenance: when, built with which nvcc, from which records.
  std::string date, nvcc, source;
  std::string record_gpu;  // the first gpu line of the records read
  bool any_not_met = false;
  std::vector<Row> summary;
  std::map<std::string, std::string> new_text;  // lab.toml path -> edited text
  std::vector<TableEntry> entries;              // the GPU's table: the checks calibrated
};

// One speed check: its variants' measurements and the proposal.
struct CheckRun {
  CheckRun(const LabPlan& plan, const CheckSpec& check) : plan(plan), check(check) {}
  const LabPlan& plan;
  const CheckSpec& check;
  std::vector<Measured> measured;
  std::string device;  // this check's records' GPU line
  double current_min = 0;
  Proposal p;
};

// A step's outcome: the exit code to stop with, or none to go on.
using Stop = std::optional<int>;

Calibrating start_calibrating(const Options& in) {
  Calibrating c;
  c.o = in;
  if (c.o.labs_dir.empty()) c.o.labs_dir = c.o.source_root / "labs";
  if (c.o.variants_dir.empty()) c.o.variants_dir = c.o.source_root / "tests" / "variants";
  c.dry = !c.o.from_records.empty();
  c.records = c.o.from_records;
  return c;
}

// The instructor's tree (tests/variants) and --runs.
Stop check_options(const Calibrating& c) {
  if (!fs::is_directory(c.o.variants_dir)) {
    fmt::print(
        stderr,
        "cudalab calibrate: {} is missing: calibration times the known student files (tests/variants/, "
        "the correct alternatives and the mistakes) against the reference, and those are in the "
        "instructor's tree only, not in a student release. Run it from the full course repository.\n",
        c.o.variants_dir.string());
    return kUsage;
  }
  if (c.o.runs < 1) {
    fmt::print(stderr, "cudalab calibrate: --runs must be at least 1\n");
    return kUsage;
  }
  // The labs are read, and with --write written, there: a folder, not a guess.
  if (!fs::is_directory(c.o.labs_dir)) {
    fmt::print(stderr,
               "cudalab calibrate: {} is not a folder of labs (--labs-dir: the folder of <lab>/lab.toml)\n",
               c.o.labs_dir.string());
    return kUsage;
  }
  return std::nullopt;
}

// What to time: per lab (those named, else every lab), every speed check and
// its participants.
Stop plan_labs(Calibrating& c) {
  std::vector<std::string> labs = c.o.labs;
  if (labs.empty()) {
    for (const auto& e : fs::directory_iterator(c.o.labs_dir))
      if (e.is_directory() && fs::exists(e.path() / "lab.toml")) labs.push_back(e.path().filename().string());
    std::sort(labs.begin(), labs.end());
  }
  for (const auto& lab : labs) {
    LabPlan plan;
    try {
      plan.spec = load_lab(c.o.labs_dir / lab / "lab.toml");
    } catch (const ManifestError& e) {
      fmt::print(stderr, "cudalab calibrate: {}\n", e.what());
      return kUsage;
    }
    try {
      for (const auto& check : plan.spec.checks)
        if (check.kind == CheckKind::speed)
          for (const auto& v : participants(plan.spec, check, c.o.variants_dir))
            plan.items.push_back({lab, check.id, v.variant, v.correct});
    } catch (const ManifestError& e) {
      fmt::print(stderr, "cudalab calibrate: {}\n", e.what());
      return kUsage;
    }
    c.plans.push_back(std::move(plan));
  }
  return std::nullopt;
}

// A usable GPU (else exit 3), and the folder its runs' records go to.
Stop probe(Calibrating& c) {
  const std::string why = probe_gpu(c.o, c.gpu_name);
  if (!why.empty()) {
    fmt::print(
        stderr,
        "cudalab calibrate: calibration needs a GPU, and there is none usable here: {}.\n"
        "It times each speed check's reference against the known student files on the course's GPU: run "
        "it there. (`--from-records DIR` reads the records of an earlier run instead.) Exit code {}.\n",
        why, kNeedsGpu);
    return kNeedsGpu;
  }
  c.records = c.o.records_dir.empty() ? c.o.build_root / "calibration" / stamp() : c.o.records_dir;
  return std::nullopt;
}

// The variants' test binaries: each configured in the build, then built
// (unless --no-build). --build-only ends the run here.
Stop build_variants(const Calibrating& c) {
  std::vector<std::string> targets;
  for (const auto& plan : c.plans)
    for (const auto& it : plan.items) {
      const std::string t = it.lab + "-variant-" + it.variant;
      if (std::find(targets.begin(), targets.end(), t) == targets.end()) targets.push_back(t);
    }
  for (const auto& t : targets)
    if (!in_build_ninja(c.o.build_root, "tests/" + t)) {
      fmt::print(stderr,
                 "cudalab calibrate: {} has no target {}: configure it with nvcc on the GPU host "
                 "(-Dvariants=auto, the default, builds the GPU variants where a GPU is visible; "
                 "-Dvariants=true always)\n",
                 c.o.build_root.string(), t);
      return kUsage;
    }
  fmt::print("GPU: {}\n", c.gpu_name);
  if (!c.o.no_build && !targets.empty()) {
    fmt::print("building {} variant test binaries in {} (minutes the first time) ...\n", targets.size(),
               c.o.build_root.string());
    std::fflush(stdout);
    if (!compile_targets(c.o.build_root, targets, c.o.verbose)) return kNotMet;
  }
  if (c.o.build_only) {
    fmt::print("built; nothing timed (--build-only)\n");
    return kCalibrated;
  }
  return std::nullopt;
}

// One run of a variant on a speed check, into its record; what the progress
// line says of it.
std::string time_one(const Calibrating& c, const LabPlan& plan, const Item& it, int run) {
  const CheckSpec& check = *plan.spec.find_by_id(it.check_id);
  const fs::path rec = record_path(c.records, it, run);
  fs::create_directories(rec.parent_path());
  fs::remove(rec);
  ProcessOptions opt;
  opt.argv = {(c.o.build_root / "tests" / (it.lab + "-variant-" + it.variant)).string(),
              "--record",
              rec.string(),
              "--lab-toml",
              fs::absolute(plan.spec.file).string(),
              check.name};
  opt.timeout_s = check.timeout_s > 0 ? check.timeout_s : plan.spec.timeout_s;
  const ProcessResult p = run_process(opt);
  CheckResult cr;
  if (fs::exists(rec) && parse_check_record(read_text(rec), check.name, cr)) {
    const Measurement* r = cr.find("ratio");
    const Measurement* n = cr.find("noise");
    return r ? fmt::format("ratio {:.3f}{}, {}", r->value, n ? fmt::format(" (noise {:.2f}%)", n->value) : "",
                           cr.verdict)
             : fmt::format("no ratio, {}", cr.verdict);
  }
  std::string line = "no record (" + p.describe() + ")";
  if (c.o.verbose) line += "\n" + p.output;
  return line;
}

// Every variant on every speed check, --runs times, each run its own process.
void time_runs(const Calibrating& c) {
  // When, where and built with what: a later --from-records dates its
  // table entries from this.
  fs::create_directories(c.records);
  std::ofstream(c.records / "calibration.json")
      << nlohmann::json{{"gpu", c.gpu_name}, {"date", today()}, {"runs", c.o.runs}, {"nvcc", nvcc_version()}}
             .dump(2)
      << "\n";
  std::size_t total = 0;
  for (const auto& plan : c.plans) total += plan.items.size();
  total *= static_cast<std::size_t>(c.o.runs);
  fmt::print(
      "timing: {} runs (each variant and speed check {} times, each run its own process); records in {}\n",
      total, c.o.runs, c.records.string());
  // An earlier run's records in the same folder must not count with these.
  for (const auto& plan : c.plans)
    for (const auto& it : plan.items)
      for (int run = 1; fs::exists(record_path(c.records, it, run)); ++run)
        fs::remove(record_path(c.records, it, run));
  std::size_t done = 0;
  // Run r of everything before run r + 1: a drift of the GPU's speed over
  // the session then spreads over all variants alike.
  for (int run = 1; run <= c.o.runs; ++run)
    for (const auto& plan : c.plans)
      for (const auto& it : plan.items) {
        const std::string line = time_one(c, plan, it, run);
        fmt::print("  [{:>3}/{}] {} {} {} run {}: {}\n", ++done, total, it.lab, it.check_id, it.variant, run,
                   line);
        std::fflush(stdout);
      }
}

// The table entries' provenance: the date and nvcc of the run that wrote the
// records (its calibration.json), and where the records are.
void read_provenance(Calibrating& c) {
  c.date = today();
  c.nvcc = c.dry ? "" : nvcc_version();
  if (const auto meta = nlohmann::json::parse(read_text(c.records / "calibration.json"), nullptr, false);
      meta.is_object() && meta.contains("date") && meta["date"].is_string()) {
    c.date = meta["date"].get<std::string>();
    if (meta.contains("nvcc") && meta["nvcc"].is_string()) c.nvcc = meta["nvcc"].get<std::string>();
    if (c.dry) fmt::print("measured on {}, {}\n", meta.value("gpu", std::string("?")), c.date);
  }
  // Where a table entry's measurements are: the records' folder, as named
  // from the source tree where it lies inside it.
  const fs::path records = fs::absolute(c.records).lexically_normal();
  std::string source = records.string();
  if (const fs::path rel = records.lexically_relative(fs::absolute(c.o.source_root).lexically_normal());
      !rel.empty() && *rel.begin() != "..")
    source = rel.string();
  c.source = fmt::format("cudalab calibrate{}: the records in {}", c.dry ? " --from-records" : "", source);
}

// Each participant's records. A run that had no GPU ends calibration (exit 3).
Stop measure(Calibrating& c, CheckRun& k) {
  for (const auto& it : k.plan.items) {
    if (it.check_id != k.check.id) continue;
    Reading r = read_records(c.records, it, k.check);
    if (r.skipped && r.m.ratios.empty()) {
      fmt::print(
          stderr,
          "cudalab calibrate: the records of {} {} say the run had no usable GPU ({}): calibration needs "
          "a GPU. Exit code {}.\n",
          it.lab, it.variant, r.skipped_reason, kNeedsGpu);
      return kNeedsGpu;
    }
    if (k.device.empty() && !r.gpus.empty()) k.device = r.gpus.front();
    for (const auto& g : r.gpus)
      if (c.record_gpu.empty())
        c.record_gpu = g;
      else if (gpu_label(g) != gpu_label(c.record_gpu))
        fmt::print("warning: records from two GPUs: {} and {}\n", gpu_label(c.record_gpu), gpu_label(g));
    k.measured.push_back(std::move(r.m));
  }
  return std::nullopt;
}

// The check's numbers now, and a row per variant: its ratios, noise and
// verdicts under those numbers; the proposal's notes.
void print_measured(const Calibrating& c, const CheckRun& k) {
  fmt::print("\n{} / {}: now min_ratio {}, {}\n", k.plan.spec.id, k.check.id, format_number(k.current_min),
             credit_text(k.check.credit));
  fmt::print("  {:<20} {:<10} {:<28} {:>9}  {}\n", "variant", "role", "ratio: median (min-max)", "noise",
             "verdict now");
  for (const auto& m : k.measured) {
    const std::string role = !m.correct ? "foil" : m.variant == "solution" ? "reference" : "correct";
    const std::string noise =
        m.noise.empty() ? "-" : fmt::format("{:.2f}%", *std::max_element(m.noise.begin(), m.noise.end()));
    fmt::print("  {:<20} {:<10} {:<28} {:>9}  {}{}\n", m.variant, role,
               fmt::format("{} [{} run{}]", range_text(m), m.ratios.size(), m.ratios.size() == 1 ? "" : "s"),
               noise, verdict_text(m), m.ratios.empty() && !m.problem.empty() ? ": " + m.problem : "");
  }
  if (k.measured.empty())
    fmt::print("  (no variant in {} has a verdict for this check)\n",
               (c.o.variants_dir / k.plan.spec.id).string());
  for (const auto& n : k.p.notes) fmt::print("  note: {}\n", n);
}

// The proposal and its margins, or why there is none.
void print_proposal(const CheckRun& k) {
  const Proposal& p = k.p;
  if (!p.feasible) {
    fmt::print("  NOT CALIBRATED: {}\n", p.why_not);
    return;
  }
  fmt::print("  rules allow min_ratio in [{:.3f}, {:.3f}]\n", p.lo, p.hi);
  fmt::print("  proposal: min_ratio {}{}, {}{}\n", format_number(p.min_ratio),
             p.min_changed ? fmt::format(" (was {})", format_number(k.current_min)) : " (unchanged)",
             credit_text(p.credit),
             p.credit_changed ? fmt::format(" (was {})", credit_text(k.check.credit).substr(7))
                              : (p.credit ? " (unchanged)" : ""));
  fmt::print("  margins: {}\n", p.margins_line());
}

Row summary_row(const CheckRun& k) {
  const Proposal& p = k.p;
  Row row{k.plan.spec.id, k.check.id, p.reference.empty() ? "-" : fmt::format("{:.3f}", p.reference_ratio),
          "", ""};
  if (!p.feasible) {
    row.proposal = "none: " + p.why_not.substr(0, p.why_not.find(':'));
    row.margins = "-";
    return row;
  }
  row.proposal =
      fmt::format("min {}{}, {}", format_number(p.min_ratio), p.min_changed ? "*" : "",
                  p.credit ? fmt::format("{} to {}{}", format_number(p.credit->zero_at),
                                         format_number(p.credit->full_at), p.credit_changed ? "*" : "")
                           : "no curve");
  row.margins = fmt::format("slowest correct {} above", pct(1 - p.min_ratio / p.slowest_correct_ratio));
  if (!p.fastest_foil.empty())
    row.margins += fmt::format(", fastest foil {} below", pct(1 - p.fastest_foil_ratio / p.min_ratio));
  return row;
}

// --write, a calibrated check: its numbers into lab.toml's text (written at
// the end, once every check is through) and its entry for the GPU's table.
Stop stage_write(Calibrating& c, const CheckRun& k) {
  const std::string file = k.plan.spec.file.string();
  if (!c.new_text.count(file)) c.new_text[file] = read_text(k.plan.spec.file);
  try {
    c.new_text[file] = apply_to_lab_toml(c.new_text[file], k.check.id, k.p.min_ratio, k.p.credit);
  } catch (const std::exception& e) {
    fmt::print(stderr, "cudalab calibrate: {}: {}\n", file, e.what());
    return kUsage;
  }
  TableEntry e = make_entry(k.plan.spec.id, k.check.id, k.measured, k.p, c.o.margins);
  e.date = c.date;
  e.device = k.device.empty() ? c.gpu_name : k.device;
  e.nvcc = c.nvcc;
  e.source = c.source;
  c.entries.push_back(std::move(e));
  return std::nullopt;
}

// One speed check: measured, proposed, printed, and with --write staged.
Stop calibrate_check(Calibrating& c, const LabPlan& plan, const CheckSpec& check) {
  CheckRun k(plan, check);
  if (const Stop stop = measure(c, k)) return stop;
  k.current_min = check.numbers.count("min_ratio") ? check.numbers.at("min_ratio") : 0;
  k.p = propose(k.measured, k.current_min, check.credit, c.o.margins);
  print_measured(c, k);
  print_proposal(k);
  if (!k.p.feasible)
    c.any_not_met = true;
  else if (c.o.write)
    if (const Stop stop = stage_write(c, k)) return stop;
  c.summary.push_back(summary_row(k));
  return std::nullopt;
}

Stop calibrate_checks(Calibrating& c) {
  for (const auto& plan : c.plans)
    for (const auto& check : plan.spec.checks)
      if (check.kind == CheckKind::speed)
        if (const Stop stop = calibrate_check(c, plan, check)) return stop;
  return std::nullopt;
}

void print_summary(const Calibrating& c) {
  fmt::print(
      "\nsummary (GPU: {}; * = changed; margins: the threshold below the slowest correct run, the fastest "
      "foil "
      "run below the threshold):\n",
      c.record_gpu.empty() ? (c.gpu_name.empty() ? "unknown" : c.gpu_name) : gpu_label(c.record_gpu));
  fmt::print("  {:<16} {:<20} {:>9}  {:<32} {}\n", "lab", "check", "reference", "proposal", "margins");
  for (const auto& r : c.summary)
    fmt::print("  {:<16} {:<20} {:>9}  {:<32} {}\n", r.lab, r.check, r.reference, r.proposal, r.margins);
}

// --write: the edited lab.toml files, each only if it still parses.
Stop write_lab_tomls(const Calibrating& c) {
  for (const auto& [file, text] : c.new_text) {
    try {
      parse_lab(text, file, fs::path(file).parent_path().filename().string());
    } catch (const ManifestError& e) {
      fmt::print(stderr, "cudalab calibrate: the edited {} does not parse ({}); not written\n", file,
                 e.what());
      return kUsage;
    }
    std::ofstream out(file, std::ios::trunc | std::ios::binary);
    out << text;
    fmt::print("wrote {}\n", file);
  }
  return std::nullopt;
}

// --write: the GPU's table, this run's checks in place of earlier ones, the
// others kept.
Stop write_table(Calibrating& c) {
  const auto [name, sm] = split_gpu_label(gpu_label(c.record_gpu.empty() ? c.gpu_name : c.record_gpu));
  const fs::path tables = c.o.tables_dir.empty() ? c.o.source_root / "calibration" : c.o.tables_dir;
  const fs::path file = tables / table_file_name(name, sm);
  Table table{name, sm, {}};
  try {
    if (fs::exists(file)) table = load_table(file);
  } catch (const ManifestError& e) {
    fmt::print(stderr, "cudalab calibrate: {}; not written\n", e.what());
    return kUsage;
  }
  for (auto& e : c.entries) table.put(std::move(e));
  fs::create_directories(tables);
  std::ofstream(file, std::ios::trunc | std::ios::binary) << format_table(table);
  fmt::print("wrote {}\n", file.string());
  return std::nullopt;
}

Stop write_files(Calibrating& c) {
  if (!c.o.write) {
    fmt::print(
        "(--write records the measurements in the GPU's table, calibration/<gpu>.toml, and puts the "
        "proposals into the labs' lab.toml files)\n");
    return std::nullopt;
  }
  if (const Stop stop = write_lab_tomls(c)) return stop;
  if (!c.entries.empty())
    if (const Stop stop = write_table(c)) return stop;
  if (c.new_text.empty()) fmt::print("--write: no check was calibrated, no file changed\n");
  return std::nullopt;
}

// Where the records are, and the exit code.
int finish(const Calibrating& c) {
  if (!c.dry)
    fmt::print("records: {} (`cudalab calibrate --from-records {}` reads them again)\n", c.records.string(),
               c.records.string());
  if (c.any_not_met) fmt::print("some checks were not calibrated (above): exit code {}\n", kNotMet);
  return c.any_not_met ? kNotMet : kCalibrated;
}

}  // namespace

int run_calibration(const Options& options) {
  // Step by step over one Calibrating; a step that gives an exit code ends
  // the run there (its message printed).
  Calibrating c = start_calibrating(options);            // the default folders
  if (const Stop stop = check_options(c)) return *stop;  // the instructor's tree, --runs
  if (const Stop stop = plan_labs(c)) return *stop;      // per lab, its speed checks' participants
  if (c.dry) {
    fmt::print("dry run: reading the records in {} (nothing is timed)\n", c.records.string());
  } else {
    if (const Stop stop = probe(c)) return *stop;           // a usable GPU, else exit 3
    if (const Stop stop = build_variants(c)) return *stop;  // the variants' binaries (--build-only: done)
    time_runs(c);                                           // every run, into its record
  }
  read_provenance(c);                                       // the records' date, nvcc and folder
  if (const Stop stop = calibrate_checks(c)) return *stop;  // per check: its table and proposal
  print_summary(c);
  if (const Stop stop = write_files(c)) return *stop;  // --write: lab.toml files, the GPU's table
  return finish(c);                                    // where the records are; the exit code
}

}  // namespace cudalab::calibration
