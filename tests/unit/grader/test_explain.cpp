// The leading diagnosis of a speed check too slow, from CPU mode's access
// report held against the reference's (grader/run/explain.h): bank conflicts,
// uncoalesced accesses, more global traffic, the launch, or none of them,
// each from reports written the way simt writes them.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "authoring/expect.h"
#include "cudalab/catch.h"
#include "cudalab/diagnosis.h"
#include "cudalab/manifest.h"
#include "cudalab/replay.h"
#include "run/checks.h"
#include "run/explain.h"
#include "views/report.h"

using namespace cudalab;

namespace {

// One line of simt's JSON access report: per request, `sectors` 32-byte
// sectors of which `ideal` would hold the bytes, and `conflicts` bank conflicts.
std::string line(const char* space, const char* op, int at, double conflicts, double sectors, double ideal,
                 double requests = 1000) {
  return fmt::format(
      "{{\"file\": \"/home/s/labs/04_transpose/transpose.cu\", \"function\": \"transpose_kernel\", \"line\": "
      "{}, \"space\": \"{}\", \"op\": \"{}\", \"bytes\": 4, \"requests\": {}, \"threads\": {}, \"sectors\": "
      "{}, \"ideal_sectors\": {}, \"wavefronts\": 0, \"ideal_wavefronts\": 0, \"sectors_per_request\": {}, "
      "\"bank_conflicts_per_request\": {}}}",
      at, space, op, requests, 32 * requests, sectors * requests, ideal * requests, sectors, conflicts);
}

std::string report(std::initializer_list<std::string> lines) {
  std::string s = "{\"lines\": [";
  bool first = true;
  for (const auto& l : lines) s += (first ? "" : ",") + l, first = false;
  return s + "]}";
}

const std::string kLaunch = "grid (256, 256, 1), block (32, 32, 1)";
const std::string kCall = "transpose(1024x1024)";

AccessCount count(const std::string& report_json,
                  const std::string& launch = "grid (32, 32, 1), block (32, 8, 1)") {
  return {report_json, {{"transpose(32x32)", "grid (1, 1, 1), block (32, 8, 1)"}, {kCall, launch}}};
}

// The padded reference transpose: coalesced, no conflicts, 32 x 8 threads.
const AccessCount kReference =
    count(report({line("global", "load", 48, 0, 4, 4), line("shared", "store", 48, 0, 0, 0),
                  line("global", "store", 59, 0, 4, 4), line("shared", "load", 59, 0, 0, 0)}));

// lab 04's words for each cause, as its lab.toml has them.
std::map<std::string, std::string> transpose_words() {
  return load_lab(std::filesystem::path(CUDALAB_SOURCE_ROOT) / "labs" / "04_transpose" / "lab.toml")
      .explain_words;
}

}  // namespace

TEST_CASE("an unpadded tile leads with its bank conflicts, at the line that has them", "[explain][grader]") {
  const SlowLead lead =
      slow_lead(count(report({line("global", "load", 48, 0, 4, 4), line("shared", "store", 48, 0, 0, 0),
                              line("global", "store", 59, 0, 4, 4), line("shared", "load", 59, 31, 0, 0)})),
                &kReference, transpose_words(), kLaunch);
  CHECK(lead.cause == SlowCause::conflicts);
  CHECK(lead.where == "transpose.cu:59");
  CHECK(lead.text.rfind(
            "shared-memory bank conflicts: the shared load at transpose.cu:59 in transpose_kernel averages "
            "31.0 bank conflicts per request",
            0) == 0);
  CHECK_THAT(lead.text, Catch::Contains("the reference's kernel averages at most 0.0"));
  // The fix in the lab's words (lab.toml [explain]), not the grader's.
  CHECK_THAT(lead.text, Catch::Contains("tile[TILE][TILE + 1]"));
}

TEST_CASE("bank conflicts the reference has as well do not lead", "[explain][grader]") {
  const AccessCount conflicted =
      count(report({line("global", "load", 48, 0, 4, 4), line("shared", "load", 59, 3, 0, 0)}));
  const SlowLead lead = slow_lead(conflicted, &conflicted, {}, "");
  CHECK(lead.cause == SlowCause::matches);
  // Without the reference's count they do.
  CHECK(slow_lead(conflicted, nullptr, {}, "").cause == SlowCause::conflicts);
  // What it counts is said as it is.
  CHECK_THAT(lead.text, Catch::Contains("at most 3.0 bank conflicts per shared request"));
}

