// grader/run/sandbox.h: runs a check confined (grades a hostile
// submission cannot forge). A check's command is prefixed with the trusted
// launcher cudalab-sandbox (grader/run/sandbox_main.cpp), which confines itself
// and then execve's the test binary, so the student's code, constructors
// included, only ever runs confined:
//
//   - Landlock: write access beneath the scratch folder only; read access to
//     the system folders a CUDA program needs and to the paths in `read`;
//     nothing else visible (other submissions, the grading folder, results,
//     /run); execution of the program, its loader and `exec` only; no TCP;
//     no signals to processes outside the sandbox (as far as the kernel's
//     Landlock ABI goes).
//   - seccomp: no sockets (socketpair's connected unix stream pairs only;
//     unix_listen: unix sockets that cannot connect, for CUDA; unix_sockets:
//     AF_UNIX), no ptrace, no new processes, no leaving
//     the process group (the grader kills it on a timeout), no namespaces,
//     mounts, bpf, perf, keyrings, modules or io_uring.
//   - as root (Gradescope, Docker): the scratch folder is given to nobody and
//     the check runs as nobody (65534); not under `build`, which keeps only
//     the capabilities to read past file modes (see sandbox_main.cpp).
//
// Typical use in the check runner:
//
//   const auto scratch = make_scratch_dir("03_tiling-ragged");
//   SandboxSpec box{scratch, {binary, lab_toml}, {}, {kRecordFd, kEvidenceFd}};
//   opt.argv = sandboxed_argv(box, opt.argv);   // opt.pass_fds as before
//   ... run_process(opt) ...
//   remove_scratch_dir(scratch);
//
// The launcher exits 125 when it cannot set up the confinement (its message
// says why, e.g. a path nobody cannot read), 126/127 when it cannot execute
// the program.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace cudalab {

struct SandboxSpec {
  // The only folder the check may write (it must exist; it also becomes the
  // working directory, HOME and TMPDIR). Empty: nothing writable.
  std::filesystem::path scratch;
  // Also readable: the test binary and its lab.toml (files or folders).
  std::vector<std::filesystem::path> read;
  // Also executable (and readable beneath, for folders). The program itself
  // (argv[0]) always is. Under compute-sanitizer: the test binary, and
  // compute-sanitizer's folder (the sanitizer loads its libraries from there).
  std::vector<std::filesystem::path> exec;
  // Also writable, beneath (e.g. the access report's file, where it is not
  // in the scratch folder). Under root they are given to nobody too.
  std::vector<std::filesystem::path> write;
  // Descriptors the program keeps (the child's numbers, i.e. the targets of
  // ProcessOptions::pass_fds); every other one above 2 is closed.
  std::vector<int> keep_fds;
  // Let the program start processes: compute-sanitizer starts the test binary
  // as its child. Also lifts the seccomp rule that signals go only to itself
  // (Landlock 6 still keeps them inside the sandbox).
  bool allow_fork = false;
  // Sockets (none by default: Landlock does not govern connect() to a
  // pathname unix socket, and a check could reach whatever socket it can
  // name: the session bus, Docker's socket).
  // unix_listen: AF_UNIX stream and seqpacket sockets that may bind, listen
  // and accept, but never connect: what the CUDA runtime needs as it starts
  // (seen on an H200 lease, CUDA 13.0, 2026-11-26: cudaMalloc fails with "OS
  // call failed" without it; it binds a seqpacket socket to the abstract
  // @cuda-uvmfd-NS-PID, and its connect to MPS's /tmp/nvidia-mps/control
  // may fail). Every run that touches the GPU needs it.
  bool unix_listen = false;
  // unix_sockets: AF_UNIX sockets as before, connect() included: the
  // compute-sanitizer front end connects to its target's abstract socket
  // (@nv_target_process_PID) and waits for it forever if it cannot. The
  // target, the student's code, need not connect: run it under a second
  // launcher nested in the first, which adds its own rules (seen working on
  // the H200, memcheck finding a planted out-of-bounds write):
  //   cudalab-sandbox ... --unix-sockets --allow-fork --exec SANITIZER_DIR --exec BINARY
  //       --exec LAUNCHER -- SANITIZER --tool memcheck
  //       LAUNCHER --scratch S --read ... --keep-fd ... --unix-listen -- BINARY ARGS
  // (descriptors kept through the sanitizer to the target: not yet tried).
  bool unix_sockets = false;
  // The build profile, for ninja and the compilers it runs on a submission:
  // processes allowed (as allow_fork); never runs as nobody (as root it
  // keeps only the capabilities to read past file modes); reads /usr, /lib*,
  // /bin, /sbin, /etc, /proc, the CUDA toolkit and `read`; of /dev only
  // /dev/null; no /sys, /opt, /run or GPU; executes beneath `exec` (pass
  // folders: /usr, /bin, /lib*, the CUDA root); writes beneath `scratch` and
  // `write` (the build folder); no sockets.
  bool build = false;
  // Refuse to run (exit 125) unless Landlock and seccomp are both in force.
  bool require = false;
};

// The launcher's command line that runs `argv` confined by `spec`. Paths are
// made absolute. Throws std::runtime_error if the launcher was not built.
std::vector<std::string> sandboxed_argv(const SandboxSpec& spec, const std::vector<std::string>& argv);

// compute-sanitizer's own program, for the sandbox: the one on PATH is a
// shell script that runs readlink and dirname (which a confined check may
// not run) and then this. Run it as argv[0] with its folder and the test
// binary in SandboxSpec::exec and allow_fork set. Empty if not found.
// The real files (symbolic links resolved) named `name` in PATH, then in
// `also` (more folders, ':'-separated), in that order.
std::vector<std::filesystem::path> programs_in_path(const std::string& name, const std::string& also = "");
std::filesystem::path compute_sanitizer_program();

// cudalab-sandbox: next to the running executable, else where this build put
// it. Empty if neither exists.
std::filesystem::path sandbox_launcher();
// Why nothing can be graded without it, and the command that builds it.
std::string sandbox_missing_message();

// What `cudalab-sandbox --probe` found: the isolation a check runs under here.
struct IsolationProbe {
  bool ok = false;       // the launcher ran and confined a trial process
  int landlock = 0;      // the Landlock ABI in force; 0: none
  bool seccomp = false;  // the seccomp filter is in force
  std::string drops_to;  // "nobody" when the grader runs as root, else empty
  std::string sockets;   // what a check may have: "none", "unix-listen", "unix", "any" (no seccomp)
  std::string summary;   // "landlock v7 (files, TCP, signals), seccomp, no sockets, runs as nobody"
  std::string json;      // the probe's line, for results
};
// Runs the probe once per process (thread-safe) and keeps its answer.
const IsolationProbe& probe_isolation();
// probe_isolation().summary, or why there is no sandbox.
std::string isolation_summary();

// A fresh, empty folder for one check, private to the grader until the
// launcher hands it over (mode 0700, under $TMPDIR or /tmp: a place nobody
// can reach when the grader runs as root).
std::filesystem::path make_scratch_dir(const std::string& label);
// Removes it with whatever the check left there; never throws.
void remove_scratch_dir(const std::filesystem::path& dir);

// When this process runs as root, checks run as nobody: the first of `paths`
// nobody could not read (with the folder on its way that stops it), else "".
// For a clear message once, before every check fails on it.
std::string unreadable_by_sandbox(const std::vector<std::filesystem::path>& paths);

}  // namespace cudalab
