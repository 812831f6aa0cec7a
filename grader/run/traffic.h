// grader/run/traffic.h: the global-memory traffic each kernel of a speed check
// requested, as CPU mode counts it: what the report's roofline places its
// kernels by.
//
// A roofline's x is work per byte of traffic. The lab's nominal intensity
// (chart_bytes: what one call must move at the least) is the same for every
// kernel of a check, so on it a tiled and a naive matmul stand on one line
// and tiling, which changes the traffic, changes nothing. simt's access
// report (simt/README.md) counts, per source line of the instrumented file,
// the distinct 32-byte sectors each warp's request touches: summed over the
// global lines of one call at a small shape of the check's kind (the
// harness's counting run, cudalab::traffic_of) and times 32, that is the
// traffic the kernel asked the memory system for; the call's FLOP over it
// is the kernel's x. These are requested sectors (what L1 is asked for), not
// DRAM's bytes: the caches serve part of them, so a kernel whose requests
// hit in cache stands above the DRAM slope at its x.
//
// The student's count comes from a process that ran the student's code
// (its record and the report simt writes at its exit): it can move a point
// on the chart and change a note, never a verdict or a point.
//
// The grader counts once per reference build for the reference and the
// lab's foils (the same for every submission) and once per submission for
// the student's kernel, and only for a check whose chart is a roofline
// (pipeline/traffic.cpp). Host-only (tested), but for
// count_kernel_traffic, which runs a check.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "core/speed_chart.h"
#include "run/checks.h"

namespace cudalab {

// The global bytes an access report (simt's JSON form) counts: 32 per
// sector over its global lines. -1 with `error` set when it cannot be read;
// 0 when it counts no global access.
double requested_global_bytes(const std::string& report_json, std::string& error);

// One kernel's count: one call's requested global bytes, its FLOP and shape.
struct CountedTraffic {
  double bytes = 0, flops = 0;
  int m = 0, n = 0, k = 0;  // 0: no shape given
  double flop_per_byte() const { return bytes > 0 ? flops / bytes : 0; }
};
// The count of one counting run: its result (the harness's traffic_flops
// and traffic_m/n/k) and its access report. nullopt with `error` set where
// the run counted nothing (it named no kernel, failed, or the report holds
// no global access).
std::optional<CountedTraffic> counted_traffic(const CheckResult& run, const std::string& report_json,
                                              std::string& error);

// Runs `check` of a CPU-mode access build `binary` (<lab>-tests-access: the
// student's file instrumented; <lab>-tests-traffic: the references' too) to
// count the kernel `who` (cudalab::traffic_of), in `ctx` with its evidence,
// timing and sanitizer cleared; the report goes to ctx.work_dir and is
// removed after. The count, or nullopt with `error` set.
std::optional<CountedTraffic> count_kernel_traffic(const RunContext& ctx, const LabSpec& lab,
                                                   const CheckSpec& check,
                                                   const std::filesystem::path& binary,
                                                   const std::string& who, std::string& error);

// CountedTraffic as the reference's cache keeps it, and back (nullopt for
// anything else).
std::string traffic_json(const CountedTraffic& t);
std::optional<CountedTraffic> traffic_from_json(const std::string& text);

// Adds the counts, per kernel ("student", "naive", ...), to a speed check's
// result as the measurements above, with a note that says them in words
// for the text report ("your kernel 4.00 FLOP/B, naive 0.50 FLOP/B").
// Every count must be of the same call (flops and shape).
void record_traffic(const std::map<std::string, CountedTraffic>& by_who, CheckResult& r);
// Where they could not be counted: the note kTrafficNotMeasured + why.
void record_no_traffic(const std::string& why, CheckResult& r);

}  // namespace cudalab
