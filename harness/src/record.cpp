#include "cudalab/record.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cudalab/diagnosis.h"
#include "cudalab/vocabulary.h"

namespace cudalab {

namespace {

struct State {
  std::string path;
  int fd = -1;  // the grader's descriptor (--record-fd): no path a student could learn
  nlohmann::json doc = {{"format", kRecordFormat}, {"checks", nlohmann::json::array()}};
  nlohmann::json check;  // the running one
  std::string name;
  int run = 0, not_run = 0;
};

State& state() {
  static State s;
  return s;
}

// The whole document at offset 0, then cut to its length: a reader after the
// process ended sees the last complete document (a crash mid-write leaves one
// the grader cannot parse, and the check is reported as a crash anyway).
void write_fd(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::pwrite(fd, text.data() + done, text.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
  if (::ftruncate(fd, static_cast<off_t>(text.size())) != 0) return;
}

void write() {
  State& s = state();
  if (s.fd >= 0) write_fd(s.fd, s.doc.dump(2) + "\n");
  if (s.path.empty()) return;
  const std::string tmp = s.path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << s.doc.dump(2) << "\n";
    if (!out) return;
  }
  std::rename(tmp.c_str(), s.path.c_str());  // atomic: a crash never leaves half a file
}

}  // namespace

void set_record_path(const std::string& path) {
  state().path = path;
  write();
}

void set_record_fd(int fd) {
  state().fd = fd;
  write();
}

void set_record_context(const std::string& key, const std::string& value) {
  state().doc[key] = value;
  write();
}

const std::string& current_check() {
  return state().name;
}

void begin_check(const std::string& name) {
  State& s = state();
  s.name = name;
  s.check = {{"name", name},
             {"verdict", spelling(Verdict::running)},
             {"failures", nlohmann::json::array()},
             {"notes", nlohmann::json::array()},
             {"measurements", nlohmann::json::array()}};
  diagnosis::begin();
}

void note(const std::string& line) {
  state().check["notes"].push_back(line);
}

void measure(const std::string& key, double value, const std::string& unit) {
  state().check["measurements"].push_back({{"key", key}, {"value", value}, {"unit", unit}});
}

void mark_not_run(const std::string& reason) {
  state().check["not_run"] = reason;
}

void add_failure(const std::string& message) {
  state().check["failures"].push_back(message);
}

void end_check(bool passed, double seconds) {
  State& s = state();
  const bool not_run = s.check.contains("not_run");
  // A check that did not run never counts as passed, whatever Catch2 saw.
  s.check["verdict"] = spelling(not_run && passed ? Verdict::not_run
                                : passed          ? Verdict::pass
                                                  : Verdict::fail);
  // One cause first, from all the shapes the check ran (diagnosis.h).
  if (!passed) {
    const diagnosis::Lead lead = diagnosis::diagnose(diagnosis::facts());
    if (lead.cause != Cause::none) s.check["cause"] = spelling(lead.cause);
    if (!lead.text.empty()) {
      s.check["diagnosis"] = lead.text;
      s.check["failures"].insert(s.check["failures"].begin(), "Diagnosis: " + lead.text + ".");
    }
  }
  diagnosis::end();
  s.check["seconds"] = seconds;
  (not_run && passed ? s.not_run : s.run) += 1;
  s.doc["checks"].push_back(s.check);
  s.name.clear();
  write();
}

int failures_so_far() {
  const State& s = state();
  return s.check.is_object() && s.check.contains("failures") ? static_cast<int>(s.check["failures"].size())
                                                             : 0;
}

int checks_run() {
  return state().run;
}
int checks_not_run() {
  return state().not_run;
}

}  // namespace cudalab
