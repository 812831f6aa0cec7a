// Why a kernel is too slow, from what CPU mode counted (issue 11): a speed
// check that names an `explain` correctness check in lab.toml gets, when it
// fails, one leading diagnosis built from simt's access report of that check
// (bank conflicts per shared-memory request, sectors per global request) and
// the student's launch. Speed alone cannot tell an unpadded tile from a
// padded one launched with 32 x 32 threads; the counts can.
#pragma once

#include <filesystem>
#include <string>

namespace cudalab {

// The lead (no "Diagnosis: " prefix, no final period) from an access report
// in simt's JSON form; `launch` describes the student's launch ("grid (256,
// 256, 1), block (32, 32, 1)") or is empty. Empty when the report holds no
// accesses or cannot be read.
std::string access_lead(const std::string& report_json, const std::string& launch);

// "grid (G, G, G), block (B, B, B)" of the first launch in a launch trace
// (cudalab/replay.h), plus "(and N more launches)"; empty if none.
std::string describe_traced_launch(const std::string& trace_json);

struct CheckResult;
struct CheckSpec;
struct LabSpec;
struct RunContext;

// A speed check's result that measured a ratio and failed: one that an
// `explain` check may explain (a failure without a time has its own message).
bool timed_and_failed(const CheckResult& r);

// Runs `by` (the speed check's `explain` check) with the lab's access build
// `access_binary` in the context `ctx` (its binary, evidence and timing
// fields are replaced), the report written to `report` and removed after,
// and puts access_lead's lead first in r's failures as "Diagnosis: ...".
// Where nothing was recorded r is left as it was.
void explain_by_access(const RunContext& ctx, const LabSpec& lab, const CheckSpec& by,
                       const std::filesystem::path& access_binary, const std::filesystem::path& report,
                       const std::string& launch, CheckResult& r);

}  // namespace cudalab