TEST_CASE("a padded tile launched otherwise than the reference leads with the launch, naming both",
          "[explain][grader]") {
  const SlowLead lead =
      slow_lead(count(report({line("global", "load", 48, 0, 4, 4), line("shared", "store", 48, 0, 0, 0),
                              line("global", "store", 59, 0, 4, 4), line("shared", "load", 59, 0, 0, 0)}),
                      "grid (32, 32, 1), block (32, 32, 1)"),
                &kReference, transpose_words(), kLaunch);
  CHECK(lead.cause == SlowCause::launch);
  CHECK(lead.text.rfind(
            "not the memory pattern: CPU mode counts your kernel's memory accesses as the reference's", 0) ==
        0);
  CHECK_THAT(lead.text,
             Catch::Contains("for transpose(1024x1024) yours is grid (32, 32, 1), block (32, 32, 1), "
                             "the reference's grid (32, 32, 1), block (32, 8, 1)"));
  CHECK_THAT(lead.text, Catch::Contains("your launch on the GPU: grid (256, 256, 1), block (32, 32, 1)"));
  CHECK_THAT(lead.text, Catch::Contains("32 x 32 threads"));
  CHECK(lead.text.find("bank conflicts:") == std::string::npos);
  // A padded tile has none to speak of: said in words, not as "at most 0.0".
  CHECK_THAT(lead.text,
             Catch::Contains("every access near its ideal sectors, no bank conflicts in shared memory"));
}

TEST_CASE("counts and launch as the reference's say so and name no cause", "[explain][grader]") {
  const SlowLead lead = slow_lead(kReference, &kReference, transpose_words(), kLaunch);
  CHECK(lead.cause == SlowCause::matches);
  CHECK_THAT(lead.text, Catch::Contains("launched as the reference is"));
  for (const char* cause : {"pad", "coalesce", "32 x 32", "tile[TILE]"})
    CHECK(lead.text.find(cause) == std::string::npos);
}

TEST_CASE("global accesses far above their ideal sectors lead as uncoalesced when shared memory is clean",
          "[explain][grader]") {
  const SlowLead lead =
      slow_lead(count(report({line("global", "load", 48, 0, 4, 4), line("global", "store", 50, 0, 32, 4),
                              line("shared", "load", 59, 0.02, 0, 0)})),
                &kReference, {}, "");
  CHECK(lead.cause == SlowCause::uncoalesced);
  CHECK(lead.where == "transpose.cu:50");
  CHECK(lead.text.rfind("global memory accesses not coalesced: the global store at transpose.cu:50", 0) == 0);
  CHECK_THAT(lead.text, Catch::Contains("32.0 32-byte sectors per request where 4.0 would do"));
  CHECK(lead.text.find("your launch") == std::string::npos);
}

TEST_CASE("a warp's broadcast of two rows, or a rare scattered line, is not an uncoalesced kernel",
          "[explain][grader]") {
  // A naive matmul's A load: two rows per warp, 2 sectors where the 8 bytes fit in 1.
  const AccessCount naive =
      count(report({line("global", "load", 30, 0, 2, 1), line("global", "load", 31, 0, 1, 1),
                    line("global", "store", 33, 0, 2, 2, 10)}));
  CHECK(slow_lead(naive, nullptr, {}, "").cause == SlowCause::none);
  // One scattered store per block beside coalesced loads of every element: 1% of the sectors.
  const AccessCount rare =
      count(report({line("global", "load", 40, 0, 4, 4, 100000), line("global", "store", 41, 0, 32, 1, 10)}));
  CHECK(slow_lead(rare, nullptr, {}, "").cause == SlowCause::none);
  // As scattered as the reference's own worst line: not what makes this one slower.
  const AccessCount swapped = count(report({line("global", "load", 30, 0, 16, 2)}));
  CHECK(slow_lead(swapped, &swapped, {}, "").cause == SlowCause::matches);
  CHECK(slow_lead(swapped, &naive, {}, "").cause == SlowCause::uncoalesced);
}

TEST_CASE("global traffic well above the reference's for the same calls leads, with both numbers",
          "[explain][grader]") {
  // The 128^3 counting run: the naive kernel's 8454144 bytes against the tiled one's 1114112.
  const AccessCount naive =
      count(report({line("global", "load", 30, 0, 2, 1, 131072), line("global", "load", 31, 0, 1, 1, 131072),
                    line("global", "store", 33, 0, 2, 2, 512)}));
  const AccessCount tiled =
      count(report({line("global", "load", 40, 0, 4, 4, 8192), line("global", "load", 41, 0, 2, 2, 16384),
                    line("shared", "load", 45, 0, 0, 0, 65536), line("global", "store", 50, 0, 2, 2, 512)}));
  const SlowLead lead = slow_lead(naive, &tiled, {{"traffic", "that is the reuse tiling is for."}}, "");
  CHECK(lead.cause == SlowCause::traffic);
  CHECK(lead.where.empty());
  CHECK_THAT(lead.text,
             Catch::Contains("your kernel requests 12.62 MB from global memory where the reference's "
                             "requests 2.13 MB for the same calls, 5.9 times as much"));
  CHECK_THAT(lead.text, Catch::EndsWith("coalesce: that is the reuse tiling is for"));
  // Without the reference nothing is measured against: no lead.
  CHECK(slow_lead(naive, nullptr, {}, "").cause == SlowCause::none);
}

TEST_CASE("no report, an empty one or a malformed one gives no lead", "[explain][grader]") {
  for (const char* r : {"", "{\"lines\": []}", "not json", "{\"lines\": 3}"}) {
    const SlowLead lead = slow_lead(AccessCount{r, {}}, &kReference, {}, kLaunch);
    CHECK(lead.cause == SlowCause::none);
    CHECK(lead.text.empty());
  }
}

