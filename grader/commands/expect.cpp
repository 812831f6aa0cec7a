// cudalab expect --binary B --lab-toml T --expect E: runs a lab test binary
// (a known-good or known-bad student file's, tests/variants and
// tests/gallery) and compares its verdicts, and the cause that leads a
// failure, with an expect.toml (expect.h), taking the second looks the grader
// takes.
#include "authoring/expect.h"

#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <optional>

#include "commands.h"
#include "common.h"
#include "core/grade_document.h"
#include "run/checks.h"
#include "run/explain.h"
#include "run/sandbox.h"
#include "views/report.h"

namespace fs = std::filesystem;

namespace cudalab {

namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

ExpectCommand::ExpectCommand(CLI::App& app)
    : Command(app, "expect", "Run a lab test binary and compare its verdicts with an expect.toml") {
  sub_->add_option("--binary", binary_, "the lab test binary")->required();
  sub_->add_option("--lab-toml", lab_toml_, "the lab's manifest")->required();
  sub_->add_option("--expect", expect_, "the expected verdicts")->required();
  sub_->add_flag("--cpu", cpu_, "the binary is a CPU-mode one: use [expect_cpu], speed checks not run");
  sub_->add_flag(
      "--student-loop", student_loop_,
      "CPU mode: run the checks as a student's `cudalab test` does, the largest shapes run smaller "
      "(cudalab/testing.h left_to_grader)");
  sub_->add_option("--cpu-binary", cpu_binary_,
                   "the same student files built for CPU mode: a correctness check that fails on the GPU "
                   "gets the grader's second look there");
  sub_->add_option("--access-binary", access_binary_,
                   "the same student files built for CPU mode's access report: a speed check too slow on "
                   "the GPU leads with what its `explain` check counts there, as in the grader; in CPU "
                   "mode a speed check's `explains` is held against that count");
  sub_->add_option("--reference-access-binary", reference_access_binary_,
                   "the lab's solution built as --access-binary is: what the counts are held against");
}

int ExpectCommand::run() {
  const fs::path binary = binary_, lab_toml = lab_toml_, expect_path = expect_, cpu_binary = cpu_binary_,
                 access_binary = access_binary_, reference_access_binary = reference_access_binary_;
  const bool cpu = cpu_;
  if (sandbox_missing()) return kUsage;
  LabSpec lab;
  ExpectFile ex;
  try {
    lab = load_lab(lab_toml);
    ex = load_expect(expect_path);
  } catch (const ManifestError& e) {
    fmt::print(stderr, "cudalab: {}\n", e.what());
    return kUsage;
  }
  if (cpu) {
    std::vector<std::string> speed;
    for (const auto& c : lab.checks)
      if (c.kind == CheckKind::speed) speed.push_back(c.id);
    ex = ex.for_cpu_mode(speed);
  }
  RunContext ctx;
  ctx.binary = binary;
  ctx.lab_toml = lab_toml;
  ctx.work_dir = fs::temp_directory_path() / "cudalab-expect";
  if (cpu && student_loop_) ctx.extra_env.push_back("CUDALAB_LARGE_SHAPES=grader");
  fmt::print("{}: {}{}\n", expect_path.parent_path().filename().string(), ex.description,
             cpu ? " [CPU mode]" : "");
  fmt::print("{:<20} {:<9} {:<9} {}\n", "check", "expected", "got", "message");
  for (const auto& e : ex.expectations) {
    if (!lab.find_by_id(e.check_id)) {
      fmt::print(stderr, "cudalab: {}: no check '{}' in {}\n", expect_path.string(), e.check_id,
                 lab_toml.string());
      return kUsage;
    }
  }
  // The solution's count of each `explain` check, counted once. The access
  // reports' names are this process's own (run_stem): the variants' tests
  // run side by side, and two of one lab shared "03_tiling-square-explain.json"
  // in one folder, where one removed the other's report before it was read
  // (a fresh-clone CI: other_stream's explanation came out empty).
  std::map<std::string, std::optional<AccessCount>> reference_counts;
  const auto reference_count = [&](const CheckSpec& by) -> const AccessCount* {
    if (reference_access_binary.empty()) return nullptr;
    auto it = reference_counts.find(by.id);
    if (it == reference_counts.end())
      it = reference_counts
               .emplace(by.id, access_count_from_json(access_count_json(count_accesses(
                                   ctx, lab, by, reference_access_binary,
                                   ctx.work_dir / (run_stem(lab.id, by.id) + "-reference.json")))))
               .first;
    return it->second ? &*it->second : nullptr;
  };
  int mismatches = 0, skipped = 0;
  for (const CheckSpec& check : lab.checks) {  // in the lab's order
    const Expectation* expected = ex.find(check.id);
    if (!expected) continue;
    const Expectation& e = *expected;
    CheckResult r = run_check(ctx, lab, check);
    // On the GPU, the second look the grader takes at a failed check
    // (explain.h), with the variant's CPU-mode build where one is given.
    // A speed check too slow on the GPU: CPU mode's access count of its
    // `explain` check leads (explain.h), as in the grader and `cudalab test`.
    if (const CheckSpec* by = check.explain.empty() ? nullptr : lab.find_by_id(check.explain);
        !cpu && by && !access_binary.empty() && timed_and_failed(r))
      explain_by_access(ctx, lab, *by, access_binary, reference_count(*by),
                        ctx.work_dir / (run_stem(lab.id, by->id) + "-explain.json"), "", r);
    // CPU mode times nothing: the diagnosis a slow kernel would get, from
    // the same counts, held against `explains`.
    if (const CheckSpec* by = check.explain.empty() ? nullptr : lab.find_by_id(check.explain);
        cpu && by && !e.explains.empty() && !access_binary.empty()) {
      const SlowLead lead =
          slow_lead(count_accesses(ctx, lab, *by, access_binary,
                                   ctx.work_dir / (run_stem(lab.id, by->id) + "-explain.json")),
                    reference_count(*by), lab.explain_words, "");
      const std::string got = lead.where.empty() ? to_string(lead.cause)
                                                 : fmt::format("{} {}", to_string(lead.cause), lead.where);
      // The build names a variant's file variant-LAB-VARIANT-FILE (tests/meson.build).
      const auto space = e.explains.find(' ');
      const bool ok = got == e.explains ||
                      (space != std::string::npos && e.explains.substr(0, space) == to_string(lead.cause) &&
                       ends_with(lead.where, "-" + e.explains.substr(space + 1)));
      mismatches += !ok;
      fmt::print("{:<20} {:<9} {:<9} {}{}\n", e.check_id + " (explain)", "", "",
                 ok ? "" : "MISMATCH: ", lead.text);
      if (!ok) fmt::print("    expected the diagnosis \"{}\", got \"{}\"\n", e.explains, got);
    }
    if (cpu) lead_hang_in_cpu_mode(r, grid_stride_lab(lab));
    if (!cpu) {
      const SecondOpinion kind = second_opinion_for(r, !compute_sanitizer_program().empty());
      if (kind != SecondOpinion::none)
        second_opinion(
            ctx, lab, check, kind, [&] { return cpu_binary; }, r);
    }
    if (r.verdict == Verdict::skipped) {
      ++skipped;
      fmt::print("{:<20} {:<9} {:<9} {}\n", e.check_id, e.verdict, "skipped",
                 r.notes.empty() ? "" : r.notes[0]);
      continue;
    }
    std::string text;
    for (const auto& f : r.failures) text += f + "\n";
    for (const auto& n : r.notes) text += n + "\n";
    // One cause leads, and where the variant names it, the right one.
    const std::string cause = r.verdict == Verdict::fail || r.verdict == Verdict::timeout
                                  ? leading_cause_problem(r.failures, e.leads)
                                  : "";
    // The cause id the grade would keep for it (grade_document.h cause_of).
    // Timed: the variant's own run measured a ratio (the expect command runs
    // the lab's test binary as `cudalab test` does, its own timing).
    const Cause named = cause_of(r, r.kind == CheckKind::speed && r.recorded_ratio());
    const bool cause_ok = !e.cause || *e.cause == named;
    const bool ok = r.verdict == e.verdict && (e.says.empty() || contains_phrase(text, e.says)) &&
                    cause.empty() && cause_ok;
    mismatches += !ok;
    // The row shows what a student reads first: the lead of a failed check.
    std::string first = r.failures.empty() ? (r.notes.empty() ? "" : r.notes[0]) : leading_line(r.failures);
    if (auto nl = first.find('\n'); nl != std::string::npos) first = first.substr(0, nl);
    fmt::print("{:<20} {:<9} {:<9} {}{}{}\n", e.check_id, e.verdict, r.verdict, ok ? "" : "MISMATCH: ",
               named == Cause::none ? std::string() : fmt::format("[{}] ", spelling(named)),
               first.substr(0, 200));
    if (!ok) {
      if (!e.says.empty() && !contains_phrase(text, e.says))
        fmt::print("    expected the message to say \"{}\"\n", e.says);
      if (!cause.empty()) fmt::print("    {}\n", cause);
      if (!cause_ok)
        fmt::print("    expected the cause {}, the diagnosis names {}\n", spelling(*e.cause),
                   spelling(named));
      fmt::print("    full message:\n{}\n", text);
      if (!r.output.empty()) fmt::print("    output:\n{}\n", r.output);
    }
  }
  if (skipped == static_cast<int>(ex.expectations.size())) return 77;
  return mismatches ? kFailed : kOk;
}

}  // namespace cudalab
