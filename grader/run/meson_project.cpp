#include "run/meson_project.h"

#include <fstream>
#include <iterator>
#include <map>
#include <sstream>

#include "core/time_limits.h"
#include "run/progress.h"
#include "run/sandbox.h"

extern char** environ;

namespace fs = std::filesystem;

namespace cudalab {

MesonProject::MesonProject(fs::path build_dir) : dir_(std::move(build_dir)) {}

bool MesonProject::configured() const {
  std::error_code ec;
  return fs::exists(dir_ / "build.ninja", ec);
}

bool MesonProject::has_output(const std::string& output) const {
  if (!build_ninja_) {
    std::ifstream in(dir_ / "build.ninja");
    build_ninja_.emplace((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  return build_ninja_->find("build " + output + ": ") != std::string::npos;
}

std::string MesonProject::output_of(const std::string& name, const std::vector<std::string>& folders) const {
  if (name.find('/') != std::string::npos) return has_output(name) ? name : "";
  for (const auto& folder : folders)
    if (has_output(folder + "/" + name)) return folder + "/" + name;
  return {};
}

namespace {

// Ours, with ninja's status lines in the form a Progress reads (a user's
// own NINJA_STATUS would hide the count).
std::map<std::string, std::string> build_environment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const std::string kv = *e;
    if (const auto eq = kv.find('='); eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  env["NINJA_STATUS"] = kNinjaStatus;
  // Meson puts ccache before the compilers where it is installed. A cache
  // shared by the builds of different submissions would be a way from one to
  // the next (and a confined build cannot write it): every build the grader
  // runs compiles afresh.
  env["CCACHE_DISABLE"] = "1";
  return env;
}

nlohmann::json read_json(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return nlohmann::json::parse(text, nullptr, false);
}

}  // namespace

nlohmann::json MesonProject::compile_commands() const {
  return read_json(dir_ / "compile_commands.json");
}

nlohmann::json MesonProject::targets() const {
  return read_json(dir_ / "meson-info" / "intro-targets.json");
}

std::string MesonProject::option(const std::string& name) const {
  const nlohmann::json options = read_json(dir_ / "meson-info" / "intro-buildoptions.json");
  if (options.is_array())
    for (const auto& o : options)
      if (o.is_object() && o.value("name", "") == name && o.contains("value"))
        return o["value"].is_string() ? o["value"].get<std::string>() : o["value"].dump();
  return {};
}

ProcessOptions MesonProject::setup(const fs::path& source, const std::vector<std::string>& options,
                                   bool reconfigure, double timeout_s) const {
  ProcessOptions opt;
  opt.argv = {"meson", "setup", reconfigure ? "--reconfigure" : "--buildtype=release", dir_.string(),
              source.string()};
  opt.argv.insert(opt.argv.end(), options.begin(), options.end());
  opt.timeout_s = timeout_s;
  opt.memory_limit_bytes = kBuildMemoryLimit_bytes;
  opt.output_cap = 1 << 20;
  build_ninja_.reset();  // Meson writes it again
  return opt;
}

ProcessOptions MesonProject::build(const std::vector<std::string>& names,
                                   const std::vector<std::string>& outputs, double timeout_s) const {
  ProcessOptions opt;
  const fs::path& ninja = ninja_program();
  bool all_known = !ninja.empty() && outputs.size() == names.size();
  for (const auto& o : outputs) all_known = all_known && !o.empty();
  if (all_known) {
    opt.argv = {ninja.string(), "-C", dir_.string()};
    opt.argv.insert(opt.argv.end(), outputs.begin(), outputs.end());
  } else {
    opt.argv = {"meson", "compile", "-C", dir_.string()};
    opt.argv.insert(opt.argv.end(), names.begin(), names.end());
  }
  opt.env = build_environment();
  opt.timeout_s = timeout_s;
  opt.memory_limit_bytes = kBuildMemoryLimit_bytes;
  opt.output_cap = 1 << 20;
  return opt;
}

ProcessOptions MesonProject::query(const std::string& output) const {
  ProcessOptions opt;
  opt.argv = {ninja_program().string(), "-C", dir_.string(), "-t", "query", output};
  opt.timeout_s = kNinjaQueryLimit_s;
  return opt;
}

const fs::path& ninja_program() {
  static const fs::path ninja = [] {
    const auto found = programs_in_path("ninja");
    return found.empty() ? fs::path() : found.front();
  }();
  return ninja;
}

std::vector<std::string> query_inputs(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  bool inputs = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("  input:", 0) == 0) {
      inputs = true;
      continue;
    }
    if (line.rfind("  outputs:", 0) == 0) break;
    if (!inputs) continue;
    std::istringstream words(line);
    for (std::string w; words >> w;)
      if (w != "|" && w != "||") out.push_back(w);
  }
  return out;
}

}  // namespace cudalab