TEST_CASE("a counting run's launches come from its notes, and a count survives the reference's cache",
          "[explain][grader]") {
  CheckResult run;
  run.notes = {"in CPU mode the inputs of more than 16777216 values (2^24) are skipped",
               std::string(kCountedLaunch) +
                   "transpose(32x32): transpose_kernel<<<grid (1, 1, 1), block (32, 8, 1)>>>",
               std::string(kCountedLaunch) +
                   "transpose(64x256): transpose_kernel<<<grid (8, 2, 1), block (32, 8, 1), 4224 bytes of "
                   "shared memory>>>"};
  const AccessCount c = access_count_of(run, kReference.report);
  CHECK_FALSE(c.timed_out);
  CheckResult stopped = run;
  stopped.verdict = Verdict::timeout;  // a spinner in CPU mode: no count to lead by
  CHECK(access_count_of(stopped, "").timed_out);
  REQUIRE(c.launches.size() == 2);
  CHECK(c.launches[0] ==
        std::pair<std::string, std::string>{"transpose(32x32)", "grid (1, 1, 1), block (32, 8, 1)"});
  CHECK(c.launches[1] ==
        std::pair<std::string, std::string>{"transpose(64x256)", "grid (8, 2, 1), block (32, 8, 1)"});
  const auto back = access_count_from_json(access_count_json(c));
  REQUIRE(back);
  CHECK(back->report == c.report);
  CHECK(back->launches == c.launches);
  CHECK_FALSE(access_count_from_json(access_count_json(AccessCount{"{\"lines\": []}", c.launches})));
  CHECK_FALSE(access_count_from_json("not json"));
}

TEST_CASE("the traced launch is described by its grid and block", "[explain][grader]") {
  replay::Trace t;
  replay::Launch l;
  l.kernel = "_Z16transpose_kernelPKfPfii";
  l.grid[0] = 256, l.grid[1] = 256;
  l.block[0] = 32, l.block[1] = 32;
  t.launches = {l, l};
  CHECK(describe_traced_launch(replay::to_json(t)) ==
        "grid (256, 256, 1), block (32, 32, 1), and 1 more launches");
  CHECK(describe_traced_launch("{}").empty());
}

// --- second opinions on a correctness check that failed on the GPU ---------

namespace {

// The cause the harness names with each lead these tests quote (what
// diagnosis::diagnose returns with that text, or a record carries with it):
// the second looks decide by the cause, never by the words.
Cause cause_of_quoted(const std::vector<std::string>& failures) {
  for (const auto& f : failures) {
    if (f.rfind("Diagnosis: ", 0) != 0) continue;
    const auto has = [&](const char* s) { return f.find(s) != std::string::npos; };
    if (has("a race between threads")) return Cause::race;
    if (has("a __syncthreads() that some threads never reach")) return Cause::barrier_skipped;
    if (has("the launch fails"))
      return has("wrote past the end of the kernel's") ? Cause::shared_overrun
             : has("IllegalAddress")                   ? Cause::illegal_address
                                                       : Cause::launch_fails;
    if (has("the boundary checks")) return Cause::boundary_checks;
    if (has("no element of")) return Cause::never_written;
    if (has("here and there")) return Cause::wrong_values;
    if (has("at scattered positions")) return Cause::scattered_unwritten;
    if (has("computed from shared memory that no thread wrote")) return Cause::unwritten_shared;
    if (has("a loop that never ends")) return Cause::hang;
    return Cause::none;
  }
  return Cause::none;
}

CheckResult failed_with(std::vector<std::string> failures) {
  CheckResult r;
  r.id = "ragged", r.kind = CheckKind::correctness, r.verdict = Verdict::fail;
  r.cause = cause_of_quoted(failures);
  r.failures = std::move(failures);
  return r;
}

const std::string kBoundaryLead =
    "Diagnosis: the boundary checks. Right on every shape where M, N and K are multiples of 16, wrong on "
    "every shape where one is not (K=9 at M=17 N=33 K=9).";
const std::string kBarrierLead =
    "Diagnosis: a __syncthreads() that some threads never reach: at M=17 N=33 K=9, 17 threads of block (1, "
    "1, 0) returned before the __syncthreads() at matmul_tiled.cu:40. Those threads load no part of the "
    "tile.";

}  // namespace

