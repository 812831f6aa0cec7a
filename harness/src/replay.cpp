#include "cudalab/replay.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "cudalab/elf.h"

namespace cudalab::replay {

namespace {

std::string hex(const std::string& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  out.reserve(2 * bytes.size());
  for (unsigned char c : bytes) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

bool unhex(const std::string& text, std::string& out) {
  if (text.size() % 2) return false;
  out.clear();
  const auto value = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  for (std::size_t i = 0; i < text.size(); i += 2) {
    const int hi = value(text[i]), lo = value(text[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out += static_cast<char>(hi * 16 + lo);
  }
  return true;
}

struct State {
  Mode mode = Mode::off;
  int trace = -1, replay_trace = -1, replay_code = -1;
};
State& state() {
  static State s;
  return s;
}

}  // namespace

std::string to_json(const Trace& trace) {
  nlohmann::json doc = {{"format", "cudalab-trace/1"}, {"launches", nlohmann::json::array()}};
  doc["buffer_bytes"] = trace.buffer_bytes;
  for (const Launch& l : trace.launches) {
    nlohmann::json j = {{"kernel", l.kernel},
                        {"grid", {l.grid[0], l.grid[1], l.grid[2]}},
                        {"block", {l.block[0], l.block[1], l.block[2]}},
                        {"shared_bytes", l.shared_bytes},
                        {"params", nlohmann::json::array()},
                        {"relocations", nlohmann::json::array()}};
    for (const auto& p : l.params) j["params"].push_back(hex(p));
    for (const auto& r : l.relocations)
      j["relocations"].push_back(
          {{"param", r.param}, {"offset", r.offset}, {"buffer", r.buffer}, {"delta", r.delta}});
    doc["launches"].push_back(std::move(j));
  }
  return doc.dump();
}

namespace {

bool trace_from_doc(const nlohmann::json& doc, Trace& trace, std::string& error) {
  trace = {};
  if (!doc.is_object() || doc.value("format", "") != "cudalab-trace/1" || !doc.contains("launches") ||
      !doc["launches"].is_array()) {
    error = "not a launch trace";
    return false;
  }
  try {
    for (const auto& b : doc.value("buffer_bytes", nlohmann::json::array()))
      trace.buffer_bytes.push_back(b.get<std::uint64_t>());
    if (doc["launches"].size() > kMaxLaunches) {
      error = fmt::format("{} launches (at most {} are replayed)", doc["launches"].size(), kMaxLaunches);
      return false;
    }
    for (const auto& j : doc["launches"]) {
      Launch l;
      l.kernel = j.at("kernel").get<std::string>();
      for (int d = 0; d < 3; ++d) {
        l.grid[d] = j.at("grid").at(d).get<unsigned>();
        l.block[d] = j.at("block").at(d).get<unsigned>();
      }
      l.shared_bytes = j.at("shared_bytes").get<std::size_t>();
      const auto& params = j.at("params");
      if (!params.is_array() || params.size() > kMaxParams) {
        error = fmt::format("a launch of {} with more than {} parameters", l.kernel, kMaxParams);
        return false;
      }
      for (const auto& p : params) {
        std::string bytes;
        if (!p.is_string() || !unhex(p.get<std::string>(), bytes) || bytes.size() > kMaxParamBytes) {
          error = fmt::format("a parameter of {} is not a short string of bytes", l.kernel);
          return false;
        }
        l.params.push_back(std::move(bytes));
      }
      for (const auto& r : j.at("relocations")) {
        Relocation rel{r.at("param").get<std::size_t>(), r.at("offset").get<std::size_t>(),
                       r.at("buffer").get<std::size_t>(), r.at("delta").get<std::uint64_t>()};
        const bool in_param = rel.param < l.params.size() && rel.offset % 8 == 0 &&
                              rel.offset + 8 <= l.params[rel.param].size();
        const bool in_buffer =
            rel.buffer < trace.buffer_bytes.size() && rel.delta <= trace.buffer_bytes[rel.buffer];
        if (!in_param || !in_buffer) {
          error =
              fmt::format("a pointer of a launch of {} that lies outside its parameter or buffer", l.kernel);
          return false;
        }
        l.relocations.push_back(rel);
      }
      trace.launches.push_back(std::move(l));
    }
  } catch (const std::exception& e) {
    error = fmt::format("a malformed launch trace ({})", e.what());
    trace = {};
    return false;
  }
  return true;
}

}  // namespace

bool from_json(const std::string& text, Trace& trace, std::string& error) {
  const auto doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    trace = {};
    error = "not a launch trace";
    return false;
  }
  return trace_from_doc(doc, trace, error);
}

std::string calls_to_json(const std::vector<Trace>& calls) {
  nlohmann::json doc = {{"format", "cudalab-calls/1"}, {"calls", nlohmann::json::array()}};
  for (const Trace& t : calls) doc["calls"].push_back(nlohmann::json::parse(to_json(t)));
  return doc.dump();
}

bool calls_from_json(const std::string& text, std::vector<Trace>& calls, std::string& error) {
  calls.clear();
  const auto doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object() || doc.value("format", "") != "cudalab-calls/1" ||
      !doc.contains("calls") || !doc["calls"].is_array()) {
    error = "not a trace of a launcher's calls";
    return false;
  }
  if (doc["calls"].size() > kMaxCalls) {
    error = fmt::format("{} calls of the launcher (at most {} are replayed)", doc["calls"].size(), kMaxCalls);
    return false;
  }
  for (const auto& j : doc["calls"]) {
    Trace t;
    if (!trace_from_doc(j, t, error)) {
      calls.clear();
      return false;
    }
    calls.push_back(std::move(t));
  }
  return true;
}

LauncherHook& launcher_hook() {
  static LauncherHook hook = nullptr;
  return hook;
}

std::vector<Relocation> find_pointers(const std::string& param, std::size_t param_index,
                                      const std::vector<std::pair<std::uint64_t, std::uint64_t>>& buffers) {
  std::vector<Relocation> out;
  for (std::size_t off = 0; off + 8 <= param.size(); off += 8) {
    std::uint64_t v = 0;
    std::memcpy(&v, param.data() + off, 8);
    for (std::size_t b = 0; b < buffers.size(); ++b) {
      const auto [base, bytes] = buffers[b];
      if (base != 0 && v >= base && v - base <= bytes) {
        out.push_back({param_index, off, b, v - base});
        break;
      }
    }
  }
  return out;
}

bool elf_section(const std::string& object, const std::string& name, std::string& out, std::string& error) {
  out.clear();
  const elf::File elf(object);
  if (!elf.is_elf64()) {
    error = "not an ELF64 object";
    return false;
  }
  if (!elf.has_section_table()) {
    error = "an ELF object without a readable section table";
    return false;
  }
  if (!elf.has_section_names()) {
    error = "an ELF object without readable section names";
    return false;
  }
  const auto section = elf.section_named(name);
  if (!section) {
    error = "no section " + name;
    return false;
  }
  const auto contents = elf.contents(*section);
  if (!contents) {
    error = "section " + name + " has no bytes in the file";
    return false;
  }
  out.assign(contents->data(), contents->size());
  return true;
}

std::string pack(const std::vector<std::string>& pieces) {
  std::string out;
  for (const auto& p : pieces) {
    std::uint64_t n = p.size();
    out.append(reinterpret_cast<const char*>(&n), 8);
    out += p;
  }
  return out;
}

bool unpack(const std::string& packed, std::vector<std::string>& pieces, std::string& error) {
  pieces.clear();
  for (std::size_t at = 0; at < packed.size();) {
    std::uint64_t n = 0;
    if (packed.size() - at < 8) {
      error = "truncated device code";
      return false;
    }
    std::memcpy(&n, packed.data() + at, 8);
    at += 8;
    if (n > packed.size() - at) {
      error = "truncated device code";
      return false;
    }
    pieces.push_back(packed.substr(at, n));
    at += n;
  }
  return true;
}

Mode mode() {
  return state().mode;
}
void set_trace(int fd) {
  state().mode = Mode::trace;
  state().trace = fd;
}
void set_replay(int trace_fd, int code_fd) {
  state().mode = Mode::replay;
  state().replay_trace = trace_fd;
  state().replay_code = code_fd;
}
bool graded_timing() {
  return state().mode != Mode::off;
}
int trace_fd() {
  return state().trace;
}
int replay_trace_fd() {
  return state().replay_trace;
}
int replay_code_fd() {
  return state().replay_code;
}

bool read_fd(int fd, std::string& out) {
  out.clear();
  char buf[1 << 16];
  for (off_t at = 0;;) {
    const ssize_t n = ::pread(fd, buf, sizeof buf, at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) return true;
    out.append(buf, static_cast<std::size_t>(n));
    at += n;
  }
}

bool write_fd(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::pwrite(fd, text.data() + done, text.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return ::ftruncate(fd, static_cast<off_t>(text.size())) == 0;
}

}  // namespace cudalab::replay
