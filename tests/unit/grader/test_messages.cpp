// A failing check's messages as a student reads them (grader/views/report.h's
// check_messages): one "Diagnosis:" line, first; nothing after it that
// offers a cause it ruled out; "(below)" only above something; sanitizer
// output folded; one count of each thing. Each case is a report read on an
// H100 where the lines after a right diagnosis undid it.
#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "authoring/expect.h"
#include "cudalab/catch.h"
#include "cudalab/diagnosis.h"
#include "cudalab/manifest.h"
#include "run/checks.h"
#include "run/explain.h"
#include "run/policy.h"
#include "testbed.h"
#include "views/report.h"

using namespace cudalab;

namespace {

// The lines a student reads under a check's heading, each message split at
// its newlines, blank lines left out.
std::vector<std::string> lines_of(const std::vector<std::string>& messages) {
  std::vector<std::string> out;
  for (const auto& m : messages) {
    std::istringstream in(m);
    for (std::string l; std::getline(in, l);)
      if (const auto start = l.find_first_not_of(" \t"); start != std::string::npos)
        out.push_back(l.substr(start));
  }
  return out;
}

// As a student reads it: its speed outcome (where it was timed) as its own
// record gives it, its points left out.
std::vector<std::string> read(const CheckSpec& spec, const CheckResult& r) {
  CheckScore score{0, spec.points, "", false};
  score.speed = preview_check_score(spec, r, {r}).speed;
  return lines_of(check_messages(Style::for_file(), spec, r, score));
}

// Exactly one line starts with "Diagnosis:", the first, and no line after it
// says any of `ruled_out` (case-insensitive).
void holds_one_diagnosis(const std::vector<std::string>& lines, const std::vector<std::string>& ruled_out) {
  REQUIRE_FALSE(lines.empty());
  INFO("first line: " << lines.front());
  CHECK(lines.front().rfind("Diagnosis:", 0) == 0);
  int diagnoses = 0;
  for (const auto& l : lines) diagnoses += l.rfind("Diagnosis:", 0) == 0;
  CHECK(diagnoses == 1);
  for (std::size_t i = 1; i < lines.size(); ++i)
    for (const auto& phrase : ruled_out) {
      INFO("line " << i << ": " << lines[i]);
      CHECK_FALSE(contains_phrase(lines[i], phrase));
    }
}

// `cause`: the one the harness names with the lead quoted (the second looks
// decide by it).
CheckResult failed(CheckKind kind, std::vector<std::string> failures, Cause cause = Cause::none) {
  CheckResult r;
  r.id = "x", r.kind = kind, r.verdict = Verdict::fail;
  r.failures = std::move(failures);
  r.cause = cause;
  return r;
}

LabSpec transpose_lab() {
  return parse_lab(R"(
[lab]
title = "Transpose"
student_files = ["transpose.cu"]
tests = ["t.cpp"]
[[check]]
id = "square"
name = "transpose is correct"
kind = "correctness"
points = 20
[[check]]
id = "speed"
name = "transpose reaches the padded reference's speed"
kind = "speed"
points = 20
requires = ["square"]
explain = "square"
min_ratio = 0.8
)",
                   "lab.toml", "04_transpose");
}

// labs/04_transpose/test_transpose.cpp's message for a transpose too slow.
const std::string kTransposeSlow =
    "transpose runs at 0.58x the speed of the padded reference kernel; this check needs 0.80x. On this GPU "
    "the "
    "reference without padding runs at 0.58x: a ratio near that is the mark of shared-memory bank conflicts. "
    "Reading a column of a float tile[32][32] sends all 32 threads of a warp to the same bank (a 32-way bank "
    "conflict); pad the tile by one column, tile[TILE][TILE + 1], so that a column spreads over all 32 "
    "banks. "
    "(Nsight Compute counts the conflicts: l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum.) If the "
    "tile is padded already, look at the block: 32 x 32 threads moving one element each measured as slow as "
    "no "
    "padding on an H100; use TILE x BLOCK_ROWS = 32 x 8 threads, each moving 4 elements. A ratio near 0.15x, "
    "that of a transpose without shared memory, means the reads or the writes are not coalesced.";

