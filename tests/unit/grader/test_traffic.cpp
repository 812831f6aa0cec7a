// The traffic the report's roofline places kernels by (grader/run/traffic.h):
// simt's access report read into bytes, a counting run into a count, the
// counts into a speed check's measurements and back.
#include <string>

#include "cudalab/catch.h"
#include "run/traffic.h"

using namespace cudalab;

namespace {

// The access report of lab 02's naive solution at 128^3, as simt wrote it
// (its lines shortened to what the grader reads), and one shared line of a
// tiled kernel, which is no global traffic.
const char* kNaiveReport = R"({"lines": [
  {"file": "matmul_naive.cu", "function": "matmul_naive_kernel", "line": 29, "space": "global", "op": "load",
   "bytes": 4, "requests": 131072, "sectors": 262144, "ideal_sectors": 196608},
  {"file": "matmul_naive.cu", "function": "matmul_naive_kernel", "line": 30, "space": "global", "op": "store",
   "bytes": 4, "requests": 512, "sectors": 2048, "ideal_sectors": 2048},
  {"file": "matmul_tiled.cu", "function": "matmul_tiled_kernel", "line": 46, "space": "shared", "op": "load",
   "bytes": 4, "requests": 131072, "sectors": 0, "wavefronts": 131072}
]})";

// The harness's counting run at 128^3 (course/include/common/matmul.h).
CheckResult counting_run() {
  CheckResult r;
  r.verdict = Verdict::not_run;
  r.measurements = {{"traffic_flops", 2.0 * 128 * 128 * 128, "FLOP"},
                    {"traffic_m", 128, ""},
                    {"traffic_n", 128, ""},
                    {"traffic_k", 128, ""}};
  return r;
}

}  // namespace

TEST_CASE("an access report's global lines give the bytes a kernel requested, 32 per sector",
          "[unit][traffic]") {
  std::string error;
  // (262144 + 2048) sectors; the shared line adds nothing.
  CHECK(requested_global_bytes(kNaiveReport, error) == 32.0 * (262144 + 2048));
  CHECK(error.empty());
  CHECK(requested_global_bytes(R"({"lines": []})", error) == 0);
  CHECK(requested_global_bytes("", error) < 0);
  CHECK(error == "the access report was not written");
  CHECK(requested_global_bytes("{\"lines\": [", error) < 0);
  CHECK(error == "the access report cannot be read");
  CHECK(requested_global_bytes(R"({"lines": [{"space": "global", "op": "load"}]})", error) < 0);
  CHECK(error == "the access report has a global line without its sectors");
}

TEST_CASE("a counting run and its access report make one kernel's count, or say why not", "[unit][traffic]") {
  std::string error;
  const auto t = counted_traffic(counting_run(), kNaiveReport, error);
  REQUIRE(t);
  CHECK(t->bytes == 8454144);
  CHECK(t->flops == 4194304);
  CHECK(t->m == 128);
  CHECK(t->k == 128);
  CHECK(t->flop_per_byte() == Approx(0.496).epsilon(0.001));
  // The harness records the work only once the kernel ran.
  CheckResult ran_nothing;
  ran_nothing.verdict = Verdict::not_run;
  CHECK_FALSE(counted_traffic(ran_nothing, kNaiveReport, error));
  CHECK(error == "the counting run did not run the kernel");
  ran_nothing.failures = {"matmul_tiled is not implemented yet"};
  CHECK_FALSE(counted_traffic(ran_nothing, kNaiveReport, error));
  CHECK(error == "the counting run failed: matmul_tiled is not implemented yet");
  CHECK_FALSE(counted_traffic(counting_run(), R"({"lines": []})", error));
  CHECK(error == "the access report counts no global access of the kernel");
  CHECK_FALSE(counted_traffic(counting_run(), "", error));
  CHECK(error == "the access report was not written");
}

TEST_CASE("the counts go into a speed check's measurements and a note, the student's first",
          "[unit][traffic]") {
  std::string error;
  const CountedTraffic naive = *counted_traffic(counting_run(), kNaiveReport, error);
  CountedTraffic tiled = naive;
  tiled.bytes = 1114112;  // lab 03's solution at 128^3
  CheckResult r;
  record_traffic({{"naive", naive}, {"student", tiled}}, r);
  CHECK(r.find("chart_traffic_flops")->value == 4194304);
  CHECK(r.find("chart_traffic_m")->value == 128);
  CHECK(r.find(traffic_key("student"))->value == 1114112);
  CHECK(r.find("chart_traffic_naive_bytes")->value == 8454144);
  REQUIRE(r.notes.size() == 1);
  CHECK(r.notes[0] ==
        "FLOP per byte of global-memory traffic requested (32-byte sectors, counted in CPU mode at "
        "128x128x128): your kernel 3.76 FLOP/B, naive 0.50 FLOP/B");
  CheckResult none;
  record_no_traffic("your files did not build for CPU mode's access count", none);
  CHECK(none.notes == std::vector<std::string>{
                          "traffic not measured: your files did not build for CPU mode's access count"});
  CHECK(none.measurements.empty());
}

TEST_CASE("a count kept for the reference reads back as it was written", "[unit][traffic]") {
  CountedTraffic t;
  t.bytes = 1114112, t.flops = 4194304, t.m = t.n = t.k = 128;
  const auto back = traffic_from_json(traffic_json(t));
  REQUIRE(back);
  CHECK(back->bytes == t.bytes);
  CHECK(back->flops == t.flops);
  CHECK(back->n == 128);
  CHECK_FALSE(traffic_from_json("{}"));
  CHECK_FALSE(traffic_from_json("not json"));
}