TEST_CASE("a boundary-looking failure on the GPU gets a second look in CPU mode, a race one from racecheck",
          "[explain][grader]") {
  CHECK(second_opinion_for(failed_with({kBoundaryLead, "C[0][0] is wrong"}), true) ==
        SecondOpinion::cpu_mode);
  CHECK(second_opinion_for(failed_with({"Diagnosis: a race between threads. Run twice ..."}), true) ==
        SecondOpinion::racecheck);
  // Without compute-sanitizer a race keeps its lead: CPU mode cannot see one.
  CHECK(second_opinion_for(failed_with({"Diagnosis: a race between threads. Run twice ..."}), false) ==
        SecondOpinion::none);
  // A failed launch names its error and configuration: nothing to add, but
  // for an illegal address, which may be an access past a __shared__ array.
  CHECK(second_opinion_for(failed_with({"Diagnosis: the launch fails at N=1 (invalid configuration)"}),
                           true) == SecondOpinion::none);
  CHECK(
      second_opinion_for(failed_with({"Diagnosis: the launch fails at M=1 N=1 K=1 (cudaErrorIllegalAddress: "
                                      "an illegal memory access was encountered): ..."}),
                         true) == SecondOpinion::cpu_mode);
  // Passing checks, speed checks and failures without a lead are left alone.
  CheckResult pass = failed_with({});
  pass.verdict = Verdict::pass;
  CHECK(second_opinion_for(pass, true) == SecondOpinion::none);
  CheckResult speed = failed_with({kBoundaryLead});
  speed.kind = CheckKind::speed;
  CHECK(second_opinion_for(speed, true) == SecondOpinion::none);
  CHECK(second_opinion_for(failed_with({"not implemented yet"}), true) == SecondOpinion::none);
}

TEST_CASE("an illegal address on the GPU gives way to CPU mode's read past a __shared__ array",
          "[explain][grader]") {
  // An unseen tiled matmul whose inner loop runs `k <= TILE` (H100, 2026-11-25).
  const std::string gpu =
      "Diagnosis: the launch fails at M=1 N=1 K=1 (cudaErrorIllegalAddress: an illegal memory access was "
      "encountered): a thread read or wrote outside the buffers: most often a missing boundary check";
  CheckResult r = failed_with({gpu, "matmul_tiled(M=1 N=1 K=1): the launch failed"});
  const CheckResult cpu = failed_with(
      {"Diagnosis: no element of C is written at M=16 N=16 K=16, though the kernel ran (your launch: grid "
       "(1, 1, "
       "1), block (16, 16, 1)): every element still holds the NaN C was filled with. Either no thread "
       "reaches "
       "the store (a condition none of them meets), or each stores NaN computed from shared memory that no "
       "thread filled (a loop that reads past the tile, `k <= TILE`, or a tile larger than the block that "
       "loads it)"});
  REQUIRE(merge_cpu_mode(cpu, r));
  REQUIRE(r.failures.size() == 3);
  CHECK(r.failures[0].rfind("Diagnosis: a read past the end of a __shared__ array, most likely", 0) == 0);
  CHECK(r.cause == Cause::shared_overrun);  // the grade keeps the cause of the lead it now shows
  CHECK(r.failures[0].find("`k <= TILE`") != std::string::npos);
  CHECK(r.failures[1].rfind("On the GPU: the launch fails at M=1 N=1 K=1 (cudaErrorIllegalAddress", 0) == 0);
  CHECK(r.failures[2] == "matmul_tiled(M=1 N=1 K=1): the launch failed");
}

TEST_CASE("an illegal address on the GPU gives way to simt's store past the kernel's shared variables",
          "[explain][grader]") {
  const std::string gpu =
      "Diagnosis: the launch fails at rows=64 cols=256 (cudaErrorIllegalAddress: an illegal memory access "
      "was "
      "encountered): a thread read or wrote outside the buffers";
  CheckResult r = failed_with({gpu});
  const std::string simt =
      "Diagnosis: the launch fails at rows=64 cols=256 (simt: cudaErrorIllegalAddress): threads of block (0, "
      "0, "
      "0) " +
      std::string(diagnosis::kSharedOverrun) +
      " static __shared__ variables (4224 bytes): 894 bytes after them changed.";
  REQUIRE(merge_cpu_mode(failed_with({simt}), r));
  REQUIRE(r.failures.size() == 1);
  CHECK(r.failures[0].find("wrote past the end of the kernel's static __shared__ variables") !=
        std::string::npos);
  CHECK(r.failures[0].find("(Seen in CPU mode") != std::string::npos);
}

TEST_CASE("an illegal address on the GPU keeps its lead where CPU mode names no shared memory",
          "[explain][grader]") {
  const std::string gpu =
      "Diagnosis: the launch fails at rows=32 cols=32 (cudaErrorIllegalAddress: an illegal memory access was "
      "encountered): a thread read or wrote outside the buffers";
  CheckResult r = failed_with({gpu});
  // gallery 30: a store far past out fails in CPU mode too.
  CHECK_FALSE(
      merge_cpu_mode(failed_with({"Diagnosis: the launch fails at rows=32 cols=32 (...): an access far "
                                  "outside the buffers"}),
                     r));
  // A barrier or a race that CPU mode saw is not what failed the launch.
  CHECK_FALSE(merge_cpu_mode(failed_with({kBarrierLead}), r));
  CHECK(r.failures == std::vector<std::string>{gpu});
}