std::string access_line(const char* space, const char* op, int at, double conflicts) {
  return fmt::format(
      "{{\"file\": \"/s/transpose.cu\", \"function\": \"transpose_kernel\", \"line\": {}, \"space\": \"{}\", "
      "\"op\": \"{}\", \"requests\": 1000, \"sectors\": 4000, \"ideal_sectors\": 4000, "
      "\"sectors_per_request\": 4, \"bank_conflicts_per_request\": {}}}",
      at, space, op, conflicts);
}

// lab 04's words for each cause, as its lab.toml has them.
std::map<std::string, std::string> transpose_words() {
  return load_lab(std::filesystem::path(CUDALAB_SOURCE_ROOT) / "labs" / "04_transpose" / "lab.toml")
      .explain_words;
}

}  // namespace

TEST_CASE(
    "A padded transpose launched with 32 x 32 threads leads with the launch, and nothing after blames "
    "the padding",
    "[unit][explain]") {
  const LabSpec lab = transpose_lab();
  CheckResult r = failed(CheckKind::speed, {kTransposeSlow});
  r.measurements = {{"ratio", 0.58, "x"}, {"gbs", 1600, "GB/s"}};
  const std::string report =
      "{\"lines\": [" + access_line("global", "load", 48, 0) + "," + access_line("shared", "store", 48, 0) +
      "," + access_line("global", "store", 59, 0) + "," + access_line("shared", "load", 59, 0) + "]}";
  const AccessCount yours{report, {{"transpose(1024x1024)", "grid (32, 32, 1), block (32, 32, 1)"}}};
  const AccessCount reference{report, {{"transpose(1024x1024)", "grid (32, 32, 1), block (32, 8, 1)"}}};
  lead_by_access(
      slow_lead(yours, &reference, transpose_words(), "grid (256, 256, 1), block (32, 32, 1)").text, r);
  const auto lines = read(lab.checks[1], r);
  holds_one_diagnosis(lines, {"pad the tile", "mark of shared-memory bank conflicts", "bank conflict)",
                              "not coalesced", "tile[TILE][TILE + 1]"});
  CHECK_THAT(lines.front(), Catch::Contains("not the memory pattern"));
  // How slow stays, as the fact the lead explains, before the metrics.
  REQUIRE(lines.size() >= 3);
  CHECK(lines[1] ==
        "transpose runs at 0.58x the speed of the padded reference kernel; this check needs 0.80x.");
  CHECK_THAT(lines[2], Catch::StartsWith("ratio 0.58x"));
}

TEST_CASE("An unpadded transpose leads with its bank conflicts, and keeps the padding as the fix",
          "[unit][explain]") {
  CheckResult r = failed(CheckKind::speed, {kTransposeSlow});
  const std::string report = "{\"lines\": [" + access_line("shared", "load", 59, 31) + "]}";
  const std::string clean = "{\"lines\": [" + access_line("shared", "load", 59, 0) + "]}";
  const AccessCount reference{clean, {}};
  lead_by_access(slow_lead(AccessCount{report, {}}, &reference, transpose_words(), "").text, r);
  const auto lines = read(transpose_lab().checks[1], r);
  holds_one_diagnosis(lines, {"32 x 32 threads", "not coalesced"});
  CHECK_THAT(lines.front(), Catch::Contains("tile[TILE][TILE + 1]"));
}

