#include "run/instructions.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <regex>
#include <set>
#include <sstream>
#include <utility>

#include "run/policy.h"

namespace cudalab {

namespace {

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

// The class a PTX opcode ("mma.sync.aligned...", "wgmma.mma_async...")
// belongs to among `forbid`, or "".
std::string ptx_class(std::string op, const std::vector<std::string>& forbid) {
  // Internal spellings ("_mma.warpgroup") name the same instructions.
  op.erase(0, op.find_first_not_of('_'));
  const auto has = [&](const char* k) { return std::find(forbid.begin(), forbid.end(), k) != forbid.end(); };
  const auto family = [&](const char* name) {
    return op == name || starts_with(op, std::string(name) + ".");
  };
  if (has("tensor_cores") && (family("mma") || family("wmma") || family("wgmma") || family("tcgen05")))
    return "tensor_cores";
  if (has("tma") && (starts_with(op, "cp.async.bulk") || starts_with(op, "cp.reduce.async.bulk")))
    return "tma";
  return {};
}

// The class a SASS opcode ("HMMA.16816.F32", "UTMALDG.2D") belongs to, or "".
std::string sass_class(const std::string& op, const std::vector<std::string>& forbid) {
  const std::string base = op.substr(0, op.find('.'));
  const auto has = [&](const char* k) { return std::find(forbid.begin(), forbid.end(), k) != forbid.end(); };
  static const std::set<std::string> kTensor = {"HMMA",  "IMMA",  "BMMA",  "DMMA",  "QMMA", "OMMA",
                                                "HGMMA", "IGMMA", "BGMMA", "QGMMA", "OGMMA"};
  // Blackwell's tcgen05 family: UTCHMMA, UTCQMMA, UTCBAR, UTCCP...
  if (has("tensor_cores") && (kTensor.count(base) || starts_with(base, "UTC"))) return "tensor_cores";
  if (has("tma") && (starts_with(base, "UTMA") || starts_with(base, "UBLK"))) return "tma";
  return {};
}

// Keeps the first instruction of each (function, class).
void add_once(std::vector<ForbiddenInstruction>& out, ForbiddenInstruction f) {
  for (const auto& o : out)
    if (o.function == f.function && o.klass == f.klass) return;
  out.push_back(std::move(f));
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

// PTX without its comments (// to the end of the line, /* ... */).
std::string strip_ptx_comments(const std::string& ptx) {
  std::string out;
  out.reserve(ptx.size());
  for (std::size_t i = 0; i < ptx.size();) {
    if (ptx.compare(i, 2, "//") == 0) {
      i = ptx.find('\n', i);
      if (i == std::string::npos) break;
    } else if (ptx.compare(i, 2, "/*") == 0) {
      const auto end = ptx.find("*/", i + 2);
      if (end == std::string::npos) break;
      out += ' ';
      i = end + 2;
    } else {
      out += ptx[i++];
    }
  }
  return out;
}

// A statement's opcode: its first word once labels ("L1:") and a guard
// predicate ("@%p1", "@!p") are taken off; "" for a directive.
std::string opcode(std::string st) {
  static const std::regex kLabel(R"(^[A-Za-z_$%][\w$]*\s*:(?!:)\s*)");
  static const std::regex kGuard(R"(^@!?%?[\w$]+\s*)");
  for (bool changed = true; changed;) {
    st = trim(st);
    std::smatch m;
    changed = false;
    if (std::regex_search(st, m, kLabel) || std::regex_search(st, m, kGuard)) {
      st = st.substr(m.length(0));
      changed = true;
    }
  }
  if (st.empty() || st[0] == '.') return {};
  const auto end = st.find_first_of(" \t\r\n,");
  return st.substr(0, end);
}

}  // namespace

std::vector<std::vector<std::string>> ptx_commands(const std::vector<std::string>& argv,
                                                   const std::filesystem::path& out) {
  std::vector<std::string> cmd;
  std::vector<std::string> archs;
  static const std::regex kArch(R"(arch=(compute_\w+))");
  const auto arch_flag = [&](const std::string& flag) {
    std::smatch m;
    if (!std::regex_search(flag, m, kArch)) return false;
    if (std::find(archs.begin(), archs.end(), m[1].str()) == archs.end()) archs.push_back(m[1].str());
    return true;
  };
  // Meson may run the compiler through ccache: this run needs no cache.
  const std::size_t first = !argv.empty() && std::filesystem::path(argv[0]).filename() == "ccache" ? 1 : 0;
  for (std::size_t i = first; i < argv.size(); ++i) {
    if (argv[i] == "-o" || argv[i] == "-MF" || argv[i] == "-MQ" || argv[i] == "-MT" || argv[i] == "-odir") {
      ++i;
      continue;
    }
    if (argv[i] == "-c" || argv[i] == "-MD" || argv[i] == "-MMD" || argv[i] == "-M" ||
        argv[i].rfind("--output-file", 0) == 0)
      continue;
    if (argv[i].rfind("-gencode=", 0) == 0 && arch_flag(argv[i])) continue;
    if ((argv[i] == "-gencode" || argv[i] == "--generate-code") && i + 1 < argv.size() &&
        arch_flag(argv[i + 1])) {
      ++i;
      continue;
    }
    cmd.push_back(argv[i]);
  }
  std::vector<std::vector<std::string>> out_cmds;
  if (archs.empty()) archs.push_back("");  // -arch=native and the like: as the build has it
  for (const auto& a : archs) {
    std::vector<std::string> c = cmd;
    if (!a.empty()) c.push_back("-arch=" + a);
    c.insert(c.end(), {"-ptx", "-o", out.string()});
    out_cmds.push_back(std::move(c));
  }
  return out_cmds;
}

std::vector<ForbiddenInstruction> forbidden_in_ptx(const std::string& ptx,
                                                   const std::vector<std::string>& forbid) {
  std::vector<ForbiddenInstruction> out;
  if (forbid.empty()) return out;
  const std::string text = strip_ptx_comments(ptx);
  // ".visible .entry NAME(", ".func (.param .b32 r) NAME(": the function a
  // body that follows belongs to.
  static const std::regex kHeader(R"(\.(entry|func)\s+(?:\([^)]*\)\s*)?([A-Za-z_$%][\w$]*))");
  std::string pending, current;
  bool pending_kernel = false, current_kernel = false;
  int depth = 0;
  std::string statement;
  const auto finish = [&] {
    std::smatch m;
    if (depth == 0 && std::regex_search(statement, m, kHeader)) {
      pending = m[2].str();
      pending_kernel = m[1] == "entry";
    } else if (const std::string op = opcode(statement); !op.empty()) {
      if (const std::string k = ptx_class(op, forbid); !k.empty())
        add_once(out, {op, current.empty() ? "" : demangle(current), current_kernel, k, "PTX"});
    }
    statement.clear();
  };
  for (const char c : text) {
    if (c == ';') {
      finish();
    } else if (c == '{') {
      finish();
      if (depth++ == 0) current = pending, current_kernel = pending_kernel, pending.clear();
    } else if (c == '}') {
      finish();
      if (depth > 0 && --depth == 0) current.clear();
    } else {
      statement += c;
    }
  }
  finish();
  return out;
}

std::vector<ForbiddenInstruction> forbidden_in_sass(const std::string& sass,
                                                    const std::vector<std::string>& forbid) {
  std::vector<ForbiddenInstruction> out;
  if (forbid.empty()) return out;
  static const std::regex kFunction(R"(Function\s*:\s*(\S+))");
  // "/*0090*/   @!P0 HMMA.16816.F32 R4, R8, R12, R4 ;"
  static const std::regex kInstruction(R"(/\*[0-9a-fA-F]{4,}\*/\s*(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_.]*))");
  std::istringstream in(sass);
  std::string function;
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, kFunction)) {
      function = m[1];
    } else if (std::regex_search(line, m, kInstruction)) {
      if (const std::string k = sass_class(m[1], forbid); !k.empty())
        // cuobjdump lists kernels and device functions alike; the name says which.
        add_once(out, {m[1], function.empty() ? "" : demangle(function), true, k, "SASS"});
    }
  }
  return out;
}