TEST_CASE("CPU mode's skipped barrier replaces the GPU's boundary guess as the one lead",
          "[explain][grader]") {
  CheckResult r = failed_with({kBoundaryLead, "at M=17 N=33 K=9: 561 of 561 elements of C wrong"});
  CheckResult cpu = failed_with({kBarrierLead, "at M=17 N=33 K=9: ..."});
  REQUIRE(merge_cpu_mode(cpu, r));
  REQUIRE(r.failures.size() == 2);
  CHECK(r.failures[0].rfind("Diagnosis: a __syncthreads() that some threads never reach: at M=17", 0) == 0);
  CHECK(r.cause == Cause::barrier_skipped);  // the grade keeps the cause of the lead it now shows
  CHECK(r.failures[0].find("Seen in CPU mode") != std::string::npos);
  CHECK(r.failures[1] == "at M=17 N=33 K=9: 561 of 561 elements of C wrong");
  int leads = 0;
  for (const auto& f : r.failures) leads += f.rfind("Diagnosis: ", 0) == 0;
  CHECK(leads == 1);
}

TEST_CASE("A race CPU mode sees replaces the GPU's boundary guess, where the race bit the same way twice",
          "[explain][grader]") {
  // Gallery 23 (no __syncthreads after the inner product) on an H100: a few
  // wrong elements, only on ragged shapes, the same on a rerun.
  CheckResult r = failed_with({kBoundaryLead, "at M=513 N=257 K=129: 130 of 131841 elements of C wrong"});
  CheckResult cpu =
      failed_with({"Diagnosis: a race between threads. Run twice on the same inputs at M=17 N=33 "
                   "K=9 (the second time with the threads of each block in another order), the "
                   "kernel gave different results (40 elements of C changed).",
                   "detail"});
  REQUIRE(merge_cpu_mode(cpu, r));
  REQUIRE(r.failures.size() == 2);
  CHECK(r.failures[0].rfind("Diagnosis: a race between threads. Run twice on the same inputs at M=17", 0) ==
        0);
  CHECK(r.failures[0].find("Seen in CPU mode") != std::string::npos);
  CHECK(r.failures[1] == "at M=513 N=257 K=129: 130 of 131841 elements of C wrong");
  // A GPU lead that is a race already keeps its own words.
  CheckResult gpu_race = failed_with({"Diagnosis: a race between threads. Run twice at M=64 ...", "detail"});
  CHECK_FALSE(merge_cpu_mode(cpu, gpu_race));
}

namespace {

CheckResult hung_on_gpu() {
  CheckResult r =
      failed_with({"the check did not finish within 10 s (the least a check gets; the reference "
                   "solution took 0.6 s) and was stopped: the kernel or the launcher never "
                   "returned",
                   kHangCauses});
  r.verdict = Verdict::timeout;
  return r;
}

}  // namespace

TEST_CASE("A check that hung on the GPU leads with the barrier CPU mode sees, or with the endless loop",
          "[explain][grader]") {
  // An unseen tiled matmul with its loads and first __syncthreads() inside
  // `if (row < M && col < N)` hung on an H100 (2026-11-25); CPU mode named
  // the barrier.
  REQUIRE(second_opinion_for(hung_on_gpu(), true) == SecondOpinion::cpu_mode);
  CheckResult speed = hung_on_gpu();
  speed.kind = CheckKind::speed;
  CHECK(second_opinion_for(speed, true) == SecondOpinion::none);

  CheckResult r = hung_on_gpu();
  REQUIRE(merge_cpu_mode(failed_with({kBarrierLead, "detail"}), r));
  REQUIRE(r.failures.size() == 2);
  CHECK(r.failures[0].rfind("Diagnosis: a __syncthreads() that some threads never reach: at M=17", 0) == 0);
  CHECK(r.cause == Cause::barrier_skipped);  // the grade keeps the cause of the lead it now shows
  CHECK(r.failures[0].find("the check never finished") != std::string::npos);
  CHECK(r.failures[1].rfind("the check did not finish within 10 s", 0) == 0);
  CHECK(r.verdict == Verdict::timeout);  // the points are the timeout's: none

  // CPU mode did not finish either: no barrier was seen, the loop leads.
  CheckResult loop = hung_on_gpu();
  CheckResult cpu_hung = hung_on_gpu();
  REQUIRE(merge_cpu_mode(cpu_hung, loop));
  CHECK(loop.failures[0].rfind(
            "Diagnosis: a loop that never ends, or runs far longer than it should: the check "
            "did not finish within 10 s (the least a check gets; the reference solution took "
            "0.6 s) on the GPU",
            0) == 0);
  CHECK(loop.failures[0].find("did not finish within 10 s either") != std::string::npos);

  // Another check of the lab hung in CPU mode too: one that hung on the GPU
  // after it is spared the look (an unseen tiled matmul whose tile loop never
  // advances, H100 2026-11-25, hangs in every check) and says why it leads so.
  CheckResult spared = hung_on_gpu();
  spared.id = "memory";
  REQUIRE(lead_hang_like("tiled matmul is correct on ragged and rectangular shapes", spared, false));
  CHECK(spared.failures[0].rfind(
            "Diagnosis: a loop that never ends, or runs far longer than it should: the check "
            "did not finish within 10 s (the least a check gets; the reference solution took "
            "0.6 s) on the GPU, nor did 'tiled matmul is correct on ragged and rectangular "
            "shapes' of this lab",
            0) == 0);
  CHECK(spared.failures.size() == 2);
  CHECK_FALSE(lead_hang_like("x", spared, false));  // one lead only

  // CPU mode finished and saw something else (or passed): the GPU's message stands alone.
  CheckResult other = hung_on_gpu();
  CHECK_FALSE(merge_cpu_mode(failed_with({kBoundaryLead}), other));
  CheckResult passed = failed_with({});
  passed.verdict = Verdict::pass;
  CHECK_FALSE(merge_cpu_mode(passed, other));
  CHECK(other.failures == hung_on_gpu().failures);
}