namespace {

// Synthetic counts that call for `cause`: the student's, then the reference's.
std::pair<AccessCount, AccessCount> counts_for(SlowCause cause) {
  const auto global = [](int at, double sectors, double ideal, double requests) {
    return fmt::format(
        "{{\"file\": \"/s/k.cu\", \"function\": \"k\", \"line\": {}, \"space\": \"global\", \"op\": "
        "\"load\", "
        "\"requests\": {}, \"sectors\": {}, \"ideal_sectors\": {}, \"sectors_per_request\": {}, "
        "\"bank_conflicts_per_request\": 0}}",
        at, requests, sectors * requests, ideal * requests, sectors);
  };
  const auto shared = [](int at, double conflicts) {
    return fmt::format(
        "{{\"file\": \"/s/k.cu\", \"function\": \"k\", \"line\": {}, \"space\": \"shared\", \"op\": "
        "\"load\", "
        "\"requests\": 1000, \"sectors\": 0, \"ideal_sectors\": 0, \"sectors_per_request\": 0, "
        "\"bank_conflicts_per_request\": {}}}",
        at, conflicts);
  };
  const auto rep = [](std::vector<std::string> lines) {
    std::string s = "{\"lines\": [";
    for (std::size_t i = 0; i < lines.size(); ++i) s += (i ? "," : "") + lines[i];
    return s + "]}";
  };
  const std::vector<std::pair<std::string, std::string>> as_reference = {
      {"k(64)", "grid (1, 1, 1), block (256, 1, 1)"}};
  const AccessCount reference{rep({global(10, 4, 4, 1000), shared(12, 0)}), as_reference};
  switch (cause) {
    case SlowCause::conflicts:
      return {{rep({global(10, 4, 4, 1000), shared(12, 31)}), as_reference}, reference};
    case SlowCause::uncoalesced:
      return {{rep({global(10, 32, 4, 1000), shared(12, 0)}), as_reference}, reference};
    case SlowCause::traffic:
      return {{rep({global(10, 4, 4, 8000), shared(12, 0)}), as_reference}, reference};
    case SlowCause::launch:
      return {{reference.report, {{"k(64)", "grid (64, 1, 1), block (1, 1, 1)"}}}, reference};
    default:
      return {reference, reference};
  }
}

// Each lab's speed message as its test words it: how slow, then every cause it may have.
const std::map<std::string, std::string> kSlowMessages = {
    {"01_coalescing",
     "vector_add runs at 0.09x the speed of the reference kernel; this check needs 0.85x. Do consecutive "
     "threads "
     "(consecutive threadIdx.x) add consecutive elements? If each thread walks through a chunk of its own, "
     "or "
     "indices are multiplied by a stride, the 32 loads of a warp touch up to 32 sectors of memory instead of "
     "4: "
     "the accesses are not coalesced."},
    {"02_naive_matmul",
     "matmul_naive runs at 0.30x the speed of the reference naive kernel; this check needs 0.80x. Does "
     "threadIdx.x "
     "run along a row of C (the column index)? If it runs down a column, the reads of B and the writes of C "
     "are "
     "not coalesced."},
    {"03_tiling",
     "matmul_tiled runs at 0.70x the speed of the reference tiled kernel; this check needs 0.85x. Compare "
     "your "
     "loads and inner loop with the handout's: extra global loads or bank conflicts cost speed."},
    {"04_transpose", kTransposeSlow},
};

}  // namespace

TEST_CASE("Each lab's slow-kernel diagnosis gives the fix for its one cause and nothing of another's",
          "[unit][explain]") {
  for (const auto& [lab_id, message] : kSlowMessages) {
    const LabSpec lab = load_lab(std::filesystem::path(CUDALAB_SOURCE_ROOT) / "labs" / lab_id / "lab.toml");
    const CheckSpec* speed = nullptr;
    for (const auto& c : lab.checks)
      if (!c.explain.empty()) speed = &c;
    INFO(lab_id);
    REQUIRE(speed);
    REQUIRE_FALSE(lab.explain_words.empty());
    for (const SlowCause cause :
         {SlowCause::conflicts, SlowCause::uncoalesced, SlowCause::traffic, SlowCause::launch}) {
      INFO(to_string(cause));
      const auto [yours, reference] = counts_for(cause);
      const SlowLead lead = slow_lead(yours, &reference, lab.explain_words, "");
      CHECK(lead.cause == cause);
      // Its own fix in the lab's words where the lab has some, no other cause's.
      const auto own = lab.explain_words.find(to_string(cause));
      if (own != lab.explain_words.end()) CHECK_THAT(lead.text, Catch::Contains(own->second.substr(0, 40)));
      for (const auto& [other, words] : lab.explain_words)
        if (other != to_string(cause)) CHECK_FALSE(contains_phrase(lead.text, words.substr(0, 40)));
      CheckResult r = failed(CheckKind::speed, {message});
      r.measurements = {{"ratio", 0.5, "x"}};
      lead_by_access(lead.text, r);
      // One diagnosis; the message keeps how slow it is, not the causes it offered.
      const auto lines = read(*speed, r);
      holds_one_diagnosis(lines,
                          {"not coalesced?", "bank conflicts cost", "If it runs down a column", "pad the"});
      REQUIRE(lines.size() >= 2);
      CHECK_THAT(lines[1], Catch::EndsWith("x."));
    }
  }
}

