#include "run/sandbox.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <system_error>

#include "core/time_limits.h"
#include "run/process.h"

#ifndef CUDALAB_SANDBOX_PATH
#define CUDALAB_SANDBOX_PATH ""
#endif

namespace fs = std::filesystem;

namespace cudalab {

namespace {
constexpr unsigned kNobody = 65534;

// Whether nobody (65534:65534, no other groups) has `bits` (4 read, 2 write,
// 1 search) on this inode by its mode bits.
bool nobody_may(const struct stat& st, unsigned bits) {
  const unsigned mode = st.st_mode;
  if (st.st_uid == kNobody) return ((mode >> 6) & bits) == bits;
  if (st.st_gid == kNobody) return ((mode >> 3) & bits) == bits;
  return (mode & bits) == bits;
}
}  // namespace

fs::path sandbox_launcher() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path beside = self.parent_path() / "cudalab-sandbox";
    if (fs::is_regular_file(beside, ec)) return beside;
  }
  const fs::path built = CUDALAB_SANDBOX_PATH;
  if (!built.empty() && fs::is_regular_file(built, ec)) return built;
  return {};
}

std::vector<fs::path> programs_in_path(const std::string& name, const std::string& also) {
  const char* path = std::getenv("PATH");
  std::string dirs = path && *path ? path : "/usr/local/bin:/usr/bin:/bin";
  if (!also.empty()) dirs += ":" + also;
  std::vector<fs::path> found;
  std::error_code ec;
  for (std::size_t start = 0; start <= dirs.size();) {
    const std::size_t end = std::min(dirs.find(':', start), dirs.size());
    const fs::path candidate = fs::path(dirs.substr(start, end - start)) / name;
    start = end + 1;
    if (candidate.is_relative() || !fs::is_regular_file(candidate, ec)) continue;
    const fs::path real = fs::canonical(candidate, ec);
    if (!ec) found.push_back(real);
  }
  return found;
}

fs::path compute_sanitizer_program() {
  std::error_code ec;
  for (const fs::path& real : programs_in_path("compute-sanitizer", "/usr/local/cuda/bin")) {
    // bin/compute-sanitizer, a script, runs ../compute-sanitizer/compute-sanitizer.
    std::ifstream in(real, std::ios::binary);
    char head[2] = {};
    in.read(head, 2);
    if (head[0] != '#' || head[1] != '!') return real;
    const fs::path inner = real.parent_path().parent_path() / "compute-sanitizer" / "compute-sanitizer";
    if (fs::is_regular_file(inner, ec)) return fs::canonical(inner, ec);
  }
  return {};
}

std::string sandbox_missing_message() {
  return fmt::format(
      "cudalab-sandbox, which every check runs through, was not built (expected beside this program or at "
      "{}): meson compile grader/cudalab-sandbox",
      CUDALAB_SANDBOX_PATH);
}

std::vector<std::string> sandboxed_argv(const SandboxSpec& spec, const std::vector<std::string>& argv) {
  const fs::path launcher = sandbox_launcher();
  if (launcher.empty()) throw std::runtime_error(sandbox_missing_message());
  std::vector<std::string> out = {launcher.string()};
  if (!spec.scratch.empty()) out.insert(out.end(), {"--scratch", fs::absolute(spec.scratch).string()});
  for (const auto& p : spec.read) out.insert(out.end(), {"--read", fs::absolute(p).string()});
  for (const auto& p : spec.exec) out.insert(out.end(), {"--exec", fs::absolute(p).string()});
  for (const auto& p : spec.write) out.insert(out.end(), {"--write", fs::absolute(p).string()});
  for (int fd : spec.keep_fds) out.insert(out.end(), {"--keep-fd", std::to_string(fd)});
  if (spec.allow_fork) out.push_back("--allow-fork");
  if (spec.unix_sockets) out.push_back("--unix-sockets");
  if (spec.unix_listen) out.push_back("--unix-listen");
  if (spec.build) out.push_back("--build");
  if (spec.require) out.push_back("--require");
  out.push_back("--");
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

const IsolationProbe& probe_isolation() {
  static IsolationProbe probe;
  static std::once_flag once;
  std::call_once(once, [] {
    const fs::path launcher = sandbox_launcher();
    if (launcher.empty()) {
      probe.summary = "NOT CONFINED: cudalab-sandbox was not built (meson compile grader/cudalab-sandbox)";
      return;
    }
    ProcessOptions opt;
    opt.argv = {launcher.string(), "--probe"};
    opt.timeout_s = kSandboxProbeLimit_s;
    const ProcessResult r = run_process(opt);
    const std::string line = r.output.substr(0, r.output.find('\n'));
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object() || !j.contains("summary")) {
      probe.summary = fmt::format("NOT CONFINED: cudalab-sandbox --probe failed ({}): {}", r.describe(),
                                  r.output.substr(0, 300));
      return;
    }
    probe.json = line;
    probe.landlock = j.value("landlock", 0);
    probe.seccomp = j.value("seccomp", false);
    probe.drops_to = j["drops_to"].is_string() ? j["drops_to"].get<std::string>() : "";
    probe.sockets = j["sockets"].is_string() ? j["sockets"].get<std::string>() : "";
    probe.summary = j.value("summary", "");
    probe.ok = r.exit_code == 0;
  });
  return probe;
}

std::string isolation_summary() {
  return probe_isolation().summary;
}

fs::path make_scratch_dir(const std::string& label) {
  fs::path base = "/tmp";
  if (const char* t = std::getenv("TMPDIR"); t && *t == '/' && fs::is_directory(t))
    if (geteuid() != 0 || unreadable_by_sandbox({t}).empty()) base = t;
  std::string name = "cudalab-";
  for (char c : label) name += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' ? c : '_';
  std::string templ = (base / (name + "-XXXXXX")).string();
  if (!mkdtemp(templ.data()))
    throw std::runtime_error(
        fmt::format("cannot create a scratch folder in {}: {}", base.string(), std::strerror(errno)));
  return templ;
}

void remove_scratch_dir(const fs::path& dir) {
  if (dir.empty()) return;
  std::error_code ec;
  // A check may leave folders without write or search permission for us
  // (when we are not root): give them back first.
  for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
    if (it->is_directory(ec) && !it->is_symlink(ec))
      fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ec);
  fs::permissions(dir, fs::perms::owner_all, fs::perm_options::add, ec);
  fs::remove_all(dir, ec);
}

std::string unreadable_by_sandbox(const std::vector<fs::path>& paths) {
  if (geteuid() != 0) return {};
  for (const auto& given : paths) {
    std::error_code ec;
    const fs::path path = fs::absolute(given, ec);
    fs::path prefix = "/";
    struct stat st;
    for (auto it = path.begin(); it != path.end(); ++it) {
      if (it != path.begin()) prefix /= *it;
      if (stat(prefix.c_str(), &st) != 0) return fmt::format("{}: {}", prefix.string(), std::strerror(errno));
      const bool last = std::next(it) == path.end();
      if (!last && !nobody_may(st, 1))
        return fmt::format(
            "{} cannot be read by nobody (uid 65534), whom checks run as under root: the folder {} (mode "
            "{:04o}) is not searchable by others (chmod o+x, or grade from another folder)",
            path.string(), prefix.string(), st.st_mode & 07777);
      if (last && !nobody_may(st, S_ISDIR(st.st_mode) ? 5 : 4))
        return fmt::format(
            "{} (mode {:04o}) cannot be read by nobody (uid 65534), whom checks run as under root (chmod "
            "o+r)",
            path.string(), st.st_mode & 07777);
    }
  }
  return {};
}

}  // namespace cudalab