TEST_CASE(
    "A check that ran out of time in CPU mode itself leads with the loop, as simt names a skipped barrier",
    "[explain][grader]") {
  // An unseen tiled matmul whose tile loop never advances (`t + TILE` for
  // `t += TILE`) and a vector add whose grid-stride loop steps by blockDim.x
  // alone both hung in CPU mode with "An endless loop? (a loop ..., or a
  // __syncthreads ...)": two causes, where simt had already ruled out the second.
  CheckResult r = hung_on_gpu();
  REQUIRE(lead_hang_in_cpu_mode(r, true));  // a vector add: its lab strides over the grid
  REQUIRE(r.failures.size() == 2);
  CHECK(r.failures[0].rfind(
            "Diagnosis: a loop that never ends, or runs far longer than it should: the check did "
            "not finish within 10 s (the least a check gets; the reference solution took 0.6 s) in "
            "CPU mode",
            0) == 0);
  CHECK(r.failures[0].find("blockDim.x * gridDim.x") != std::string::npos);
  CHECK(r.failures[1] == hung_on_gpu().failures[0]);  // the limit's details stay below
  CHECK(r.verdict == Verdict::timeout);

  // Only once, and only for a correctness check that timed out.
  CHECK_FALSE(lead_hang_in_cpu_mode(r, true));
  CheckResult speed = hung_on_gpu();
  speed.kind = CheckKind::speed;
  CHECK_FALSE(lead_hang_in_cpu_mode(speed, true));
  CheckResult failed = failed_with({kBoundaryLead});
  CHECK_FALSE(lead_hang_in_cpu_mode(failed, true));
}

TEST_CASE("CPU mode that sees no skipped barrier leaves the GPU's lead as it was", "[explain][grader]") {
  CheckResult r = failed_with({kBoundaryLead, "detail"});
  const CheckResult before = r;
  CHECK_FALSE(merge_cpu_mode(failed_with({kBoundaryLead}), r));
  CHECK_FALSE(merge_cpu_mode(failed_with({"the check crashed"}), r));
  CheckResult passed = failed_with({});
  passed.verdict = Verdict::pass;
  CHECK_FALSE(merge_cpu_mode(passed, r));
  CHECK(r.failures == before.failures);
}

TEST_CASE("racecheck's report goes right under the race lead, and nothing else does", "[explain][grader]") {
  CheckResult r =
      failed_with({"Diagnosis: a race between threads. Run twice at M=64 N=64 K=64 ...", "detail"});
  CheckResult s = failed_with(
      {"compute-sanitizer (racecheck) reported a race in matmul_tiled_kernel, between:\n  Write at "
       "matmul_tiled.cu:40 and Read at matmul_tiled.cu:43"});
  REQUIRE(merge_racecheck(s, r));
  REQUIRE(r.failures.size() == 3);
  CHECK(r.failures[1].find("matmul_tiled.cu:40") != std::string::npos);
  CHECK(r.failures[2] == "detail");
  // racecheck that reported nothing (its run failed the ordinary way) adds nothing.
  CHECK_FALSE(merge_racecheck(failed_with({"Diagnosis: a race ..."}), r));
  CHECK(r.failures.size() == 3);
}

TEST_CASE("wrong elements here and there that a rerun repeats become a race when racecheck reports one",
          "[explain][grader]") {
  const std::string scattered =
      "Diagnosis: 32 of 256 elements of C are wrong at M=16 N=16 K=16, here and there (a rerun on the same "
      "inputs gave the same result): look first for an off-by-one at the tile edges, then for a race";
  CHECK(second_opinion_for(failed_with({scattered}), true) == SecondOpinion::racecheck);
  // Without compute-sanitizer, CPU mode looks instead.
  CHECK(second_opinion_for(failed_with({scattered}), false) == SecondOpinion::cpu_mode);
  CheckResult r = failed_with({scattered, "detail"});
  const CheckResult race = failed_with(
      {"compute-sanitizer (racecheck) reported a race in matmul_tiled_kernel, between:\n  Write at "
       "matmul_tiled.cu:40 and Read at matmul_tiled.cu:43"});
  REQUIRE(merge_racecheck(race, r));
  REQUIRE(r.failures.size() == 3);
  CHECK(r.failures[0].rfind("Diagnosis: a race between threads", 0) == 0);
  CHECK(r.cause == Cause::race);  // the grade keeps the cause of the lead it now shows
  CHECK(r.failures[1].find("matmul_tiled.cu:40") != std::string::npos);
  // racecheck that reports something else (no race) leaves such a lead alone.
  CheckResult q = failed_with({scattered});
  CHECK_FALSE(merge_racecheck(failed_with({"compute-sanitizer (racecheck): ERROR SUMMARY: 1 error"}), q));
  CHECK(q.failures == std::vector<std::string>{scattered});
}