std::string forbidden_class_reason(const std::string& klass) {
  if (klass == "tensor_cores")
    return "this lab forbids tensor cores (lab.toml: forbid = [\"tensor_cores\"]: mma, wmma, wgmma and "
           "tcgen05, "
           "through nvcuda::wmma, inline PTX or any other way): its lesson, and the FP32 kernels its speed "
           "checks "
           "compare yours with, compute every product with FP32 arithmetic on the CUDA cores, at every "
           "shape, "
           "the timed one included";
  if (klass == "tma")
    return "this lab forbids the Tensor Memory Accelerator's bulk copies (lab.toml: forbid = [\"tma\"]: "
           "cp.async.bulk and cp.reduce.async.bulk): its lesson is moving the data with the threads' own "
           "loads and stores";
  return {};
}

std::string ForbiddenInstruction::describe(const std::string& file) const {
  const std::string who = function.empty() ? std::string("code outside any function")
                          : where == "PTX" ? fmt::format("the {} {}", kernel ? "kernel" : "device function",
                                                         readable_name(function))
                                           : fmt::format("the function {}", readable_name(function));
  return fmt::format("{}: {} uses {} ({} in its {}): {}", file, who, instruction,
                     klass == "tensor_cores" ? "a tensor-core instruction" : "a bulk-copy instruction", where,
                     forbidden_class_reason(klass));
}

}  // namespace cudalab
