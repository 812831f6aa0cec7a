#include "run/checks.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/files.h"
#include "cudalab/diagnosis.h"
#include "cudalab/evidence.h"
#include "run/process.h"
#include "run/sandbox.h"

extern char** environ;

namespace cudalab {

bool parse_check_record(const std::string& json_text, const std::string& name, CheckResult& out,
                        std::string* skipped_reason) {
  const auto doc = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) return false;
  if (skipped_reason && doc.contains("skipped") && doc["skipped"].is_string())
    *skipped_reason = doc["skipped"].get<std::string>();
  // A record of another format (or none) is not one this grader can read.
  if (!doc.contains("format") || doc["format"] != kRecordFormat) return false;
  if (!doc.contains("checks") || !doc["checks"].is_array()) return false;
  // One result per check and process: a second one with the same name is not
  // the harness's doing, and neither is to be believed.
  int same_name = 0;
  for (const auto& c : doc["checks"]) same_name += c.is_object() && c.value("name", "") == name ? 1 : 0;
  if (same_name != 1) return false;
  for (const auto& c : doc["checks"]) {
    if (!c.is_object() || c.value("name", "") != name) continue;
    // A verdict not in the vocabulary is no verdict ("running": the process
    // ended inside the check, judged below).
    out.verdict = parse_verdict(c.value("verdict", "")).value_or(Verdict::error);
    // A word for grouping, never for points; one off the closed list is none.
    if (out.verdict != Verdict::pass && c.contains("cause") && c["cause"].is_string())
      out.cause = parse_cause(c["cause"].get<std::string>()).value_or(Cause::none);
    for (const auto& f : c.value("failures", nlohmann::json::array()))
      if (f.is_string()) out.failures.push_back(f.get<std::string>());
    for (const auto& n : c.value("notes", nlohmann::json::array()))
      if (n.is_string()) out.notes.push_back(n.get<std::string>());
    if (c.contains("not_run") && c["not_run"].is_string() && out.verdict == Verdict::not_run)
      out.notes.push_back(c["not_run"].get<std::string>());
    for (const auto& m : c.value("measurements", nlohmann::json::array())) {
      if (!m.is_object() || !m.contains("value") || !m["value"].is_number()) continue;
      out.measurements.push_back({m.value("key", ""), m["value"].get<double>(), m.value("unit", "")});
    }
    return true;
  }
  return false;
}