namespace {

// A correctness check that ran out of time on the GPU, as grader/run/checks.cpp
// words it: the limit, then the causes it may have.
CheckResult hung() {
  CheckResult r =
      failed(CheckKind::correctness,
             {"the check did not finish within 10 s (the least a check gets; the reference solution "
              "took 0.6 s) and was stopped: the kernel or the launcher never returned",
              kHangCauses});
  r.verdict = Verdict::timeout;
  return r;
}

}  // namespace

TEST_CASE(
    "A hung tiled matmul with no barrier seen leads with the loop, and offers neither the barrier nor a "
    "grid-stride loop",
    "[unit][explain]") {
  const LabSpec lab = testbed::tiled_lab();
  CheckResult r = hung();
  CheckResult cpu = hung();  // CPU mode did not finish either
  REQUIRE(merge_cpu_mode(cpu, r, false));
  CHECK(r.cause == Cause::hang);  // its own group in the class view, not "timeout"
  const auto lines = read(lab.checks[0], r);
  holds_one_diagnosis(lines, {"not every thread", "__syncthreads that", "grid-stride"});
  CHECK_THAT(lines.front(), Catch::Contains("no such barrier seen"));
  for (const auto& l : lines) CHECK_THAT(l, !Catch::Contains("grid-stride"));
  // The limit stays below the lead, as its fact.
  CHECK_THAT(lines[1], Catch::StartsWith("the check did not finish within 10 s"));

  // The same in CPU mode itself, and for a check spared its look.
  CheckResult in_cpu = hung();
  REQUIRE(lead_hang_in_cpu_mode(in_cpu, false));
  holds_one_diagnosis(read(lab.checks[0], in_cpu), {"not every thread", "grid-stride"});
  CheckResult spared = hung();
  REQUIRE(lead_hang_like("ragged", spared, false));
  holds_one_diagnosis(read(lab.checks[0], spared), {"not every thread", "grid-stride"});
}

TEST_CASE("A hang whose barrier CPU mode names drops the loop from the causes under it", "[unit][explain]") {
  CheckResult r = hung();
  REQUIRE(
      merge_cpu_mode(failed(CheckKind::correctness,
                            {"Diagnosis: a __syncthreads() that some threads never reach: at M=17 N=33 K=9, "
                             "17 threads of block (1, 1, 0) returned before the __syncthreads() at "
                             "matmul_tiled.cu:40."},
                            Cause::barrier_skipped),
                     r, false));
  holds_one_diagnosis(read(testbed::tiled_lab().checks[0], r), {"An endless loop?", "grid-stride"});
}

TEST_CASE("Grid-stride advice is given only in labs whose launcher strides over the grid",
          "[unit][explain]") {
  const std::string root = CUDALAB_SOURCE_ROOT;
  CHECK_FALSE(grid_stride_lab(load_lab(root + "/labs/03_tiling/lab.toml")));
  CHECK_FALSE(grid_stride_lab(load_lab(root + "/labs/04_transpose/lab.toml")));
  CHECK(grid_stride_lab(load_lab(root + "/labs/01_coalescing/lab.toml")));
  CHECK(grid_stride_lab(load_lab(root + "/labs/05_reduction/lab.toml")));
  // A vector add whose loop steps by blockDim.x alone: the lead names the step.
  CheckResult r = hung();
  REQUIRE(lead_hang_in_cpu_mode(r, true));
  CHECK_THAT(r.failures.front(), Catch::Contains("blockDim.x * gridDim.x"));
}

