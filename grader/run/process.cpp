#include "run/process.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>

extern char** environ;

namespace cudalab {

std::string signal_name(int sig) {
  switch (sig) {
    case SIGSEGV:
      return "SIGSEGV (segmentation fault: an invalid host memory access, e.g. a device pointer used on the "
             "host)";
    case SIGABRT:
      return "SIGABRT (abort: an uncaught exception or a failed assert)";
    case SIGFPE:
      return "SIGFPE (arithmetic error, e.g. an integer division by zero on the host)";
    case SIGBUS:
      return "SIGBUS (bus error)";
    case SIGKILL:
      return "SIGKILL";
    case SIGILL:
      return "SIGILL (illegal instruction)";
    case SIGTERM:
      return "SIGTERM";
    default:
      return fmt::format("signal {} ({})", sig, strsignal(sig));
  }
}

std::string ProcessResult::describe() const {
  if (!started) return "could not start: " + error;
  if (timed_out) return fmt::format("timed out after {:.0f} s", seconds);
  if (signal) return "killed by " + signal_name(signal);
  return fmt::format("exit code {}", exit_code);
}

std::map<std::string, std::string> minimal_environment() {
  std::map<std::string, std::string> env;
  for (const char* key : {"PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "TERM", "CUDA_VISIBLE_DEVICES",
                          "LD_LIBRARY_PATH", "NVIDIA_VISIBLE_DEVICES", "CUDA_HOME", "CUDA_PATH"})
    if (const char* v = std::getenv(key)) env[key] = v;
  return env;
}

// glibc's tunables with huge pages for what malloc maps (glibc 2.35 and
// later; older ones ignore it). A check's host side fills and reads arrays of
// a quarter GiB and more: on 4 KiB pages lab 01's vector check spent two of
// its three seconds in page faults on the H100's host; on 2 MiB pages half a
// second. It changes no result and times nothing (the GPU's time is CUDA
// events').
std::string with_huge_pages(const std::string& tunables) {
  if (tunables.find("glibc.malloc.hugetlb") != std::string::npos) return tunables;  // the user's choice
  return tunables.empty() ? "glibc.malloc.hugetlb=1" : tunables + ":glibc.malloc.hugetlb=1";
}

bool ran_out_of_memory(const ProcessOptions& options, const ProcessResult& result) {
  if (options.memory_limit_bytes == 0 || !result.started || result.ok()) return false;
  // What GCC, cc1plus, cicc, ptxas, the C++ runtime and Python say when an
  // allocation fails.
  for (const char* said : {"out of memory", "Out of memory", "memory exhausted", "std::bad_alloc",
                           "Cannot allocate memory", "MemoryError", "insufficient memory"})
    if (result.output.find(said) != std::string::npos) return true;
  return false;
}

std::string describe_memory_limit(const std::string& what, std::uint64_t bytes) {
  return fmt::format("{} ran out of its {:g} GiB memory limit", what,
                     static_cast<double>(bytes) / (1024.0 * 1024 * 1024));
}

namespace {

// Keeps the first and the last half of the cap.
class CappedBuffer {
 public:
  explicit CappedBuffer(std::size_t cap) : cap_(cap) {}
  void add(const char* data, std::size_t n) {
    total_ += n;
    const std::size_t head_cap = cap_ / 2;
    if (head_.size() < head_cap) {
      const std::size_t take = std::min(n, head_cap - head_.size());
      head_.append(data, take);
      data += take;
      n -= take;
    }
    if (n == 0) return;
    tail_.append(data, n);
    const std::size_t tail_cap = cap_ - head_cap;
    if (tail_.size() > 2 * tail_cap) tail_.erase(0, tail_.size() - tail_cap);
  }
  std::string str() const {
    const std::size_t kept = std::min(tail_.size(), cap_ - cap_ / 2);
    const std::size_t cut = total_ - head_.size() - kept;
    if (cut == 0) return head_ + tail_;
    return head_ + fmt::format("\n[... {} bytes of output cut ...]\n", cut) +
           tail_.substr(tail_.size() - kept);
  }
  std::size_t total() const { return total_; }

