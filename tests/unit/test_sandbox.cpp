// The check sandbox (grader/run/sandbox.h): a tiny helper program run
// through cudalab-sandbox tries what a hostile check would (write outside its
// scratch folder, read another submission, run a program, open a TCP
// connection, signal the grader) and must fail, while what a check needs
// works. Each denial has its control: the same action unconfined succeeds.
// Exits 77 (skipped) where the kernel has no Landlock: nothing to test then.
#define CATCH_CONFIG_RUNNER
#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "cudalab/catch.h"
#include "run/process.h"
#include "run/sandbox.h"

namespace fs = std::filesystem;
using namespace cudalab;

namespace {

// A course folder nobody may read (0755), a helper in it, another
// submission's folder that anybody may write (so only the sandbox stops it),
// and a fresh scratch folder per test.
struct World {
  fs::path root, helper, lab_toml, other, secret;
  World() {
    char templ[] = "/tmp/cudalab-sandbox-test-XXXXXX";
    root = mkdtemp(templ);
    fs::permissions(root, fs::perms(0755));
    helper = root / "sandbox-helper";
    fs::copy_file(CUDALAB_SANDBOX_HELPER, helper);
    fs::permissions(helper, fs::perms(0755));
    lab_toml = root / "lab.toml";
    std::ofstream(lab_toml) << "id = \"00_test\"\n";
    fs::permissions(lab_toml, fs::perms(0644));
    other = root / "bob";
    fs::create_directory(other);
    fs::permissions(other, fs::perms(0777));
    secret = other / "kernel.cu";
    std::ofstream(secret) << "__global__ void k() {}\n";
    fs::permissions(secret, fs::perms(0666));
  }
  ~World() { remove_scratch_dir(root); }
};
World& world() {
  static World w;
  return w;
}

struct Scratch {
  fs::path dir = make_scratch_dir("sandbox-test");
  ~Scratch() { remove_scratch_dir(dir); }
};

// Unconfined: the control.
bool helper(const std::vector<std::string>& args) {
  ProcessOptions o;
  o.argv = {world().helper.string()};
  o.argv.insert(o.argv.end(), args.begin(), args.end());
  o.timeout_s = 30;
  const ProcessResult r = run_process(o);
  INFO(r.describe() << ": " << r.output);
  CHECK(r.ok());
  return r.ok();
}

// `command`, where given, replaces the helper and `args` (a nested launcher).
ProcessResult boxed(const Scratch& s, const std::vector<std::string>& args, SandboxSpec spec = {},
                    std::vector<std::pair<int, int>> pass_fds = {}, std::vector<std::string> command = {}) {
  spec.scratch = s.dir;
  spec.read.push_back(world().lab_toml);
  ProcessOptions o;
  o.argv = {world().helper.string()};
  o.argv.insert(o.argv.end(), args.begin(), args.end());
  if (!command.empty()) o.argv = command;
  o.argv = sandboxed_argv(spec, o.argv);
  o.pass_fds = std::move(pass_fds);
  o.timeout_s = 30;
  o.env = minimal_environment();
  return run_process(o);
}

bool denied(const ProcessResult& r) {
  INFO(r.output);
  return r.started && r.exit_code == 1 && r.output.rfind("error ", 0) == 0;
}

bool root() {
  return geteuid() == 0;
}

}  // namespace

TEST_CASE("The probe reports what confines a check", "[sandbox][grader]") {
  const auto& p = probe_isolation();
  INFO(p.json);
  CHECK(p.ok);
  CHECK(p.landlock > 0);
  CHECK_THAT(p.summary, Catch::StartsWith("landlock v"));
  CHECK(p.drops_to == (root() ? "nobody" : ""));
  CHECK(isolation_summary() == p.summary);
  if (p.seccomp) {
    CHECK(p.sockets == "none");
    CHECK_THAT(p.summary, Catch::Contains("no sockets"));
  }
}