namespace {

// racecheck on a tiled matmul without its second __syncthreads(), as
// compute-sanitizer 2025 writes it: 8 reports, 6 displayed in the summary.
std::string racecheck_output() {
  const std::string k = "matmul_tiled_kernel(const float *, const float *, float *, int, int, int)";
  std::string out = "========= COMPUTE-SANITIZER\n";
  const char* pairs[][4] = {{"Error", "Write", "40", "+0x2a0"}, {"Warning", "Read", "48", "+0x3b0"},
                            {"Error", "Write", "41", "+0x2c0"}, {"Warning", "Read", "48", "+0x3c0"},
                            {"Error", "Write", "40", "+0x2a0"}, {"Warning", "Read", "48", "+0x3b0"},
                            {"Error", "Write", "41", "+0x2c0"}, {"Warning", "Read", "48", "+0x3c0"}};
  for (const auto& p : pairs) {
    const bool write = std::string(p[1]) == "Write";
    out +=
        fmt::format("========= {}: Race reported between {} access at {}{} in /home/s/matmul_tiled.cu:{}\n",
                    p[0], p[1], k, p[3], p[2]);
    out +=
        fmt::format("=========     and {} access at {}+0x3b0 in /home/s/matmul_tiled.cu:{} [1024 hazards]\n",
                    write ? "Read" : "Write", k, write ? "48" : "40");
    out += "=========     Saved host backtrace up to driver entry point at kernel launch time\n";
    out += "=========         Host Frame: [0x2dfbef] in libcuda.so.1\n";
    out += "=========\n";
  }
  return out + "========= RACECHECK SUMMARY: 6 hazards displayed (3 errors, 3 warnings)\n";
}

}  // namespace

TEST_CASE(
    "racecheck's report under a race lead is folded to the lines that race, and the lead stops "
    "sending the student to racecheck",
    "[unit][explain]") {
  const std::string folded = summarize_sanitizer("racecheck", racecheck_output());
  INFO(folded);
  CHECK_THAT(folded, !Catch::Contains("+0x"));
  CHECK_THAT(folded, !Catch::Contains("Host Frame"));
  CHECK_THAT(folded, !Catch::Contains("/home/s/"));
  CHECK_THAT(folded, !Catch::Contains("hazards displayed"));
  CHECK_THAT(folded, Catch::Contains("in matmul_tiled_kernel"));
  CHECK_THAT(folded, Catch::Contains("Write at matmul_tiled.cu:40 and Read at matmul_tiled.cu:48"));
  CHECK_THAT(folded, Catch::Contains("6 hazards (3 errors, 3 warnings)"));
  CHECK(lines_of({folded}).size() <= 6);

  diagnosis::ShapeFacts f;
  f.label = "matmul_tiled(M=64 N=64 K=64)";
  f.dims = diagnosis::parse_dims("M=64 N=64 K=64");
  f.compared = true, f.values_ok = false, f.output = "C", f.elements = 4096, f.wrong = 2304;
  f.pattern = ErrorPattern::scattered;
  f.rerun_changed = 2336;
  const std::string race = "Diagnosis: " + diagnosis::lead({f}) + ".";
  CheckResult r = failed(CheckKind::correctness, {race,
                                                  "matmul_tiled(M=64 N=64 K=64): C (64 x 64): 2304 of 4096 "
                                                  "elements are wrong"});
  REQUIRE(merge_racecheck(failed(CheckKind::correctness, {folded}), r));
  const auto lines = read(testbed::tiled_lab().checks[0], r);
  holds_one_diagnosis(lines, {"--sanitize=racecheck", "run racecheck"});
  CHECK_THAT(lines.front(), !Catch::Contains("--sanitize=racecheck"));
  CHECK_THAT(lines.front(), Catch::EndsWith("loaded again."));
  CHECK(lines.size() <= 9);
  CHECK(message_problem(r.failures).empty());

  // The advice as a lab's test binary says it, with its lab id (on a GPU,
  // where racecheck runs): dropped as well.
  diagnosis::set_lab("03_tiling", false);
  CheckResult named = failed(CheckKind::correctness, {"Diagnosis: " + diagnosis::lead({f}) + ".", "detail"});
  diagnosis::set_lab("", false);
  REQUIRE_THAT(named.failures[0], Catch::Contains("`./cudalab test 03_tiling --sanitize=racecheck`"));
  REQUIRE(merge_racecheck(failed(CheckKind::correctness, {folded}), named));
  CHECK_THAT(named.failures[0], !Catch::Contains("--sanitize=racecheck") && Catch::EndsWith("loaded again."));
}