 private:
  std::size_t cap_, total_ = 0;
  std::string head_, tail_;
};

// Closes descriptors lo..hi (async-signal-safe: runs between fork and exec).
void close_fd_range(int lo, int hi) {
  if (lo > hi) return;
#ifdef SYS_close_range
  if (syscall(SYS_close_range, static_cast<unsigned>(lo), static_cast<unsigned>(hi), 0u) == 0) return;
#endif
  const long max = sysconf(_SC_OPEN_MAX);
  const int last = static_cast<int>(std::min<long>(hi, max > 0 ? std::min(max, 1L << 20) : 65536));
  for (int fd = lo; fd <= last; ++fd) close(fd);
}

}  // namespace

ProcessResult run_process(const ProcessOptions& options) {
  ProcessResult result;
  if (options.argv.empty()) {
    result.error = "no command";
    return result;
  }
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    result.error = std::string("pipe: ") + std::strerror(errno);
    return result;
  }
  std::vector<std::string> env_strings;
  if (options.env)
    for (const auto& [k, v] : *options.env) env_strings.push_back(k + "=" + v);
  std::vector<char*> argv, envp;
  for (const auto& a : options.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  // Prepared here: the child of a threaded process must not allocate.
  std::vector<int> moved(options.pass_fds.size(), -1);
  std::vector<int> kept;
  for (const auto& fds_pair : options.pass_fds) kept.push_back(fds_pair.second);
  std::sort(kept.begin(), kept.end());

  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid < 0) {
    result.error = std::string("fork: ") + std::strerror(errno);
    close(fds[0]);
    close(fds[1]);
    return result;
  }
  if (pid == 0) {
    setpgid(0, 0);
    dup2(fds[1], STDOUT_FILENO);
    dup2(fds[1], STDERR_FILENO);
    const int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, STDIN_FILENO);
    // Descriptors handed over: first out of the way (a source may be another
    // pair's target), then into place, without close-on-exec.
    for (std::size_t i = 0; i < moved.size(); ++i)
      moved[i] = fcntl(options.pass_fds[i].first, F_DUPFD_CLOEXEC, 100);
    for (std::size_t i = 0; i < moved.size(); ++i)
      if (moved[i] < 0 || dup2(moved[i], options.pass_fds[i].second) < 0) _exit(127);
    // Nothing else of ours reaches the command: every other descriptor above
    // 2 is closed, close-on-exec or not.
    int from = 3;
    for (int k : kept) {
      if (k < from) continue;
      close_fd_range(from, k - 1);
      from = k + 1;
    }
    close_fd_range(from, INT_MAX);
    if (!options.cwd.empty() && chdir(options.cwd.c_str()) != 0) {
      dprintf(STDERR_FILENO, "cannot enter %s: %s\n", options.cwd.c_str(), std::strerror(errno));
      _exit(127);
    }
    if (options.env) environ = envp.data();
    if (options.niceness > 0) (void)!nice(options.niceness);
    if (options.memory_limit_bytes > 0) {
      // RLIMIT_DATA, not RLIMIT_AS: nvcc's tools reserve large address
      // ranges they never use, which only the address space counts.
      const rlimit mem{options.memory_limit_bytes, options.memory_limit_bytes};
      if (setrlimit(RLIMIT_DATA, &mem) != 0) {
        dprintf(STDERR_FILENO, "cannot limit the memory of %s: %s\n", argv[0], std::strerror(errno));
        _exit(127);
      }
    }
    execvp(argv[0], argv.data());
    dprintf(STDERR_FILENO, "cannot run %s: %s\n", argv[0], std::strerror(errno));
    _exit(127);
  }
  setpgid(pid, pid);  // also here, so the group exists before any kill
  close(fds[1]);
  result.started = true;

  CappedBuffer out(options.output_cap);
  char buf[65536];
  bool eof = false, exited = false;
  int status = 0;
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  double exited_at = 0;
  // Until the output ends and the command has exited: a command that closes
  // its stdout and stderr before it exits (GNU tools do) is not killed for
  // it; the timeout still holds.
  while (!(eof && exited)) {
    int wait_ms = 200;
    if (options.timeout_s > 0) {
      const double left = options.timeout_s - elapsed();
      if (left <= 0 && !exited) {
        result.timed_out = true;
        break;
      }
      wait_ms = std::max(1, std::min(200, static_cast<int>(left * 1000)));
    }
    pollfd p{fds[0], POLLIN, 0};
    int r = 0;
    if (!eof)
      r = poll(&p, 1, wait_ms);
    else
      usleep(static_cast<useconds_t>(std::min(wait_ms, 5)) * 1000);  // the output is over: wait for the exit
    if (r > 0) {
      const ssize_t n = read(fds[0], buf, sizeof buf);
      if (n > 0) {
        out.add(buf, static_cast<std::size_t>(n));
        if (options.on_output) options.on_output(std::string_view(buf, static_cast<std::size_t>(n)));
      } else if (n == 0)
        eof = true;
      else if (errno != EINTR && errno != EAGAIN)
        eof = true;
    }
    if (!exited && waitpid(pid, &status, WNOHANG) == pid) {
      exited = true;
      exited_at = elapsed();
    }
    // A grandchild that keeps the pipe open must not keep us waiting.
    if (exited && !eof && elapsed() - exited_at > 2.0) break;
  }
  kill(-pid, SIGKILL);  // the whole group: children the command left behind too
  if (!exited) waitpid(pid, &status, 0);
  close(fds[0]);
  result.seconds = elapsed();
  result.output = out.str();
  result.output_bytes = out.total();
  if (!result.timed_out) {
    if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  }
  return result;
}

}  // namespace cudalab