TEST_CASE("A check may create files in its scratch folder, and read its binary and lab.toml",
          "[sandbox][grader]") {
  Scratch s;
  CHECK(boxed(s, {"write", (s.dir / "out.txt").string()}).ok());
  CHECK(boxed(s, {"mkdir", (s.dir / "sub").string()}).ok());
  CHECK(boxed(s, {"write", "relative.txt"}).ok());  // the working directory is the scratch folder
  CHECK(fs::exists(s.dir / "relative.txt"));
  CHECK(boxed(s, {"read", world().lab_toml.string()}).ok());
  CHECK(boxed(s, {"read", world().helper.string()}).ok());
  CHECK(boxed(s, {"read", "/etc/passwd"}).ok());  // the system's folders stay readable
  CHECK(boxed(s, {"read", "/proc/self/status"}).ok());
  CHECK(boxed(s, {"append", "/dev/null"}).ok());
  CHECK(boxed(s, {"write", "/proc/self/comm"}).ok());  // the CUDA driver writes its own /proc entries
  CHECK(boxed(s, {"socketpair"}).ok());                // a connected pair reaches nothing outside
  CHECK(boxed(s, {"thread-kill-self"}).ok());
}

TEST_CASE("A check cannot create a file outside its scratch folder", "[sandbox][grader]") {
  Scratch s, sibling;
  const fs::path in_tmp = fs::path("/tmp") / ("cudalab-sandbox-forged-" + std::to_string(getpid()));
  // Controls: unconfined, the same helper can.
  REQUIRE(helper({"write", (sibling.dir / "control").string()}));
  REQUIRE(helper({"write", (world().other / "control").string()}));
  CHECK(denied(boxed(s, {"write", (sibling.dir / "forged.json").string()})));
  CHECK(denied(boxed(s, {"write", (world().other / "forged.json").string()})));
  CHECK(denied(boxed(s, {"write", in_tmp.string()})));
  CHECK(denied(boxed(s, {"mkdir", (world().other / "dir").string()})));
  CHECK(denied(boxed(s, {"write", (world().root / "results.json").string()})));
  CHECK(denied(boxed(s, {"append", world().secret.string()})));
  CHECK(denied(boxed(s, {"append", world().lab_toml.string()})));  // read-only, not writable
  CHECK_FALSE(fs::exists(sibling.dir / "forged.json"));
  CHECK_FALSE(fs::exists(world().other / "forged.json"));
  CHECK_FALSE(fs::exists(in_tmp));
  fs::remove(in_tmp);
}

TEST_CASE("A check cannot read another submission's folder", "[sandbox][grader]") {
  Scratch s;
  REQUIRE(helper({"read", world().secret.string()}));
  CHECK(denied(boxed(s, {"read", world().secret.string()})));
  CHECK(denied(boxed(s, {"list", world().other.string()})));
  CHECK(
      denied(boxed(s, {"list", world().root.string()})));  // nor the course folder, beyond what --read names
  CHECK(denied(boxed(s, {"list", "/tmp"})));
}

TEST_CASE("A check cannot run another program", "[sandbox][grader]") {
  Scratch s;
  REQUIRE(helper({"exec", "/bin/ls"}));
  CHECK(denied(boxed(s, {"exec", "/bin/ls"})));
  CHECK(denied(boxed(s, {"exec", "/bin/sh"})));
  // Unless the grader says so (compute-sanitizer's folder).
  SandboxSpec spec;
  spec.exec.push_back("/bin/ls");
  CHECK(boxed(s, {"exec", "/bin/ls"}, spec).ok());
}