namespace {

// The end of a long output, from a line start.
std::string tail(const std::string& s, std::size_t max = 4000) {
  if (s.size() <= max) return s;
  std::size_t from = s.size() - max;
  const std::size_t nl = s.find('\n', from);
  if (nl != std::string::npos) from = nl + 1;
  return "[...]\n" + s.substr(from);
}

// Closes on scope exit.
class Descriptor {
 public:
  explicit Descriptor(int fd) : fd_(fd) {}
  ~Descriptor() { reset(); }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  Descriptor& operator=(Descriptor&& other) noexcept {
    if (this != &other) {
      reset();
      fd_ = other.fd_;
      other.fd_ = -1;
    }
    return *this;
  }
  int get() const { return fd_; }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

}  // namespace

namespace {

// "/x/labs/03_tiling/matmul_tiled.cu:40" -> "matmul_tiled.cu:40": the student
// knows their file by name.
std::string file_line(const std::string& path_line) {
  const auto slash = path_line.find_last_of('/');
  return slash == std::string::npos ? path_line : path_line.substr(slash + 1);
}

// One access of a sanitizer's line, "Write access at kernel(const float *,
// ...)+0x2a0 in /x/matmul_tiled.cu:40 [2048 hazards]", folded to what the
// student acts on: the kind, the kernel's name, the file:line, the count.
struct Access {
  std::string kind, kernel, where;
  long long hazards = 0;
};

bool parse_access(const std::string& text, Access& a) {
  const auto at = text.find(" access at ");
  if (at == std::string::npos) return false;
  const auto kind_from = text.rfind(' ', at == 0 ? 0 : at - 1);
  a.kind = text.substr(kind_from == std::string::npos ? 0 : kind_from + 1,
                       at - (kind_from == std::string::npos ? 0 : kind_from + 1));
  const std::size_t k = at + 11;
  const auto paren = text.find('(', k);
  const auto plus = text.find("+0x", k);
  a.kernel = text.substr(k, std::min(paren, plus) - k);
  const auto in = text.find(" in ", plus == std::string::npos ? k : plus);
  if (in != std::string::npos) {
    std::string w = text.substr(in + 4);
    w = w.substr(0, w.find(' '));
    a.where = file_line(w);
  }
  if (const auto h = text.find(" hazard", in == std::string::npos ? k : in); h != std::string::npos) {
    const auto open = text.rfind('[', h);
    if (open != std::string::npos) a.hazards = std::atoll(text.c_str() + open + 1);
  }
  return true;
}

// A memcheck line with its offsets, parameter list and folders taken out:
// "at k(const float *, int)+0x1c0 in /x/f.cu:30" -> "at k in f.cu:30".
std::string fold_line(std::string text) {
  const auto at = text.find("at ");
  const auto plus = text.find("+0x");
  if (at != std::string::npos && plus != std::string::npos && plus > at) {
    const auto paren = text.find('(', at);
    const std::size_t name_end = paren != std::string::npos && paren < plus ? paren : plus;
    auto after = text.find(' ', plus);
    text = text.substr(0, name_end) + (after == std::string::npos ? "" : text.substr(after));
  }
  if (const auto in = text.find(" in /"); in != std::string::npos) {
    const auto end = text.find(' ', in + 4);
    text = text.substr(0, in + 4) + file_line(text.substr(in + 4, end - in - 4)) +
           (end == std::string::npos ? "" : text.substr(end));
  }
  return text;
}

// racecheck's report folded: one line per pair of lines that race (the
// kinds, the file:lines, how many hazards), the kernel once, and the
// summary's counts. A student reads where to put the __syncthreads(), not
// racecheck's offsets or its 30 to 50 lines.
std::string fold_races(const std::vector<std::string>& lines, const std::string& summary) {
  struct Pair {
    std::string text;
    long long hazards = 0;
    bool error = false;
  };
  std::vector<Pair> pairs;
  std::string kernel;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    const auto rep = l.find("Race reported between ");
    if (rep == std::string::npos) continue;
    Access first, second;
    if (!parse_access(l.substr(rep + 22), first)) continue;
    if (i + 1 < lines.size()) parse_access(lines[i + 1], second);
    if (kernel.empty()) kernel = first.kernel;
    std::string text = fmt::format("{} at {}", first.kind, first.where.empty() ? "?" : first.where);
    if (!second.kind.empty())
      text += fmt::format(" and {} at {}", second.kind, second.where.empty() ? "?" : second.where);
    const long long n = std::max(first.hazards, second.hazards);
    const bool error = l.rfind("Error", 0) == 0;
    auto same = std::find_if(pairs.begin(), pairs.end(), [&](const Pair& p) { return p.text == text; });
    if (same == pairs.end())
      pairs.push_back({text, n, error});
    else
      same->hazards += n, same->error |= error;
  }
  if (pairs.empty()) return {};
  std::string out =
      fmt::format("compute-sanitizer (racecheck) reported a race{}", kernel.empty() ? "" : " in " + kernel);
  // "RACECHECK SUMMARY: 6 hazards displayed (3 errors, 3 warnings)": its counts.
  if (const auto colon = summary.find(": "); colon != std::string::npos) {
    std::string counts = summary.substr(colon + 2);
    if (const auto d = counts.find(" displayed"); d != std::string::npos) counts.erase(d, 10);
    out += ": " + counts;
  }
  out += ", between";
  constexpr std::size_t kShown = 4;
  for (std::size_t i = 0; i < pairs.size() && i < kShown; ++i)
    out += fmt::format("{}\n  {}{}{}", i == 0 ? ":" : "", pairs[i].text,
                       pairs[i].hazards > 0 ? fmt::format(", {} hazards", pairs[i].hazards) : "",
                       pairs[i].error ? "" : " (a warning)");
  if (pairs.size() > kShown) out += fmt::format("\n  and {} more pairs of lines", pairs.size() - kShown);
  return out;
}

}  // namespace

