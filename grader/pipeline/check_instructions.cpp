// grader/pipeline/check_instructions.cpp: the instructions a lab's manifest forbids
// (lab.toml's [lab] forbid), looked for in a student file's PTX and its object's
// SASS (grader/run/instructions.h says why and which). Run only for labs that forbid
// something: a warm grade of the others spends nothing here.
#include <fmt/format.h>

#include <algorithm>

#include "core/files.h"
#include "core/time_limits.h"
#include "pipeline/grader.h"
#include "pipeline/internal.h"
#include "run/instructions.h"
#include "run/process.h"
#include "run/sandbox.h"

namespace fs = std::filesystem;

namespace cudalab {

namespace {

// cuobjdump of the toolkit whose nvcc compiled the object, else the first on PATH.
fs::path cuobjdump_for(const std::string& nvcc) {
  std::error_code ec;
  for (const auto& compiler : programs_in_path(
           fs::path(nvcc).filename().string(),
           fs::path(nvcc).has_parent_path() ? fs::path(nvcc).parent_path().string() : std::string()))
    if (const fs::path p = compiler.parent_path() / "cuobjdump"; fs::exists(p, ec)) return p;
  const auto found = programs_in_path("cuobjdump");
  return found.empty() ? fs::path() : found.front();
}

// The end of a tool's output, for a message.
std::string tail(const std::string& output) {
  constexpr std::size_t kShown = 2000;
  return output.size() <= kShown ? output : "..." + output.substr(output.size() - kShown);
}

// PTX larger than this is not read (a student file is at most 1 MiB).
constexpr std::uintmax_t kMaxPtxBytes = 64u << 20;

}  // namespace

std::vector<std::string> Grader::instruction_problems(const LabSpec& lab, int slot, const std::string& file,
                                                      const std::vector<std::string>& compile_argv,
                                                      const fs::path& object) {
  std::vector<std::string> problems;
  if (lab.forbid.empty() || compile_argv.empty()) return problems;
  const fs::path build_ = fs::absolute(build(slot));
  // Both runs confined like the build (they read the student's file and object).
  const auto confined = [&](const std::vector<std::string>& argv, const fs::path& scratch, ProcessResult& p) {
    ProcessOptions opt;
    opt.cwd = build_.string();
    opt.timeout_s = std::min(kIncludeListLimit_s, cfg_.course.build_timeout_s);
    opt.output_cap = 64 << 20;  // cuobjdump's SASS of a few kernels is well under a MiB
    opt.niceness = 10;
    opt.argv = sandboxed_argv(build_sandbox(slot, scratch), argv);
    p = run_process(opt);
    if (p.timed_out)
      problems.push_back(fmt::format("{}: {} did not finish within {:.0f} s", file,
                                     fs::path(argv[0]).filename().string(), opt.timeout_s));
    return p.ok();
  };
  const auto add = [&](const std::vector<ForbiddenInstruction>& found) {
    for (const auto& f : found) problems.push_back(f.describe(file));
  };
  fs::path scratch;
  try {
    scratch = make_scratch_dir(fmt::format("instructions-{}", slot));
    // The PTX: inline assembly and the wmma API show there as instructions.
    for (const auto& cmd : ptx_commands(compile_argv, scratch / "student.ptx")) {
      ProcessResult p;
      const fs::path ptx = cmd.back();
      if (!confined(cmd, scratch, p)) {
        if (!p.timed_out)
          problems.push_back(
              fmt::format("{}: the grader could not compile it to PTX to check the instructions "
                          "this lab forbids:\n{}",
                          file, tail(p.output)));
        break;
      }
      std::error_code ec;
      const auto size = fs::file_size(ptx, ec);
      const auto text = !ec && size <= kMaxPtxBytes ? read_file(ptx) : std::nullopt;
      if (!text) {
        problems.push_back(
            fmt::format("{}: the grader could not read its PTX ({}) to check the instructions this "
                        "lab forbids",
                        file, ec ? ec.message() : fmt::format("{} bytes; at most {}", size, kMaxPtxBytes)));
        break;
      }
      for (const auto& f : forbidden_in_ptx(*text, lab.forbid))  // once over all architectures
        if (const std::string line = f.describe(file);
            std::find(problems.begin(), problems.end(), line) == problems.end())
          problems.push_back(line);
    }
    // The SASS, where the toolkit has cuobjdump: what the replay loads (also
    // machine code that no PTX of the file holds). Not needed once the PTX
    // showed a forbidden instruction.
    const std::string& nvcc = compile_argv[0];  // no launcher: compiler_argv (pipeline/internal.h)
    if (const fs::path cuobjdump = cuobjdump_for(nvcc); !cuobjdump.empty() && problems.empty()) {
      ProcessResult s;
      if (confined({cuobjdump.string(), "-sass", fs::absolute(object).string()}, scratch, s))
        add(forbidden_in_sass(s.output, lab.forbid));
      else if (!s.timed_out && s.output.find("does not contain device code") == std::string::npos)
        problems.push_back(
            fmt::format("{}: cuobjdump could not read its object to check the instructions this "
                        "lab forbids:\n{}",
                        file, tail(s.output)));
    }
  } catch (const std::exception& e) {
    problems.push_back(
        fmt::format("the grader cannot check the instructions of {} confined: {}", file, e.what()));
  }
  remove_scratch_dir(scratch);
  return problems;
}

}  // namespace cudalab