TEST_CASE(
    "a race that only a rerun saw, and racecheck did not, gives way to CPU mode's unfilled shared memory",
    "[explain][grader]") {
  // An unseen transpose whose store's bounds check is not swapped (H100,
  // 2026-11-25) read tile elements no thread loaded: their stale values
  // changed from run to run, which reads as a race.
  const std::string rerun =
      "Diagnosis: a race between threads. Run twice on the same inputs at rows=33 cols=65, the kernel gave "
      "different results (31 elements of out changed)";
  CheckResult r = failed_with({rerun, "out[0][32] is wrong"});
  CHECK(race_unconfirmed(r));
  // racecheck that reported nothing leaves it unconfirmed ...
  CHECK_FALSE(merge_racecheck(failed_with({rerun}), r));
  CHECK(race_unconfirmed(r));
  // ... and CPU mode, where such memory holds NaN, names it.
  const CheckResult cpu = failed_with(
      {"Diagnosis: 2048 elements of out are never written at rows=33 cols=65, at scattered positions rather "
       "than whole last rows or columns: some threads return (or skip their store) before writing, or read "
       "shared memory that was never filled"});
  REQUIRE(merge_unconfirmed_race(cpu, r));
  REQUIRE(r.failures.size() == 2);
  CHECK(r.failures[0].rfind("Diagnosis: threads read shared memory that no thread of their block wrote", 0) ==
        0);
  CHECK(r.cause == Cause::unwritten_shared);  // the grade keeps the cause of the lead it now shows
  CHECK(r.failures[0].find("found no race") != std::string::npos);
  CHECK(r.failures[0].find(
            "In CPU mode, where this check ran again on simulated threads and such memory holds "
            "NaN: 2048 elements of out are never written at rows=33 cols=65") != std::string::npos);
  CHECK(r.failures[1] == "out[0][32] is wrong");
  CHECK_FALSE(race_unconfirmed(r));  // once only
  CHECK_FALSE(merge_unconfirmed_race(cpu, r));
}

TEST_CASE("a race that racecheck confirmed, or that CPU mode saw too, stays the race", "[explain][grader]") {
  const std::string rerun = "Diagnosis: a race between threads. Run twice on the same inputs ...";
  CheckResult r = failed_with({rerun, "detail"});
  REQUIRE(merge_racecheck(failed_with({"compute-sanitizer (racecheck) reported a race in transpose_kernel, "
                                       "between:\n  Write at transpose.cu:40 and Read at transpose.cu:45"}),
                          r));
  CHECK_FALSE(race_unconfirmed(r));
  CHECK_FALSE(
      merge_unconfirmed_race(failed_with({"Diagnosis: 12 elements of out are never written ..., or read "
                                          "shared memory that was never filled"}),
                             r));
  CHECK(r.failures[0] == rerun);
  // CPU mode's own rerun, the threads in another order, changed the result too.
  CheckResult q = failed_with({rerun});
  CHECK_FALSE(merge_unconfirmed_race(failed_with({"Diagnosis: a race between threads. Run twice ..."}), q));
  CHECK(q.failures == std::vector<std::string>{rerun});
  // Another lead is never an unconfirmed race.
  CHECK_FALSE(race_unconfirmed(failed_with({"Diagnosis: the boundary checks ..."})));
}

TEST_CASE("an unconfirmed race that CPU mode shows as a skipped barrier becomes the barrier",
          "[explain][grader]") {
  CheckResult r = failed_with({"Diagnosis: a race between threads. Run twice ..."});
  REQUIRE(merge_unconfirmed_race(
      failed_with({"Diagnosis: a __syncthreads() that some threads never reach: at rows=33 cols=65, in "
                   "transpose_kernel ..."}),
      r));
  CHECK(r.failures[0].rfind("Diagnosis: a __syncthreads() that some threads never reach", 0) == 0);
  CHECK(r.failures[0].find("racecheck found no race") != std::string::npos);
}

TEST_CASE("an unconfirmed race where CPU mode saw nothing says what else changes results from run to run",
          "[explain][grader]") {
  CheckResult r = failed_with({"Diagnosis: a race between threads. Run twice ...", "detail"});
  CheckResult passed;
  passed.kind = CheckKind::correctness;
  passed.verdict = Verdict::pass;
  REQUIRE(merge_unconfirmed_race(passed, r));
  REQUIRE(r.failures.size() == 3);
  CHECK(r.failures[0].rfind("Diagnosis: a race between threads", 0) == 0);
  CHECK(r.cause == Cause::race);  // the grade keeps the cause of the lead it now shows
  CHECK(r.failures[1].find("found no race, and neither did CPU mode") != std::string::npos);
  CHECK(r.failures[2] == "detail");
  CHECK_FALSE(race_unconfirmed(r));  // the line follows the lead: said once
}