std::string summarize_sanitizer(const std::string& tool, const std::string& output) {
  std::istringstream in(output);
  std::vector<std::string> block, all;
  std::string summary;
  bool in_block = false, done = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("========= ", 0) != 0 && line != "=========") continue;
    std::string text = line.size() > 10 ? line.substr(10) : "";
    // "ERROR SUMMARY: 812 errors" (not its "N errors were not printed" companion)
    if ((text.rfind("ERROR SUMMARY: ", 0) == 0 && text.find("not printed") == std::string::npos) ||
        text.find("RACECHECK SUMMARY") != std::string::npos) {
      summary = text;
      continue;
    }
    if (text.find("ERROR SUMMARY") != std::string::npos) continue;
    {
      std::string t = text;
      while (!t.empty() && t[0] == ' ') t.erase(0, 1);
      if (!t.empty()) all.push_back(t);
    }
    if (done) continue;
    const bool starts = text.rfind("Invalid ", 0) == 0 || text.rfind("Error", 0) == 0 ||
                        text.rfind("Race reported", 0) == 0 ||
                        text.find("Uninitialized") != std::string::npos ||
                        text.find("Barrier error") != std::string::npos || text.rfind("Program hit", 0) == 0;
    if (!in_block && starts) in_block = true;
    if (!in_block) continue;
    if (text.empty() || text.find("Saved host backtrace") != std::string::npos) {
      done = true;  // the first report is enough; the rest are usually the same
      continue;
    }
    if (text.find("Host Frame") != std::string::npos) continue;
    while (!text.empty() && text[0] == ' ') text.erase(0, 1);
    block.push_back(text);
  }
  // Every race of the report, folded: each names a pair of lines.
  if (const std::string races = fold_races(all, summary); !races.empty()) return races;
  if (block.empty()) return {};
  std::string kernel;
  for (const auto& l : block) {
    const auto at = l.find("at ");
    const auto paren = l.find('(', at == std::string::npos ? 0 : at);
    if (at != std::string::npos && paren != std::string::npos && paren > at + 3) {
      kernel = l.substr(at + 3, paren - at - 3);
      break;
    }
  }
  std::string out =
      fmt::format("compute-sanitizer ({}) reported an error{}:", tool, kernel.empty() ? "" : " in " + kernel);
  for (std::size_t i = 0; i < block.size() && i < 8; ++i) out += "\n  " + fold_line(block[i]);
  if (!summary.empty()) out += "\n" + summary;
  return out;
}

std::string fold_sanitizer_output(const std::string& output, std::size_t max_lines) {
  // The lines that name a place in the code, folded, once each.
  std::vector<std::string> kept;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("=========", 0) == 0) line = line.size() > 10 ? line.substr(10) : "";
    while (!line.empty() && line[0] == ' ') line.erase(0, 1);
    if (line.empty() || line.find("Host Frame") != std::string::npos ||
        line.find("Saved host backtrace") != std::string::npos)
      continue;
    line = fold_line(line);
    if (std::find(kept.begin(), kept.end(), line) == kept.end()) kept.push_back(line);
  }
  std::string out;
  const std::size_t from = kept.size() > max_lines ? kept.size() - max_lines : 0;
  if (from > 0) out += fmt::format("  ({} earlier lines left out)", from);
  for (std::size_t i = from; i < kept.size(); ++i) out += (out.empty() ? "  " : "\n  ") + kept[i];
  return out;
}

RunContext bare_run(const RunContext& ctx, const std::filesystem::path& binary) {
  RunContext rc = ctx;
  rc.binary = binary;
  rc.sanitizer.clear();
  rc.reference_evidence.clear();
  rc.evidence_out.clear();
  rc.reference_s = 0;
  rc.trace_out.clear();
  rc.replay_trace.clear();
  rc.replay_code.clear();
  return rc;
}