TEST_CASE("A race's lead says what each of its counts counts", "[unit][explain]") {
  diagnosis::ShapeFacts f;
  f.label = "transpose(rows=64 cols=64)";
  f.dims = diagnosis::parse_dims("rows=64 cols=64");
  f.compared = true, f.values_ok = false, f.output = "out", f.elements = 4096, f.wrong = 2304;
  f.pattern = ErrorPattern::scattered;
  f.rerun_changed = 2336;
  const std::string lead = diagnosis::lead({f});
  INFO(lead);
  // The wrong elements as compare.cpp counts them (against the reference),
  // the changed ones as what they are (the second run against the first).
  CHECK_THAT(lead,
             Catch::Contains("2304 of 4096 elements of out wrong on the first run, against the reference"));
  CHECK_THAT(lead, Catch::Contains("2336 elements came out different on the second run, against the first"));
  CHECK_THAT(lead, !Catch::Contains("elements of out changed"));
}

TEST_CASE("A speed check that failed on its ratio opens with too slow, before its metrics",
          "[unit][explain]") {
  const LabSpec lab = testbed::tiled_lab();
  CheckResult r;
  r.kind = CheckKind::speed, r.verdict = Verdict::fail;
  r.measurements = {{"gbs", 106, "GB/s"}, {"reference_gbs", 2679, "GB/s"}, {"ratio", 0.04, "x"}};
  const auto lines = read(lab.checks[1], r);
  REQUIRE(lines.size() >= 2);
  CHECK_THAT(lines[0], Catch::StartsWith("too slow: 0.04x"));
  CHECK_THAT(lines[0], Catch::Contains("needs 1.30x"));
  // The timed ratio and its line first, then the record's other numbers.
  CHECK_THAT(lines[1], Catch::StartsWith("ratio 0.04x (needs 1.30x), gbs 106 GB/s"));
  // With the lab's own words, those come first.
  r.failures = {
      "vector_add runs at 0.04x the speed of the reference kernel; this check needs 0.85x. Do "
      "consecutive threads add consecutive elements?"};
  CHECK_THAT(read(lab.checks[1], r).front(), Catch::StartsWith("vector_add runs at 0.04x"));
}

TEST_CASE("A rejected submission's message spells std::string as a student writes it", "[unit][explain]") {
  const Violation v{demangle("_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEC1EPKcRKS3_"),
                    "a function of the C++ runtime"};
  const std::string m = v.describe("matmul_tiled.cu");
  INFO(m);
  CHECK_THAT(m, Catch::Contains("std::string::basic_string(char const*"));
  CHECK_THAT(m, !Catch::Contains("__cxx11"));
  CHECK_THAT(m, !Catch::Contains("char_traits"));
  CHECK(readable_name("std::vector<std::__cxx11::basic_string<char, std::char_traits<char>, "
                      "std::allocator<char> >, std::allocator<std::__cxx11::basic_string<char, "
                      "std::char_traits<char>, std::allocator<char> > > >") ==
        "std::vector<std::string, std::allocator<std::string > >");
}

TEST_CASE(
    "A check's messages are refused with a late Diagnosis, a (below) with nothing below, or raw "
    "sanitizer lines",
    "[unit][explain]") {
  CHECK(message_problem({"Diagnosis: the boundary checks.", "matmul_tiled(M=17 N=33 K=9): 1 of 561 wrong"})
            .empty());
  CHECK_THAT(message_problem({"ratio 0.5x", "Diagnosis: a race"}), Catch::Contains("not the first line"));
  CHECK_THAT(message_problem({"Diagnosis: x; and they write outside the buffers there (below)."}),
             Catch::Contains("(below)"));
  CHECK(message_problem({"Diagnosis: y, reports one (below).", "racecheck: ..."}).empty());
  CHECK_THAT(message_problem({"Diagnosis: z", "at kernel(int)+0x3b0 in f.cu:40"}), Catch::Contains("raw"));
  CHECK_THAT(
      message_problem({"Diagnosis: z", "RACECHECK SUMMARY: 6 hazards displayed (3 errors, 3 warnings)"}),
      Catch::Contains("raw"));
  CHECK_FALSE(leading_cause_problem({"Diagnosis: z", "========= Invalid __global__ write"}, "z").empty());
}
