#include "run/traffic.h"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace cudalab {

double requested_global_bytes(const std::string& report_json, std::string& error) {
  const auto doc = nlohmann::json::parse(report_json, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("lines") || !doc["lines"].is_array()) {
    error = report_json.empty() ? "the access report was not written" : "the access report cannot be read";
    return -1;
  }
  double sectors = 0;
  for (const auto& l : doc["lines"]) {
    if (!l.is_object() || l.value("space", "") != "global") continue;
    const auto s = l.find("sectors");
    if (s == l.end() || !s->is_number() || s->get<double>() < 0) {
      error = "the access report has a global line without its sectors";
      return -1;
    }
    sectors += s->get<double>();
  }
  return 32 * sectors;
}

std::optional<CountedTraffic> counted_traffic(const CheckResult& run, const std::string& report_json,
                                              std::string& error) {
  const Measurement* flops = run.find("traffic_flops");
  if (!flops || !(flops->value > 0)) {
    // The harness records the work only once the kernel ran.
    error = run.failures.empty() ? "the counting run did not run the kernel"
                                 : "the counting run failed: " + run.failures.front();
    return std::nullopt;
  }
  CountedTraffic t;
  t.flops = flops->value;
  t.bytes = requested_global_bytes(report_json, error);
  if (t.bytes < 0) return std::nullopt;
  if (t.bytes == 0) {
    error = "the access report counts no global access of the kernel";
    return std::nullopt;
  }
  for (auto [key, dim] : {std::pair{"traffic_m", &t.m}, {"traffic_n", &t.n}, {"traffic_k", &t.k}})
    if (const Measurement* m = run.find(key)) *dim = static_cast<int>(m->value);
  return t;
}

std::optional<CountedTraffic> count_kernel_traffic(const RunContext& ctx, const LabSpec& lab,
                                                   const CheckSpec& check,
                                                   const std::filesystem::path& binary,
                                                   const std::string& who, std::string& error) {
  // The check's run with nothing of the grader's judging or timing: it runs
  // one kernel, once, at the harness's small shape.
  RunContext rc = bare_run(ctx, binary);
  rc.extra_env.push_back("CUDALAB_TRAFFIC=" + who);
  rc.access_out = ctx.work_dir / (run_stem(lab.id, check.id) + "-traffic.json");
  std::filesystem::create_directories(ctx.work_dir);
  const CheckResult r = run_check(rc, lab, check);
  std::ifstream in(rc.access_out, std::ios::binary);
  std::stringstream report;
  report << in.rdbuf();
  in.close();
  std::error_code ec;
  std::filesystem::remove(rc.access_out, ec);
  return counted_traffic(r, report.str(), error);
}

std::string traffic_json(const CountedTraffic& t) {
  return nlohmann::json{{"bytes", t.bytes}, {"flops", t.flops}, {"m", t.m}, {"n", t.n}, {"k", t.k}}.dump() +
         "\n";
}

std::optional<CountedTraffic> traffic_from_json(const std::string& text) {
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  CountedTraffic t;
  t.bytes = j.value("bytes", 0.0);
  t.flops = j.value("flops", 0.0);
  t.m = j.value("m", 0), t.n = j.value("n", 0), t.k = j.value("k", 0);
  if (!(t.bytes > 0) || !(t.flops > 0)) return std::nullopt;
  return t;
}

void record_traffic(const std::map<std::string, CountedTraffic>& by_who, CheckResult& r) {
  if (by_who.empty()) return;
  const CountedTraffic& any = by_who.begin()->second;
  r.measurements.push_back({"chart_traffic_flops", any.flops, "FLOP"});
  if (any.m > 0 && any.n > 0 && any.k > 0) {
    r.measurements.push_back({"chart_traffic_m", static_cast<double>(any.m), ""});
    r.measurements.push_back({"chart_traffic_n", static_cast<double>(any.n), ""});
    r.measurements.push_back({"chart_traffic_k", static_cast<double>(any.k), ""});
  }
  // The student's first, as the chart lists them.
  std::string words;
  const auto say = [&](const std::string& who, const CountedTraffic& t) {
    r.measurements.push_back({traffic_key(who), t.bytes, "B"});
    words += fmt::format("{}{} {:.2f} FLOP/B", words.empty() ? "" : ", ",
                         who == "student" ? "your kernel" : who, t.flop_per_byte());
  };
  if (auto s = by_who.find("student"); s != by_who.end()) say(s->first, s->second);
  for (const auto& [who, t] : by_who)
    if (who != "student") say(who, t);
  const std::string at = any.m > 0 ? fmt::format(" at {}x{}x{}", any.m, any.n, any.k) : "";
  r.notes.push_back(fmt::format(
      "FLOP per byte of global-memory traffic requested (32-byte sectors, counted in CPU mode{}): {}", at,
      words));
}

void record_no_traffic(const std::string& why, CheckResult& r) {
  r.notes.push_back(kTrafficNotMeasured + why);
}

}  // namespace cudalab