std::filesystem::path reference_launches_file(const std::filesystem::path& reference_evidence) {
  std::filesystem::path p = reference_evidence;
  return p += ".launches";
}

std::string run_stem(const std::string& lab, const std::string& check) {
  static std::atomic<unsigned long> runs{0};
  return fmt::format("{}-{}-{}-{}", lab, check, getpid(), ++runs);
}

namespace {

constexpr int kRecordFd = 3, kEvidenceFd = 4, kTraceFd = 5, kCodeFd = 6, kLaunchesFd = 7;
constexpr int kSanitizerExit = 86;

// The files a check's process writes or reads. They reach it as descriptors
// this process opened: their paths (and the folders the grader reads) never
// appear in what the student's code can see.
struct CheckFiles {
  std::filesystem::path record, evidence;
  // Correctness checks leave their outputs as evidence; the student's are
  // judged against the reference's (cudalab/evidence.h).
  bool with_evidence = false;
  // The speed replay's files: written by the student's run (its trace), read
  // by the grader's replay (the trace, the kernels).
  bool tracing = false, replaying = false;
  // The reference's launches (cudalab/testing.h reference_launch): written
  // beside its evidence by the reference's run, read by a student's.
  Descriptor record_fd{-1}, evidence_fd{-1}, trace_fd{-1}, code_fd{-1}, launches_fd{-1};