TEST_CASE("A check has no network: a TCP connection to 127.0.0.1 fails", "[sandbox][grader]") {
  const int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(listener >= 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  REQUIRE(listen(listener, 8) == 0);
  socklen_t len = sizeof a;
  getsockname(listener, reinterpret_cast<sockaddr*>(&a), &len);
  const std::string port = std::to_string(ntohs(a.sin_port));
  REQUIRE(helper({"connect", port}));
  Scratch s;
  CHECK(denied(boxed(s, {"connect", port})));
  if (probe_isolation().seccomp) CHECK(denied(boxed(s, {"udp"})));
  close(listener);
}

namespace {
// A fresh folder of the test's own, mode `mode`, removed with what is in it.
struct TempDir {
  fs::path dir;
  explicit TempDir(const char* label, unsigned mode = 0700) {
    std::string templ = fmt::format("/tmp/cudalab-sandbox-{}-XXXXXX", label);
    dir = mkdtemp(templ.data());
    fs::permissions(dir, fs::perms(mode));
  }
  ~TempDir() { remove_scratch_dir(dir); }
};
}  // namespace

TEST_CASE("A check has no sockets, unless the run asks for unix sockets", "[sandbox][grader]") {
  REQUIRE(helper({"unix"}));
  REQUIRE(helper({"socketpair-dgram"}));
  Scratch s;
  if (probe_isolation().seccomp) {
    CHECK(denied(boxed(s, {"unix"})));
    // A datagram pair could sendto any socket by its path.
    CHECK(denied(boxed(s, {"socketpair-dgram"})));
  }
  CHECK(boxed(s, {"socketpair"}).ok());
  SandboxSpec unix_sockets;
  unix_sockets.unix_sockets = true;
  CHECK(boxed(s, {"unix"}, unix_sockets).ok());
  CHECK(boxed(s, {"socketpair"}, unix_sockets).ok());
  CHECK(boxed(s, {"socketpair-dgram"}, unix_sockets).ok());
  if (probe_isolation().seccomp) CHECK(denied(boxed(s, {"udp"}, unix_sockets)));
}

TEST_CASE("A GPU check has the CUDA runtime's unix sockets, which cannot connect (unix_listen)",
          "[sandbox][grader]") {
  REQUIRE(helper({"bind-abstract"}));
  REQUIRE(helper({"unix-dgram"}));
  Scratch s;
  SandboxSpec cuda;
  cuda.unix_listen = true;
  if (probe_isolation().seccomp) CHECK(denied(boxed(s, {"bind-abstract"})));  // not by default
  CHECK(boxed(s, {"bind-abstract"}, cuda).ok());
  CHECK(boxed(s, {"unix"}, cuda).ok());
  CHECK(boxed(s, {"socketpair"}, cuda).ok());
  if (!probe_isolation().seccomp) return;
  // Datagrams reach a socket by its path without connect().
  CHECK(denied(boxed(s, {"unix-dgram"}, cuda)));
  CHECK(denied(boxed(s, {"socketpair-dgram"}, cuda)));
  CHECK(denied(boxed(s, {"udp"}, cuda)));
}

TEST_CASE("A check cannot connect to a unix socket, though anybody may (the session bus, Docker's)",
          "[sandbox][grader]") {
  // Landlock does not govern connect() to a pathname socket: a listener in a
  // folder the check cannot read, that anybody may connect to.
  TempDir folder("unix", 0777);
  const fs::path path = folder.dir / "sock";
  const int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  REQUIRE(listener >= 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  REQUIRE(path.string().size() < sizeof a.sun_path);
  std::snprintf(a.sun_path, sizeof a.sun_path, "%s", path.c_str());
  REQUIRE(bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  REQUIRE(listen(listener, 8) == 0);
  fs::permissions(path, fs::perms(0777));
  auto accepted = [&] {
    const int c = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (c >= 0) close(c);
    return c >= 0;
  };
  // Control: unconfined, the helper connects, and the listener sees it.
  REQUIRE(helper({"connect-unix", path.string()}));
  REQUIRE(accepted());
  REQUIRE_FALSE(accepted());
  Scratch s;
  CHECK(denied(boxed(s, {"list", folder.dir.string()})));
  if (probe_isolation().seccomp) {
    CHECK(denied(boxed(s, {"connect-unix", path.string()})));
    CHECK_FALSE(accepted());
    SandboxSpec build;
    build.build = true;
    CHECK(denied(boxed(s, {"connect-unix", path.string()}, build)));
    CHECK_FALSE(accepted());
    SandboxSpec cuda;
    cuda.unix_listen = true;
    CHECK(denied(boxed(s, {"connect-unix", path.string()}, cuda)));
    CHECK_FALSE(accepted());
    // compute-sanitizer's case: its front end connects (unix_sockets), and
    // the target runs under a second launcher, nested, that forbids it.
    SandboxSpec inner;
    inner.scratch = s.dir;
    inner.unix_listen = true;
    SandboxSpec outer;
    outer.unix_sockets = true;
    outer.allow_fork = true;
    outer.exec = {sandbox_launcher(), world().helper};
    const auto nested = [&](const std::string& action, const std::string& arg) {
      return boxed(s, {}, outer, {}, sandboxed_argv(inner, {world().helper.string(), action, arg}));
    };
    CHECK(nested("bind-abstract", "").ok());
    CHECK(denied(nested("connect-unix", path.string())));
    CHECK_FALSE(accepted());
  }
  close(listener);
}

TEST_CASE("A check cannot read /run (sockets, a container's secrets)", "[sandbox][grader]") {
  if (!fs::is_directory("/run")) return;
  REQUIRE(helper({"list", "/run"}));
  Scratch s;
  CHECK(denied(boxed(s, {"list", "/run"})));
  if (fs::is_directory("/var/run")) CHECK(denied(boxed(s, {"list", "/var/run"})));
}

TEST_CASE("The build profile runs compilers: processes, the build folder, the system; nothing else",
          "[sandbox][grader]") {
  const auto& p = probe_isolation();
  Scratch s;
  // The course source and the build folder, private to the grader (under
  // root, nobody could not read them: the build does not become nobody).
  TempDir source("source"), out("out");
  std::ofstream(source.dir / "kernel.cu") << "__global__ void k() {}\n";
  const fs::path truth = fs::exists("/bin/true") ? "/bin/true" : "/usr/bin/true";
  SandboxSpec build;
  build.build = true;
  build.read = {source.dir};
  build.write = {out.dir};
  for (const char* dir : {"/usr", "/bin", "/lib", "/lib64"})
    if (fs::exists(dir)) build.exec.push_back(dir);

  // A compiler driver starts its compilers.
  REQUIRE(helper({"spawn", truth.string()}));
  if (p.seccomp) CHECK(denied(boxed(s, {"spawn", truth.string()}, {})));  // a check may not
  CHECK(boxed(s, {"spawn", truth.string()}, build).ok());
  // ninja puts each command in a group of its own: setpgid says yes, but the
  // build stays in the group the grader kills on a timeout.
  if (p.seccomp) CHECK(boxed(s, {"setpgid-stays"}, build).ok());

  // Reads: the --read folder, /etc; writes: the build folder.
  CHECK(boxed(s, {"read", (source.dir / "kernel.cu").string()}, build).ok());
  CHECK(boxed(s, {"list", source.dir.string()}, build).ok());
  const fs::path etc_file = fs::exists("/etc/hostname") ? "/etc/hostname" : "/etc/passwd";
  CHECK(boxed(s, {"read", etc_file.string()}, build).ok());
  CHECK(boxed(s, {"write", (out.dir / "kernel.o").string()}, build).ok());
  CHECK(fs::exists(out.dir / "kernel.o"));
  CHECK(boxed(s, {"write", (s.dir / "tmp.o").string()}, build).ok());  // TMPDIR
  CHECK(boxed(s, {"append", "/dev/null"}, build).ok());

  // Nothing else: a file outside every rule, /dev/zero (an #include of it
  // would hang the compiler), /sys, /run, the source folder for writing.
  REQUIRE(helper({"read", world().secret.string()}));
  CHECK(denied(boxed(s, {"read", world().secret.string()}, build)));
  CHECK(denied(boxed(s, {"write", (world().other / "forged.o").string()}, build)));
  CHECK(denied(boxed(s, {"write", (source.dir / "forged.cu").string()}, build)));
  REQUIRE(helper({"read", "/dev/zero"}));
  CHECK(boxed(s, {"read", "/dev/zero"}).ok());  // a check may
  CHECK(denied(boxed(s, {"read", "/dev/zero"}, build)));
  if (fs::is_directory("/sys")) CHECK(denied(boxed(s, {"list", "/sys"}, build)));
  if (fs::is_directory("/run")) CHECK(denied(boxed(s, {"list", "/run"}, build)));
  CHECK(denied(boxed(s, {"write", "/proc/self/comm"}, build)));  // /proc is read-only
  if (p.seccomp) CHECK(denied(boxed(s, {"unix"}, build)));

  // It is the grader's user, root included, never nobody.
  const auto who = boxed(s, {"whoami"}, build);
  CHECK(who.output == fmt::format("uid {} gid {}\n", getuid(), getgid()));
}

TEST_CASE("The build profile keeps root from what Landlock does not govern", "[sandbox][grader]") {
  const auto& p = probe_isolation();
  Scratch s;
  TempDir out("out");
  SandboxSpec build;
  build.build = true;
  build.write = {out.dir};
  // Setuid programs, ownership: the control first, unconfined.
  REQUIRE(helper({"chmod-suid", (out.dir / "control").string()}));
  REQUIRE(helper({"chown", (out.dir / "control").string()}));
  if (p.seccomp) {
    CHECK(denied(boxed(s, {"chmod-suid", (out.dir / "suid").string()}, build)));
    CHECK(denied(boxed(s, {"chown", (out.dir / "control").string()}, build)));
  }
  CHECK(boxed(s, {"chmod", (out.dir / "program").string()}, build).ok());  // ld's chmod +x
  if (!root()) return;
  // Root reads every file beneath a rule: not /etc's secrets.
  struct stat st;
  if (::stat("/etc/shadow", &st) == 0 && !(st.st_mode & S_IROTH)) {
    REQUIRE(helper({"read", "/etc/shadow"}));
    CHECK(denied(boxed(s, {"read", "/etc/shadow"}, build)));
  }
  CHECK(boxed(s, {"read", "/etc/passwd"}, build).ok());
  // Root's capabilities are gone but reading past file modes.
  const auto status = boxed(s, {"cat", "/proc/self/status"}, build);
  CHECK_THAT(status.output, Catch::Contains("CapEff:\t0000000000000006"));
  CHECK_THAT(status.output, Catch::Contains("CapBnd:\t0000000000000006"));
}

TEST_CASE("A check cannot start processes, leave its process group, or touch the grader",
          "[sandbox][grader]") {
  const auto& p = probe_isolation();
  Scratch s;
  const std::string grader = std::to_string(getpid());
  REQUIRE(helper({"kill", grader}));
  if (p.seccomp || p.landlock >= 6 || root()) CHECK(denied(boxed(s, {"kill", grader})));
  CHECK(denied(boxed(s, {"ptrace", grader})));  // Landlock alone forbids it
  if (!p.seccomp) return;
  REQUIRE(helper({"fork"}));
  CHECK(denied(boxed(s, {"fork"})));
  CHECK(denied(boxed(s, {"setsid"})));
  CHECK(denied(boxed(s, {"setpgid"})));
  SandboxSpec spec;
  spec.allow_fork = true;  // compute-sanitizer's case
  CHECK(boxed(s, {"fork"}, spec).ok());
}

TEST_CASE("A check runs as nobody under root, with HOME and TMPDIR in its scratch folder",
          "[sandbox][grader]") {
  Scratch s;
  const auto who = boxed(s, {"whoami"});
  REQUIRE(who.ok());
  if (root())
    CHECK(who.output == "uid 65534 gid 65534\n");
  else
    CHECK(who.output == fmt::format("uid {} gid {}\n", getuid(), getgid()));
  const std::string dir = fs::canonical(s.dir).string() + "\n";
  CHECK(boxed(s, {"env", "HOME"}).output == dir);
  CHECK(boxed(s, {"env", "TMPDIR"}).output == dir);
  CHECK(boxed(s, {"cwd"}).output == dir);
}

TEST_CASE("A check writes its record through the descriptor it was given, and gets no other",
          "[sandbox][grader]") {
  Scratch s;
  const fs::path record = world().root / "record.json";  // outside the scratch folder
  const int fd = ::open(record.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  const int leaked = ::open("/etc/passwd", O_RDONLY);  // not close-on-exec, not passed
  REQUIRE(fd >= 0);
  REQUIRE(leaked >= 0);
  SandboxSpec spec;
  spec.keep_fds = {3};
  CHECK(boxed(s, {"fd-write", "3"}, spec, {{fd, 3}}).ok());
  CHECK(denied(boxed(s, {"fd-open", std::to_string(leaked)}, spec, {{fd, 3}})));
  CHECK(denied(boxed(s, {"write", record.string()}, spec, {{fd, 3}})));  // by path: no
  close(fd);
  close(leaked);
  std::ifstream in(record);
  std::string line;
  std::getline(in, line);
  CHECK(line == "record");
}

TEST_CASE("The launcher refuses what it cannot confine, with the reason", "[sandbox][grader]") {
  Scratch s;
  SandboxSpec spec;
  spec.read.push_back(world().root / "missing.toml");
  auto r = boxed(s, {"whoami"}, spec);
  CHECK(r.exit_code == 125);
  CHECK_THAT(r.output, Catch::Contains("missing.toml"));
  SandboxSpec fds;
  fds.keep_fds = {9};
  r = boxed(s, {"whoami"}, fds);
  CHECK(r.exit_code == 125);
  CHECK_THAT(r.output, Catch::Contains("--keep-fd 9"));
  if (root()) {
    const fs::path hidden = world().root / "private";
    fs::create_directory(hidden);
    fs::permissions(hidden, fs::perms(0700));
    std::ofstream(hidden / "lab.toml") << "\n";
    CHECK_THAT(unreadable_by_sandbox({hidden / "lab.toml"}), Catch::Contains("private"));
    CHECK(unreadable_by_sandbox({world().lab_toml}).empty());
    SandboxSpec bad;
    bad.read.push_back(hidden / "lab.toml");
    r = boxed(s, {"whoami"}, bad);
    CHECK(r.exit_code == 125);
    CHECK_THAT(r.output, Catch::Contains("cannot be read by nobody") && Catch::Contains("private"));
  }
}

TEST_CASE("A command that closes its output before it exits keeps its exit code (run_process)",
          "[sandbox][grader]") {
  // GNU tools close stdout and stderr at exit; the sandbox's checks run
  // them. Closing the output used to get the command killed (SIGKILL).
  ProcessOptions o;
  o.argv = {"sh", "-c", "exec >&- 2>&-; sleep 0.3; exit 3"};
  o.timeout_s = 10;
  const auto r = run_process(o);
  CHECK(r.signal == 0);
  CHECK(r.exit_code == 3);
  o.argv = {"sh", "-c", "exec >&- 2>&-; sleep 30"};
  o.timeout_s = 0.5;
  CHECK(run_process(o).timed_out);
}

int main(int argc, char** argv) {
  const auto& p = probe_isolation();
  std::printf("isolation: %s\n", p.summary.c_str());
  // Skipped only where the kernel has no Landlock; a probe that failed
  // (NOT CONFINED: a trial that did not behave) is a failure of the tests.
  if (p.landlock == 0 && p.summary.rfind("NO landlock", 0) == 0) {
    std::printf("skipped: no Landlock here, so the sandbox cannot be tested (%s)\n", p.summary.c_str());
    return 77;
  }
  return Catch::Session().run(argc, argv);
}