TEST_CASE("two runs of the same check at once never share their files' names", "[explain][grader]") {
  // A batch over several GPUs runs the same lab's checks for two submissions
  // at the same time, in one process: their record and trace files must differ.
  std::vector<std::string> names(64);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&names, t] {
      for (int i = 0; i < 16; ++i) names[t * 16 + i] = run_stem("03_tiling", "ragged");
    });
  for (auto& t : threads) t.join();
  std::sort(names.begin(), names.end());
  CHECK(std::adjacent_find(names.begin(), names.end()) == names.end());
  CHECK(names.front().rfind("03_tiling-ragged-", 0) == 0);
}

// ---------------------------------------------------------------------------
// The lead a student reads first (grader/authoring/expect.h), which the variants and the
// gallery hold against the cause they expect.

TEST_CASE("A failed check's lead is its Diagnosis line, even after the line it explains",
          "[explain][grader]") {
  const std::vector<std::string> speed = {
      "transpose runs at 0.59x the speed of the padded reference kernel; this check needs 0.80x.\n"
      "  Diagnosis: shared-memory bank conflicts: the shared load at transpose.cu:59 averages 31.0"};
  CHECK(leading_line(speed).rfind("Diagnosis: shared-memory bank conflicts", 0) == 0);
  // A student reads the line above it first: the Diagnosis belongs first.
  CHECK_THAT(leading_cause_problem(speed, "bank conflicts"), Catch::Contains("not the first line"));
  const std::vector<std::string> first = {
      "Diagnosis: shared-memory bank conflicts: the shared load at transpose.cu:59 averages 31.0",
      "transpose runs at 0.59x the speed of the padded reference kernel; this check needs 0.80x."};
  CHECK(leading_cause_problem(first, "bank conflicts").empty());
  CHECK_FALSE(leading_cause_problem(first, "not the memory pattern").empty());
}

TEST_CASE("Without a Diagnosis line, the lead is the first line of the first failure", "[explain][grader]") {
  const std::vector<std::string> slow = {
      "\nvector_add runs at 0.08x the speed of the reference kernel.\nDo "
      "consecutive threads add consecutive elements?",
      "second failure"};
  CHECK(leading_line(slow) == "vector_add runs at 0.08x the speed of the reference kernel.");
  CHECK(leading_cause_problem(slow, "0.08x").empty());
  CHECK_FALSE(leading_cause_problem(slow, "consecutive elements").empty());  // not in the lead
  CHECK(leading_line({}).empty());
  CHECK_FALSE(leading_cause_problem({}, "anything").empty());
}

TEST_CASE("A check that shows two causes is a problem whatever its lead says", "[explain][grader]") {
  const std::vector<std::string> two = {"Diagnosis: a race between threads.",
                                        "Likely cause: the boundary checks."};
  const std::string problem = leading_cause_problem(two, "a race");
  CHECK(problem.find("2 causes") != std::string::npos);
}

TEST_CASE("Shared memory that CPU mode saw no thread write leads over a GPU lead guessed from the values",
          "[explain][grader]") {
  // Variant tile_column_not_loaded on an H200: "most of C is wrong ... the
  // index arithmetic" at 16^3; CPU mode names the tile's column never loaded.
  const std::string gpu =
      "Diagnosis: most of C is wrong at every failing shape (240 of 256 elements at M=16 N=16 K=16), the "
      "same "
      "on a rerun: the values land in the wrong places or are computed from the wrong elements.";
  CheckResult r = failed_with({gpu, "C[0][0] = 3 (expected 4)"});
  r.cause = Cause::index_arithmetic;
  CheckResult cpu =
      failed_with({"Diagnosis: C[0][15] is NaN, computed from shared memory that no thread wrote: "
                   "at M=16 N=16 K=16, 256 of 256 elements of C are NaN."});
  REQUIRE(cpu.cause == Cause::unwritten_shared);
  REQUIRE(merge_cpu_mode(cpu, r));
  CHECK(r.cause == Cause::unwritten_shared);
  CHECK_THAT(r.failures[0], Catch::StartsWith("Diagnosis: C[0][15] is NaN, computed from shared memory") &&
                                Catch::Contains("Seen in CPU mode") && !Catch::Contains("index arithmetic"));
  CHECK(r.failures[1] == "C[0][0] = 3 (expected 4)");  // the GPU's evidence stays below
  // A GPU lead that states a fact of its own (NaN read past the end of A) stays.
  CheckResult past =
      failed_with({"Diagnosis: C[3][7] is NaN though A and B hold none: the kernel read past"});
  past.cause = Cause::reads_past_end;
  CHECK_FALSE(merge_cpu_mode(cpu, past));
  CHECK(past.cause == Cause::reads_past_end);
}