  void close() {
    record_fd.reset();
    evidence_fd.reset();
    launches_fd.reset();
    trace_fd.reset();
    code_fd.reset();
  }
};

// "" when every file the check needs is open; else the failure.
std::string open_check_files(const RunContext& ctx, const CheckSpec& check, const std::string& stem,
                             CheckFiles& f) {
  f.record = ctx.work_dir / (stem + ".json");
  std::filesystem::remove(f.record);
  f.with_evidence = check.kind == CheckKind::correctness && ctx.sanitizer.empty() &&
                    (!ctx.evidence_out.empty() || !ctx.reference_evidence.empty());
  f.evidence = !ctx.evidence_out.empty() ? ctx.evidence_out : ctx.work_dir / (stem + ".evidence");
  f.record_fd = Descriptor(::open(f.record.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  if (f.with_evidence)
    f.evidence_fd = Descriptor(::open(f.evidence.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  if (f.with_evidence) {
    const std::string launches = reference_launches_file(f.evidence).string();
    if (!ctx.evidence_out.empty())
      f.launches_fd = Descriptor(::open(launches.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    else  // a student's run: the reference's table, where its run wrote one
      f.launches_fd =
          Descriptor(::open(reference_launches_file(ctx.reference_evidence).c_str(), O_RDONLY | O_CLOEXEC));
  }
  if (f.record_fd.get() < 0 || (f.with_evidence && f.evidence_fd.get() < 0))
    return fmt::format("the grader could not create its record files in {}: {}", ctx.work_dir.string(),
                       std::strerror(errno));
  f.tracing = !ctx.trace_out.empty();
  f.replaying = !ctx.replay_trace.empty();
  if (f.tracing)
    f.trace_fd = Descriptor(::open(ctx.trace_out.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  else if (f.replaying)
    f.trace_fd = Descriptor(::open(ctx.replay_trace.c_str(), O_RDONLY | O_CLOEXEC));
  if (f.replaying) f.code_fd = Descriptor(::open(ctx.replay_code.c_str(), O_RDONLY | O_CLOEXEC));
  if ((f.tracing || f.replaying) && f.trace_fd.get() < 0)
    return fmt::format("the grader could not open its launch trace: {}", std::strerror(errno));
  return "";
}

// The test binary and lab.toml as the check runs them. Under root a check
// runs as nobody (sandbox.h). A grading folder nobody can enter (a checkout
// in root's home) is no reason to refuse: the binary and lab.toml then run
// from copies in a folder of their own that nobody can read but not change,
// removed with this.
struct StagedFiles {
  std::filesystem::path binary, lab_toml, dir;
  StagedFiles() = default;
  StagedFiles(const StagedFiles&) = delete;
  StagedFiles& operator=(const StagedFiles&) = delete;
  ~StagedFiles() {
    std::error_code ec;
    if (!dir.empty()) std::filesystem::remove_all(dir, ec);
  }
};

void stage_for_nobody(const RunContext& ctx, const std::string& stem, StagedFiles& s) {
  s.binary = std::filesystem::absolute(ctx.binary);
  s.lab_toml = std::filesystem::absolute(ctx.lab_toml);
  if (unreadable_by_sandbox({s.binary, s.lab_toml}).empty()) return;
  std::error_code ec;
  s.dir = std::filesystem::temp_directory_path() / fmt::format("cudalab-staged-{}", stem);
  std::filesystem::remove_all(s.dir, ec);
  std::filesystem::create_directories(s.dir, ec);
  const auto copy = [&](const std::filesystem::path& from, const std::string& name) {
    const auto to = s.dir / name;
    std::filesystem::copy_file(from, to, std::filesystem::copy_options::overwrite_existing, ec);
    return to;
  };
  s.binary = copy(s.binary, s.binary.filename().string());
  s.lab_toml = copy(s.lab_toml, "lab.toml");
  using std::filesystem::perms;
  const perms open =
      perms::owner_all | perms::group_read | perms::group_exec | perms::others_read | perms::others_exec;
  std::filesystem::permissions(s.dir, open, ec);
  std::filesystem::permissions(s.binary, open, ec);
  std::filesystem::permissions(
      s.lab_toml, perms::owner_read | perms::owner_write | perms::group_read | perms::others_read, ec);
}

// The access report's name in the check's scratch folder, its working
// directory: a relative name lands there.
std::string access_name(const RunContext& ctx) {
  return ctx.access_out.extension() == ".json" ? "access.json" : "access.txt";
}

// The check's command line, descriptors, time limit and environment, before
// it is confined.
ProcessOptions check_command(const RunContext& ctx, const LabSpec& lab, const CheckSpec& check,
                             const CheckFiles& f, const StagedFiles& s) {
  ProcessOptions opt;
  opt.argv = {s.binary.string(), "--record-fd", std::to_string(kRecordFd), "--lab-toml", s.lab_toml.string()};
  opt.pass_fds.push_back({f.record_fd.get(), kRecordFd});
  if (f.with_evidence) {
    opt.argv.insert(opt.argv.end(), {"--evidence-fd", std::to_string(kEvidenceFd)});
    // Only the reference's evidence holds the expected values (8 bytes an
    // element, in place of its outputs); the student's outputs are judged
    // against them.
    if (!ctx.evidence_out.empty()) opt.argv.push_back("--evidence-expected");
    opt.pass_fds.push_back({f.evidence_fd.get(), kEvidenceFd});
    if (f.launches_fd.get() >= 0) {
      opt.argv.insert(opt.argv.end(), {ctx.evidence_out.empty() ? "--reference-launches-fd" : "--launches-fd",
                                       std::to_string(kLaunchesFd)});
      opt.pass_fds.push_back({f.launches_fd.get(), kLaunchesFd});
    }
  }
  if (f.tracing) {
    opt.argv.insert(opt.argv.end(), {"--trace-fd", std::to_string(kTraceFd)});
    opt.pass_fds.push_back({f.trace_fd.get(), kTraceFd});
  }
  if (f.replaying) {
    opt.argv.insert(opt.argv.end(), {"--replay-fd", std::to_string(kTraceFd)});
    opt.pass_fds.push_back({f.trace_fd.get(), kTraceFd});
    if (f.code_fd.get() >= 0) {
      opt.argv.insert(opt.argv.end(), {"--replay-code-fd", std::to_string(kCodeFd)});
      opt.pass_fds.push_back({f.code_fd.get(), kCodeFd});
    }
  }
  if (!ctx.seed.empty()) opt.argv.insert(opt.argv.end(), {"--seed", ctx.seed});
  opt.argv.push_back(check.name);
  RunLimitInputs in;
  in.lab_s = check.timeout_s > 0 ? check.timeout_s : lab.timeout_s;
  in.course_cap_s = ctx.course_cap_s;
  in.reference_s = ctx.reference_s;
  in.speed = check.kind == CheckKind::speed;
  in.sanitizer = !ctx.sanitizer.empty();
  in.role = ctx.role;
  opt.timeout_s = check_run_limit(in);
  std::vector<std::string> extra = ctx.extra_env;
  if (!ctx.access_out.empty()) extra.push_back("CUDALAB_SIMT_ACCESS_REPORT=" + access_name(ctx));
  if (!ctx.sanitizer.empty()) {
    opt.argv.insert(opt.argv.begin(), {"compute-sanitizer", "--tool", ctx.sanitizer, "--error-exitcode",
                                       std::to_string(kSanitizerExit), "--print-limit", "20"});
    extra.push_back("CUDALAB_SANITIZER=" + ctx.sanitizer);
    // Exact allocations: a write past a buffer must leave it for memcheck to see it.
    if (ctx.sanitizer == "memcheck") extra.push_back("CUDALAB_GUARD_BYTES=0");
  }
  auto env = ctx.clean_env ? minimal_environment() : std::map<std::string, std::string>{};
  if (!ctx.clean_env)
    for (char** e = environ; *e; ++e) {
      const std::string kv(*e);
      const auto eq = kv.find('=');
      if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
  for (const auto& kv : extra) {
    const auto eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  env["GLIBC_TUNABLES"] = with_huge_pages(env["GLIBC_TUNABLES"]);
  opt.env = env;
  return opt;
}

// Confined (sandbox.h): the student's code, its constructors included, runs
// with only its scratch folder writable and nothing of the grader's in view.
// opt's command becomes the launcher's; "" or why it cannot be confined.
std::string confine(const RunContext& ctx, const StagedFiles& s, const std::string& stem, ProcessOptions& opt,
                    std::filesystem::path& scratch) {
  try {
    SandboxSpec box;
    scratch = box.scratch = make_scratch_dir(stem);
    box.read = {s.binary, s.lab_toml};
    for (const auto& [from, to] : opt.pass_fds) box.keep_fds.push_back(to);
    // The CUDA runtime binds a unix socket as it starts (sandbox.h); a check
    // may listen, never connect.
    box.unix_listen = true;
    if (!ctx.sanitizer.empty()) {
      // The sanitizer starts the test binary itself, from its own folder, and
      // its front end connects to the target's socket: the front end gets
      // unix sockets, the test binary (the student's code) runs under a
      // second launcher nested inside, with a check's own rules.
      const auto program = compute_sanitizer_program();
      if (!program.empty()) opt.argv[0] = program.string();
      const auto target = std::find(opt.argv.begin() + 1, opt.argv.end(), s.binary.string());
      if (target != opt.argv.end()) {
        SandboxSpec inner = box;
        const std::vector<std::string> rest(target, opt.argv.end());
        std::vector<std::string> nested = sandboxed_argv(inner, rest);
        opt.argv.erase(target, opt.argv.end());
        opt.argv.insert(opt.argv.end(), nested.begin(), nested.end());
        box.exec = {s.binary, sandbox_launcher()};
      } else {
        box.exec = {s.binary};
      }
      if (!program.empty()) box.exec.push_back(program.parent_path());
      box.allow_fork = true;
      box.unix_listen = false;
      box.unix_sockets = true;
    }
    if (!ctx.access_out.empty()) {
      // simt names the source lines of the report through addr2line (popen:
      // /bin/sh, then addr2line), so the access run may start those two.
      box.allow_fork = true;
      for (const char* tool : {"sh", "addr2line"})
        if (const auto found = programs_in_path(tool); !found.empty()) box.exec.push_back(found.front());
    }
    opt.argv = sandboxed_argv(box, opt.argv);
  } catch (const std::exception& e) {
    remove_scratch_dir(scratch);
    return fmt::format("the grader cannot run checks confined: {}", e.what());
  }
  return "";
}

// The access report the process left in its scratch folder, bounded, to
// ctx.access_out.
void keep_access_report(const RunContext& ctx, const std::filesystem::path& scratch) {
  if (ctx.access_out.empty()) return;
  std::error_code ec;
  std::filesystem::remove(ctx.access_out, ec);
  const auto report = scratch / access_name(ctx);
  if (std::filesystem::is_regular_file(report, ec) &&
      over_bound(report, kMaxAccessReportBytes, "its access report").empty())
    std::filesystem::copy_file(report, ctx.access_out, ec);
}

// The check's verdict from how its process ended and what its record says.
void judge_outcome(const RunContext& ctx, const CheckSpec& check, const ProcessOptions& opt,
                   const ProcessResult& p, const CheckFiles& f, CheckResult& r) {
  std::string skipped;
  // Bounded before it is read: the record is the process's to fill.
  const std::string record_too_big = over_bound(f.record, kMaxRecordBytes, "its record");
  const bool have = record_too_big.empty() && std::filesystem::exists(f.record) &&
                    parse_check_record(read_text(f.record), check.name, r, &skipped);
  std::filesystem::remove(f.record);
  const bool speed = check.kind == CheckKind::speed;
  if (!p.started) {
    r.verdict = Verdict::error;
    r.failures.push_back(fmt::format("could not run {}: {}", ctx.binary.string(), p.error));
  } else if (p.timed_out) {
    r.verdict = Verdict::timeout;
    r.cause = speed ? Cause::slow : Cause::timeout;
    // What the message names: the reference's time where it set the limit.
    const double reference_s =
        ctx.role == RunRole::student && ctx.sanitizer.empty() ? std::max(0.0, ctx.reference_s) : 0;
    // A speed check runs only after the correctness checks it requires
    // passed: the kernel ends on their shapes, so it is slow, not stuck.
    const std::string limit = describe_limit(opt.timeout_s, reference_s, speed);
    r.failures = {
        speed
            ? fmt::format("the timed runs did not finish within {} and were stopped: the kernel passed the "
                          "correctness checks this check requires, so it ends on their shapes; at this size "
                          "it is far slower than the reference solution. Look for work that grows with the "
                          "size: each thread looping over far more than its own elements (a grid-stride loop "
                          "must step by blockDim.x * gridDim.x), or a loop whose bound is the whole matrix",
                          limit)
            : fmt::format("the check did not finish within {} and was stopped: the kernel or the launcher "
                          "never returned",
                          limit)};
    // The causes it may have, on a line of their own: a second look that
    // finds the one it had (explain.h) takes this line out.
    if (!speed) r.failures.push_back(kHangCauses);
    r.output = tail(p.output);
  } else if (p.signal) {
    r.verdict = Verdict::crash;
    r.cause = Cause::crash;
    r.failures.insert(
        r.failures.begin(),
        fmt::format("the test process was killed by {} while running this check", signal_name(p.signal)));
    r.output = tail(p.output);
  } else if (p.exit_code == 77 && !have) {
    // The binary found no usable GPU before running anything. (It also exits
    // 77 when its only check was "not run", which the record then says.)
    r.verdict = Verdict::skipped;
    r.notes.push_back(skipped.empty() ? "no usable GPU" : skipped);
  } else if (!record_too_big.empty()) {
    r.verdict = Verdict::fail;
    r.failures = {record_too_big};
    r.cause = Cause::none;
    r.notes.clear();
    r.measurements.clear();
  } else if (!have) {
    r.verdict = Verdict::error;
    r.failures.push_back(
        fmt::format("the test binary ended ({}) without a result for this check", p.describe()));
    r.output = tail(p.output);
  } else if (r.verdict == Verdict::running) {
    r.verdict = Verdict::crash;
    r.cause = Cause::crash;
    r.failures.push_back(
        fmt::format("the test process ended ({}) in the middle of this check", p.describe()));
    r.output = tail(p.output);
  }
  if (!ctx.sanitizer.empty() && p.started && !p.timed_out && !p.signal) {
    if (const std::string report = summarize_sanitizer(ctx.sanitizer, p.output); !report.empty()) {
      if (r.verdict == Verdict::pass || r.verdict == Verdict::not_run) r.verdict = Verdict::fail;
      r.failures.insert(r.failures.begin(), report);
    } else if (p.exit_code == kSanitizerExit) {
      r.verdict = Verdict::fail;
      r.failures.insert(r.failures.begin(), fmt::format("compute-sanitizer ({}) reported errors:\n{}",
                                                        ctx.sanitizer, fold_sanitizer_output(p.output, 8)));
    }
  }
  if (ctx.keep_output && r.output.empty() && p.started) r.output = tail(p.output);
  if (p.output_bytes > opt.output_cap)
    r.notes.push_back(fmt::format("the check printed {} bytes; only the first and last {} KiB were kept",
                                  p.output_bytes, opt.output_cap / 2048));
}

}  // namespace

CheckRun run_check_process(const RunContext& ctx, const LabSpec& lab, const CheckSpec& check) {
  CheckRun run;
  CheckResult& r = run.result;
  r.id = check.id;
  r.name = check.name;
  r.kind = check.kind;
  const auto error = [&](const std::string& why) {
    r.verdict = Verdict::error;
    r.failures.push_back(why);
    return run;
  };
  const bool for_words = ctx.words && (ctx.role == RunRole::second_look || ctx.role == RunRole::hang_look);
  if (for_words && ctx.words->spent()) return error(words_skipped_note(ctx.words->total_s(), "this run"));
  std::filesystem::create_directories(ctx.work_dir);
  const std::string stem = run_stem(lab.id, check.id);
  CheckFiles files;
  if (const std::string why = open_check_files(ctx, check, stem, files); !why.empty()) return error(why);
  StagedFiles staged;
  stage_for_nobody(ctx, stem, staged);
  ProcessOptions opt = check_command(ctx, lab, check, files, staged);
  std::filesystem::path scratch;
  // A look's run: within what is left of the submission's allowance for
  // words, and counted against it.
  if (for_words) opt.timeout_s = ctx.words->limit(opt.timeout_s);
  if (const std::string why = confine(ctx, staged, stem, opt, scratch); !why.empty()) return error(why);
  const ProcessResult p = run_process(opt);
  if (for_words) ctx.words->charge(p.seconds);
  keep_access_report(ctx, scratch);
  remove_scratch_dir(scratch);
  r.seconds = p.seconds;
  files.close();
  // A student's evidence goes to the judge (judged.h), which reads and removes it.
  if (files.with_evidence && ctx.evidence_out.empty()) run.evidence = files.evidence;
  judge_outcome(ctx, check, opt, p, files, r);
  return run;
}

CheckResult run_check(const RunContext& ctx, const LabSpec& lab, const CheckSpec& check) {
  CheckRun run = run_check_process(ctx, lab, check);
  if (!run.evidence.empty()) {
    std::error_code ec;
    std::filesystem::remove(run.evidence, ec);
  }
  return std::move(run.result);
}

Claim run_student_check(const RunContext& ctx, const LabSpec& lab, const CheckSpec& check) {
  CheckRun run = run_check_process(ctx, lab, check);
  return Claim{std::move(run.result), std::move(run.evidence)};
}

Testimony run_reference_check(const RunContext& ctx, const LabSpec& lab, const CheckSpec& check) {
  return Testimony{run_check(ctx, lab, check), {}};
}

Testimony run_memory_replay(const RunContext& ctx, const LabSpec& lab, const CheckSpec& check) {
  RunContext rc = ctx;
  rc.role = RunRole::reference;
  rc.evidence_out.clear();
  rc.trace_out.clear();
  CheckRun run = run_check_process(rc, lab, check);
  return Testimony{std::move(run.result), std::move(run.evidence)};
}

}  // namespace cudalab
