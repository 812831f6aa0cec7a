// cudalab-sandbox: the trusted launcher every graded check starts through.
// It confines itself, then execve's the test binary, so that the
// student's code, constructors included, never runs unconfined:
//
//   cudalab-sandbox [--scratch DIR] [--read PATH]... [--exec PATH]... [--write PATH]...
//                   [--keep-fd N]... [--allow-fork] [--unix-sockets | --unix-listen] [--build]
//                   [--require] -- PROGRAM ARGS...
//   cudalab-sandbox --probe [--unix-sockets | --unix-listen] [--require]
//
// - Landlock (the highest ABI the kernel offers, every access right it knows
//   handled): the system folders a CUDA program reads (/usr, /lib, /etc, /proc,
//   /sys, /dev, /opt, the CUDA toolkit) and each --read path read-only; not
//   /run or /var/run (the session bus, Docker's socket, a container's
//   secrets) but for /run/nvidia-persistenced; /dev/null, /dev/zero,
//   /dev/urandom and the NVIDIA devices read-write (the driver opens them
//   O_RDWR and ioctls them); everything beneath --scratch (and each --write
//   path) read-write; EXECUTE only for PROGRAM, its interpreter and the
//   --exec paths. Everything else (other submissions, the grading folder, the
//   results) is invisible. ABI 4+: TCP bind and connect denied; ABI 6+: no
//   signals to, and no abstract unix sockets of, processes outside the
//   sandbox.
// - seccomp (libseccomp; default allow): no sockets at all (socket() says
//   EACCES; connect, bind and sendto to an address too), but socketpair's
//   connected AF_UNIX stream pairs, which reach nothing outside. With
//   --unix-listen, AF_UNIX stream and seqpacket sockets that may bind and
//   listen but never connect (what the CUDA runtime needs as it starts);
//   with --unix-sockets, AF_UNIX sockets (compute-sanitizer's front end
//   connects to its target; Landlock does not govern connect() to a
//   pathname socket: whatever socket the check can name, it can reach).
//   ptrace and process_vm_*, new processes (fork, vfork, clone without
//   CLONE_THREAD; clone3 says ENOSYS so glibc falls back to clone), new
//   namespaces, leaving the process group (setsid, setpgid), mounts, bpf,
//   perf, keyrings, modules, kexec, io_uring, userfaultfd, and signals to
//   other processes.
// - no_new_privs, RLIMIT_CORE 0, RLIMIT_FSIZE 1 GiB; as root (but under
//   --build): the scratch folder is given to nobody (65534:65534) and the
//   process becomes nobody.
// - every descriptor above 2 closed except --keep-fd ones; HOME and TMPDIR in
//   the scratch folder, which is also the working directory.
//
// --build, the build profile (ninja, nvcc, g++, as, ld, ar, python3 on a
// submission): processes allowed (as --allow-fork); reads only /usr, /lib*,
// /bin, /sbin, /etc, /proc (read-only), the CUDA toolkit and the --read paths;
// of /dev only /dev/null (a compiler told to include /dev/zero fails at once
// instead of hanging); no /sys, /opt, /run, NVIDIA devices; writes beneath
// --scratch and the --write paths (the build folder); no sockets. It never
// becomes nobody (the build tree need not be readable by nobody). As root,
// where Landlock alone would leave the build root's powers over what it may
// name (Landlock does not govern chmod, chown, xattrs, and root reads every
// file its rules reach): every capability but CAP_DAC_OVERRIDE and
// CAP_DAC_READ_SEARCH is dropped (bounding set included), /etc is readable
// only where any user may read it (not /etc/shadow, nor ssh host keys), and
// seccomp refuses chown, xattr changes and setuid/setgid modes. setpgid
// "succeeds" without effect: ninja puts every command in a group of its own,
// which would escape the grader's kill of the process group on a timeout.
//
// A mechanism the kernel (or the build) lacks is left out, and --probe says
// so: one JSON object with what is in force. --require turns a missing
// mechanism into exit code 125 with the reason. Any other failure to set up
// the confinement exits 125 too: never run unconfined by accident.
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <grp.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "cudalab/elf.h"

#if CUDALAB_HAVE_SECCOMP
#include <seccomp.h>
#endif

#ifndef CUDALAB_CUDA_ROOT
#define CUDALAB_CUDA_ROOT ""
#endif

extern char** environ;

namespace {

constexpr int kSetupFailed = 125;  // like env(1) and timeout(1): the launcher failed
constexpr uid_t kNobody = 65534;
constexpr gid_t kNogroup = 65534;
constexpr rlim_t kMaxFileBytes = rlim_t(1) << 30;

// --- Landlock, spelled out: the build machine's headers may predate ABI 4-7.
struct RulesetAttr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};
struct PathBeneathAttr {
  uint64_t allowed_access;
  int32_t parent_fd;
} __attribute__((packed));
constexpr uint32_t kCreateRulesetVersion = 1u << 0;
constexpr int kRulePathBeneath = 1;

constexpr uint64_t kExecute = 1ull << 0, kWriteFile = 1ull << 1, kReadFile = 1ull << 2, kReadDir = 1ull << 3,
                   kRemoveDir = 1ull << 4, kRemoveFile = 1ull << 5, kMakeChar = 1ull << 6,
                   kMakeDir = 1ull << 7, kMakeReg = 1ull << 8, kMakeSock = 1ull << 9, kMakeFifo = 1ull << 10,
                   kMakeBlock = 1ull << 11, kMakeSym = 1ull << 12, kRefer = 1ull << 13,  // ABI 2
    kTruncate = 1ull << 14,                                                              // ABI 3
    kIoctlDev = 1ull << 15;                                                              // ABI 5
constexpr uint64_t kBindTcp = 1ull << 0, kConnectTcp = 1ull << 1;                        // ABI 4
constexpr uint64_t kScopeAbstractUnix = 1ull << 0, kScopeSignal = 1ull << 1;             // ABI 6
// What a rule on a file (not a folder) may grant.
constexpr uint64_t kFileRights = kExecute | kWriteFile | kReadFile | kTruncate | kIoctlDev;

int landlock_abi() {
#ifdef SYS_landlock_create_ruleset
  const long v = syscall(SYS_landlock_create_ruleset, nullptr, 0, kCreateRulesetVersion);
  return v > 0 ? static_cast<int>(v) : 0;
#else
  return 0;
#endif
}

uint64_t fs_rights(int abi) {
  uint64_t r = (1ull << 13) - 1;
  if (abi >= 2) r |= kRefer;
  if (abi >= 3) r |= kTruncate;
  if (abi >= 5) r |= kIoctlDev;
  return r;
}

// --- messages
[[noreturn]] void die(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("cudalab-sandbox: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  _exit(kSetupFailed);
}

bool seccomp_built() {
  return CUDALAB_HAVE_SECCOMP != 0;
}

// The kernel can filter system calls (CONFIG_SECCOMP_FILTER), and we are not
// already forbidden to add a filter.
bool seccomp_kernel() {
  uint32_t action = SECCOMP_RET_ERRNO;
  return syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
}

// --- paths and rules
struct Rule {
  std::string path;
  uint64_t access;
  bool required;  // missing: an error (a path the grader named), not a skip (a system folder)
};

bool is_dir(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// PROGRAM's interpreter: the ELF PT_INTERP (the dynamic loader), or a
// script's #! line. Empty if none. The file is mapped, not read: a test
// binary with its device code is tens of megabytes, and only its program
// headers are looked at.
std::string interpreter_of(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::string result;
  unsigned char head[256];
  const ssize_t n = pread(fd, head, sizeof head, 0);
  struct stat st;
  if (n >= 4 && head[0] == '#' && head[1] == '!') {
    std::string line(reinterpret_cast<char*>(head) + 2, static_cast<std::size_t>(n - 2));
    line = line.substr(0, line.find('\n'));
    const auto b = line.find_first_not_of(" \t");
    if (b != std::string::npos) result = line.substr(b, line.find_first_of(" \t", b) - b);
  } else if (n >= SELFMAG && memcmp(head, ELFMAG, SELFMAG) == 0 && fstat(fd, &st) == 0 && st.st_size > 0) {
    const auto size = static_cast<std::size_t>(st.st_size);
    void* map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map != MAP_FAILED) {
      const cudalab::elf::File elf(std::string_view(static_cast<const char*>(map), size));
      result = std::string(elf.interpreter());
      munmap(map, size);
    }
  }
  close(fd);
  return result;
}

// PROGRAM as execvp would find it.
std::string resolve_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    const std::size_t end = std::min(dirs.find(':', start), dirs.size());
    std::string dir = dirs.substr(start, end - start);
    if (dir.empty()) dir = ".";
    const std::string candidate = dir + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0 && !is_dir(candidate)) return candidate;
    start = end + 1;
  }
  return name;
}

struct Options {
  std::string scratch;
  std::vector<std::string> read, exec, write;
  std::vector<int> keep_fds;
  bool allow_fork = false, require = false, probe = false;
  bool unix_sockets = false;  // --unix-sockets: AF_UNIX sockets may be created
  bool unix_listen = false;   // --unix-listen: AF_UNIX stream sockets that never connect
  bool build = false;         // --build: the build profile (see the top)
  std::vector<std::string> command;
  // Whether the program may start processes: --allow-fork, or --build.
  bool forks() const { return allow_fork || build; }
};

struct Status {
  int landlock = 0;  // the ABI in force, 0: none
  bool seccomp = false;
  bool dropped = false;
  std::string landlock_missing, seccomp_missing;  // why not
};

void add_rule(int ruleset, const Rule& rule, uint64_t handled) {
  const int fd = open(rule.path.c_str(), O_PATH | O_CLOEXEC);
  if (fd < 0) {
    if (!rule.required) return;
    die("cannot open %s: %s", rule.path.c_str(), strerror(errno));
  }
  struct stat st;
  uint64_t access = rule.access & handled;
  if (fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode)) access &= kFileRights;
  PathBeneathAttr attr{access, fd};
  if (access && syscall(SYS_landlock_add_rule, ruleset, kRulePathBeneath, &attr, 0) != 0)
    die("landlock rule for %s: %s", rule.path.c_str(), strerror(errno));
  close(fd);
}

// Under --build as root (who, with CAP_DAC_OVERRIDE or as the owner, reads
// every file): the parts of `path` any user may read by their mode bits.
// Returns whether all of it is such (the caller then adds one rule for it);
// otherwise adds rules for the parts that are. Symbolic links count as
// readable and get no rule: what they point to is governed by its own rules
// (a folder's rule covers only what lies beneath it).
bool world_readable_tree(const std::string& path, std::vector<Rule>* rules, int depth) {
  const uint64_t ro = kReadFile | kReadDir;
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) return false;
  if (S_ISLNK(st.st_mode)) return true;
  if (S_ISREG(st.st_mode)) return (st.st_mode & S_IROTH) != 0;
  if (!S_ISDIR(st.st_mode) || depth > 12) return false;  // devices, fifos, sockets: nothing to read
  if ((st.st_mode & (S_IROTH | S_IXOTH)) != (S_IROTH | S_IXOTH)) return false;
  DIR* d = opendir(path.c_str());
  if (!d) return false;
  std::vector<std::string> children;
  while (const dirent* e = readdir(d))
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
      children.push_back(path + "/" + e->d_name);
  closedir(d);
  std::vector<std::string> readable;
  bool all = true;
  for (const auto& c : children) {
    if (world_readable_tree(c, rules, depth + 1))
      readable.push_back(c);
    else
      all = false;
  }
  if (all) return true;
  // Not a rule for a link: it would be one for its target, wherever that is.
  for (const auto& c : readable)
    if (lstat(c.c_str(), &st) == 0 && !S_ISLNK(st.st_mode)) rules->push_back({c, ro, false});
  return false;
}

std::vector<Rule> rules_for(const Options& o, const std::string& program) {
  const uint64_t ro = kReadFile | kReadDir;
  const uint64_t rw_dev = kReadFile | kWriteFile | kTruncate | kIoctlDev;
  std::vector<Rule> rules;
  // Not /run or /var/run: the sockets there (the session bus, Docker's; a
  // check has none, or none that connects, unless --unix-sockets) and a
  // container's secrets.
  for (const char* p : {"/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/proc"})
    rules.push_back({p, ro, false});
  if (o.build && geteuid() == 0) {
    // Root reads every file beneath a rule: /etc only where anybody may
    // (not /etc/shadow, /etc/gshadow, ssh host keys, /etc/ssl/private); its
    // folders' entries may be listed.
    rules.push_back({"/etc", kReadDir, false});
    if (world_readable_tree("/etc", &rules, 0)) rules.push_back({"/etc", ro, false});
  } else {
    rules.push_back({"/etc", ro, false});
  }
  if (*CUDALAB_CUDA_ROOT) rules.push_back({CUDALAB_CUDA_ROOT, ro, false});
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* v = getenv(var); v && *v == '/') rules.push_back({v, ro, false});
  if (o.build) {
    // Of /dev only /dev/null: a compiler that reads /dev/zero (an #include,
    // an .incbin) must fail at once, not hang. No /sys, /opt, /run, GPU.
    rules.push_back({"/dev/null", rw_dev, false});
  } else {
    for (const char* p : {"/sys", "/dev", "/opt"}) rules.push_back({p, ro, false});
    // The driver may talk to the persistence daemon (its socket is here): to
    // be confirmed on a GPU host that runs one (tools/probes/socket_log.c; the
    // H200 lease of 2026-11-26 had none, and the runtime looked for none).
    // Nothing else of /run is readable.
    for (const char* p : {"/run/nvidia-persistenced", "/var/run/nvidia-persistenced"})
      rules.push_back({p, ro, false});
    for (const char* p :
         {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/nvidia-caps"})
      rules.push_back({p, rw_dev, false});
    glob_t g{};
    if (glob("/dev/nvidia*", 0, nullptr, &g) == 0)
      for (std::size_t i = 0; i < g.gl_pathc; ++i) rules.push_back({g.gl_pathv[i], rw_dev | kReadDir, false});
    globfree(&g);
    // The process's own /proc entries, writable: the CUDA driver writes there
    // (with O_TRUNC) as it starts. Under --allow-fork the children's too,
    // which other pids hold: all of /proc (what else is writable there is the
    // user's own or root's). Not under --build: /proc stays read-only.
    rules.push_back(
        {o.allow_fork ? "/proc" : "/proc/self", kReadFile | kReadDir | kWriteFile | kTruncate, false});
  }
  for (const auto& p : o.read) rules.push_back({p, ro, true});
  // Write access everywhere beneath, but no execution and no device nodes.
  const uint64_t rw_tree = ~(kExecute | kMakeChar | kMakeBlock);
  if (!o.scratch.empty()) rules.push_back({o.scratch, rw_tree, true});
  for (const auto& p : o.write) rules.push_back({p, rw_tree, true});
  // Execution: the program, its interpreter (the dynamic loader, a script's
  // shell and that shell's loader), the --exec paths, the usual loaders (what
  // an --exec program needs).
  std::vector<std::string> exec = {program};
  for (std::string p = program, interp; exec.size() < 4 && !(interp = interpreter_of(p)).empty(); p = interp)
    exec.push_back(interp);
  for (const auto& p : o.exec) {
    exec.push_back(p);
    if (const std::string interp = interpreter_of(p); !interp.empty()) exec.push_back(interp);
  }
  for (const auto& p : exec) rules.push_back({p, kExecute | ro, true});
  for (const char* p : {"/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1"})
    rules.push_back({p, kExecute | kReadFile, false});
  return rules;
}

// Returns the ABI in force, or 0 with the reason in *why.
int install_landlock(const Options& o, const std::string& program, std::string* why) {
  const int abi = landlock_abi();
  if (abi == 0) {
    *why = errno == ENOSYS       ? "the kernel has no Landlock (Linux 5.13+)"
           : errno == EOPNOTSUPP ? "Landlock is disabled (boot with lsm=...,landlock)"
           : errno == EPERM
               ? "the Landlock calls are blocked (a container's seccomp profile older than Docker 23?)"
               : std::string("landlock: ") + strerror(errno);
    return 0;
  }
  RulesetAttr attr{};
  attr.handled_access_fs = fs_rights(abi);
  std::size_t size = sizeof(uint64_t);
  if (abi >= 4) {
    attr.handled_access_net = kBindTcp | kConnectTcp;  // and no rule: no TCP at all
    size = 2 * sizeof(uint64_t);
  }
  if (abi >= 6) {
    attr.scoped = kScopeAbstractUnix | kScopeSignal;
    size = sizeof attr;
  }
  const int ruleset = static_cast<int>(syscall(SYS_landlock_create_ruleset, &attr, size, 0));
  if (ruleset < 0) die("landlock_create_ruleset: %s", strerror(errno));
  for (const Rule& r : rules_for(o, program)) add_rule(ruleset, r, attr.handled_access_fs);
  if (syscall(SYS_landlock_restrict_self, ruleset, 0) != 0)
    die("landlock_restrict_self: %s", strerror(errno));
  close(ruleset);
  return abi;
}

#if CUDALAB_HAVE_SECCOMP
#if defined(__x86_64__)
constexpr uint32_t kAuditArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr uint32_t kAuditArch = AUDIT_ARCH_AARCH64;
#else
constexpr uint32_t kAuditArch = 0;
#endif

// kill and rt_sigqueueinfo only to 0 (its group), itself or -itself (its
// group); tgkill and rt_tgsigqueueinfo only within itself. Other
// architectures' calls are the main filter's to refuse.
void install_signal_filter() {
  if (kAuditArch == 0) return;
  const uint32_t self = static_cast<uint32_t>(getpid()), group = static_cast<uint32_t>(-getpid());
  const uint32_t arg0 = offsetof(seccomp_data, args[0]) + (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? 0 : 4);
  const uint32_t deny = SECCOMP_RET_ERRNO | EPERM;
  sock_filter code[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),   // 0
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kAuditArch, 0, 12),             // 1: else 14
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),     // 2
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_kill, 4, 0),               // 3: to 8
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_rt_sigqueueinfo, 3, 0),    // 4: to 8
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_tgkill, 6, 0),             // 5: to 12
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_rt_tgsigqueueinfo, 5, 0),  // 6: to 12
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),                       // 7
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, arg0),                           // 8
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 6, 0),                       // 9: to 16
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, group, 5, 0),                   // 10: to 16
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, self, 4, 3),                    // 11: to 16, else 15
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, arg0),                           // 12
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, self, 2, 1),                    // 13: to 16, else 15
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),                       // 14 (1's "else")
      BPF_STMT(BPF_RET | BPF_K, deny),                                    // 15
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),                       // 16
  };
  sock_fprog prog{static_cast<unsigned short>(sizeof code / sizeof code[0]), code};
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) die("seccomp (signals): %s", strerror(errno));
}

void install_seccomp(const Options& o) {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (!ctx) die("seccomp_init failed");
  const uint32_t eperm = SCMP_ACT_ERRNO(EPERM), eacces = SCMP_ACT_ERRNO(EACCES);
  // Each rule; a system call this architecture lacks is skipped. `nr`: the
  // number of a call newer than this libseccomp (x86_64 and aarch64 share
  // the numbers of calls added since Linux 5.1).
  auto rule = [&](const char* name, uint32_t action, std::vector<scmp_arg_cmp> args = {}, int nr = -1) {
    const int resolved = seccomp_syscall_resolve_name(name);
#if defined(__x86_64__) || defined(__aarch64__)
    if (resolved == __NR_SCMP_ERROR && nr < 0) return;
    if (resolved != __NR_SCMP_ERROR) nr = resolved;
#else
    if (resolved == __NR_SCMP_ERROR) return;
    nr = resolved;
#endif
    const int rc = seccomp_rule_add_array(ctx, action, nr, static_cast<unsigned>(args.size()), args.data());
    if (rc != 0 && rc != -EDOM) die("seccomp rule for %s: %s", name, strerror(-rc));
  };
  // Another process: its memory, or a new one (which would also leave the
  // process group... and the signal rules below).
  for (const char* s : {"ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd"})
    rule(s, eperm);
  if (!o.forks()) {
    rule("fork", eperm);
    rule("vfork", eperm);
    rule("clone", eperm, {SCMP_A0_64(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0)});
  }
  // compute-sanitizer starts the test binary, a build its compilers:
  // processes, but no namespaces (one rule per flag: any of them refuses).
  for (const uint64_t flag :
       {CLONE_NEWUSER, CLONE_NEWNS, CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWCGROUP})
    rule("clone", eperm, {SCMP_A0_64(SCMP_CMP_MASKED_EQ, flag, flag)});
  rule("clone3", SCMP_ACT_ERRNO(ENOSYS));  // its flags are out of reach: glibc falls back to clone
  // Stay in the process group the grader kills on a timeout. Under --build,
  // setpgid succeeds without effect: ninja starts each command in a group of
  // its own (posix_spawn's POSIX_SPAWN_SETPGROUP), and fails if it cannot.
  rule("setsid", eperm);
  rule("setpgid", o.build ? SCMP_ACT_ERRNO(0) : eperm);
  // Signals: only to itself and its own group (Landlock 6 also scopes them).
  // kill(2) may name 0, itself or its group: three values of one argument,
  // which libseccomp cannot combine in one rule, so a small filter of our
  // own does it (below).
  if (!o.forks())
    for (const char* s : {"tkill", "pidfd_send_signal"}) rule(s, eperm);
  // No network (Landlock 4 also denies TCP). By default no sockets at all:
  // Landlock does not govern connect() to a pathname unix socket, and a
  // check could reach any it can name (the session bus, Docker's socket).
  // socketpair's connected stream pairs reach nothing outside; a datagram
  // pair (SOCK_RAW is SOCK_DGRAM for AF_UNIX) could sendto any socket by
  // its path. connect, bind and sendto to an address are refused too, for a
  // socket a descriptor 0-2 might be.
  // --unix-listen: AF_UNIX stream and seqpacket sockets that may bind,
  // listen and accept but never connect (nor datagrams, which need no
  // connect): what the CUDA runtime does as it starts (a seqpacket socket
  // bound to the abstract @cuda-uvmfd-NS-PID; its connect to the MPS
  // daemon's /tmp/nvidia-mps/control then fails, as where none runs).
  // --unix-sockets: AF_UNIX sockets as before (compute-sanitizer's front
  // end connects to its target's abstract socket).
  if (o.unix_sockets) {
    rule("socket", eacces, {SCMP_A0_32(SCMP_CMP_NE, AF_UNIX)});
  } else {
    if (o.unix_listen) {
      rule("socket", eacces, {SCMP_A0_32(SCMP_CMP_NE, AF_UNIX)});
      for (const int type : {SOCK_DGRAM, SOCK_RAW})
        rule("socket", eacces, {SCMP_A1_32(SCMP_CMP_MASKED_EQ, 0xf, static_cast<uint32_t>(type))});
    } else {
      rule("socket", eacces);
      rule("bind", eacces);
    }
    for (const int type : {SOCK_DGRAM, SOCK_RAW})
      rule("socketpair", eacces, {SCMP_A1_32(SCMP_CMP_MASKED_EQ, 0xf, static_cast<uint32_t>(type))});
    rule("connect", eacces);
    rule("sendto", eacces, {SCMP_A4_64(SCMP_CMP_NE, 0)});
  }
  rule("socketpair", eacces, {SCMP_A0_32(SCMP_CMP_NE, AF_UNIX)});
  if (o.build) {
    // The build may run as root, whose powers over files Landlock does not
    // govern: ownership, extended attributes (file capabilities), and
    // setuid/setgid modes (a setuid-root program left in the build folder).
    // The plain modes (ld's chmod +x) and times stay.
    for (const char* s : {"chown", "fchown", "lchown", "fchownat"}) rule(s, eperm);
    for (const char* s :
         {"setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr", "fremovexattr"})
      rule(s, SCMP_ACT_ERRNO(EOPNOTSUPP));
    rule("setxattrat", SCMP_ACT_ERRNO(EOPNOTSUPP), {}, 463);
    rule("removexattrat", SCMP_ACT_ERRNO(EOPNOTSUPP), {}, 466);
    rule("openat2", SCMP_ACT_ERRNO(ENOSYS), {}, 437);  // its mode is out of reach: glibc falls back
    for (const uint32_t bit : {uint32_t(S_ISUID), uint32_t(S_ISGID)}) {
      rule("chmod", eperm, {SCMP_A1_32(SCMP_CMP_MASKED_EQ, bit, bit)});
      rule("fchmod", eperm, {SCMP_A1_32(SCMP_CMP_MASKED_EQ, bit, bit)});
      rule("fchmodat", eperm, {SCMP_A2_32(SCMP_CMP_MASKED_EQ, bit, bit)});
      rule("fchmodat2", eperm, {SCMP_A2_32(SCMP_CMP_MASKED_EQ, bit, bit)}, 452);
      rule("creat", eperm, {SCMP_A1_32(SCMP_CMP_MASKED_EQ, bit, bit)});
      rule("mknod", eperm, {SCMP_A1_32(SCMP_CMP_MASKED_EQ, bit, bit)});
      rule("mknodat", eperm, {SCMP_A2_32(SCMP_CMP_MASKED_EQ, bit, bit)});
      for (const uint32_t create : {uint32_t(O_CREAT), uint32_t(__O_TMPFILE)}) {
        rule("open", eperm,
             {SCMP_A1_32(SCMP_CMP_MASKED_EQ, create, create), SCMP_A2_32(SCMP_CMP_MASKED_EQ, bit, bit)});
        rule("openat", eperm,
             {SCMP_A2_32(SCMP_CMP_MASKED_EQ, create, create), SCMP_A3_32(SCMP_CMP_MASKED_EQ, bit, bit)});
      }
    }
  }
  // Mounts, namespaces, the kernel's own machinery.
  for (const char* s : {"mount",
                        "umount",
                        "umount2",
                        "pivot_root",
                        "chroot",
                        "unshare",
                        "setns",
                        "open_tree",
                        "move_mount",
                        "fsopen",
                        "fsconfig",
                        "fsmount",
                        "fspick",
                        "mount_setattr",
                        "bpf",
                        "perf_event_open",
                        "keyctl",
                        "add_key",
                        "request_key",
                        "kexec_load",
                        "kexec_file_load",
                        "init_module",
                        "finit_module",
                        "delete_module",
                        "io_uring_setup",
                        "io_uring_enter",
                        "io_uring_register",
                        "userfaultfd",
                        "name_to_handle_at",
                        "open_by_handle_at",
                        "fanotify_init",
                        "swapon",
                        "swapoff",
                        "reboot",
                        "acct",
                        "quotactl",
                        "quotactl_fd",
                        "iopl",
                        "ioperm",
                        "syslog",
                        "settimeofday",
                        "clock_settime",
                        "adjtimex",
                        "clock_adjtime",
                        "sethostname",
                        "setdomainname",
                        "lookup_dcookie",
                        "vhangup",
                        "uselib",
                        "process_madvise"})
    rule(s, eperm);
  if (const int rc = seccomp_load(ctx); rc != 0) die("seccomp_load: %s", strerror(-rc));
  seccomp_release(ctx);
  if (!o.forks()) install_signal_filter();
}
#endif

void close_other_fds(const std::vector<int>& keep) {
  DIR* d = opendir("/proc/self/fd");
  std::vector<int> open_fds;
  if (d) {
    while (const dirent* e = readdir(d))
      if (e->d_name[0] != '.') open_fds.push_back(atoi(e->d_name));
    const int own = dirfd(d);
    closedir(d);
    for (int fd : open_fds)
      if (fd > 2 && fd != own) {
        bool kept = false;
        for (int k : keep) kept |= k == fd;
        if (!kept) close(fd);
      }
  } else {
    for (int fd = 3; fd < 4096; ++fd) {
      bool kept = false;
      for (int k : keep) kept |= k == fd;
      if (!kept) close(fd);
    }
  }
  for (int k : keep) {
    const int flags = fcntl(k, F_GETFD);
    if (flags < 0) die("--keep-fd %d: not an open descriptor", k);
    fcntl(k, F_SETFD, flags & ~FD_CLOEXEC);
  }
}

void chown_tree(const std::string& path) {
  if (lchown(path.c_str(), kNobody, kNogroup) != 0)
    die("cannot give %s to nobody: %s", path.c_str(), strerror(errno));
  struct stat st;
  if (lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return;
  DIR* d = opendir(path.c_str());
  if (!d) return;
  std::vector<std::string> names;
  while (const dirent* e = readdir(d))
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) names.push_back(e->d_name);
  closedir(d);
  for (const auto& n : names) chown_tree(path + "/" + n);
}

// Which folder on the way to `path` nobody cannot pass, or the file itself.
std::string why_unreachable(const std::string& path, int mode) {
  std::string prefix;
  std::size_t pos = 1;
  while (pos <= path.size()) {
    const std::size_t next = std::min(path.find('/', pos), path.size());
    prefix = path.substr(0, next);
    if (next < path.size() && access(prefix.c_str(), X_OK) != 0) {
      struct stat st {};
      stat(prefix.c_str(), &st);
      char buf[512];
      snprintf(buf, sizeof buf, "the folder %s (mode %04o, owner uid %u) is not searchable by others",
               prefix.c_str(), st.st_mode & 07777, st.st_uid);
      return buf;
    }
    pos = next + 1;
  }
  if (access(path.c_str(), mode) != 0) {
    struct stat st {};
    stat(path.c_str(), &st);
    char buf[512];
    snprintf(buf, sizeof buf, "%s (mode %04o, owner uid %u): %s", path.c_str(), st.st_mode & 07777, st.st_uid,
             strerror(errno));
    return buf;
  }
  return {};
}

void drop_to_nobody(const Options& o, const std::string& program) {
  if (!o.scratch.empty()) chown_tree(o.scratch);
  for (const auto& p : o.write) chown_tree(p);
  if (setgroups(0, nullptr) != 0) die("setgroups: %s", strerror(errno));
  if (setresgid(kNogroup, kNogroup, kNogroup) != 0) die("setresgid: %s", strerror(errno));
  if (setresuid(kNobody, kNobody, kNobody) != 0) die("setresuid: %s", strerror(errno));
  if (setresuid(0, 0, 0) == 0) die("could still become root after dropping to nobody");
  // What the check needs must be open to nobody: say which folder is not.
  auto need = [](const std::string& path, int mode, const char* what) {
    if (const std::string why = why_unreachable(path, mode); !why.empty())
      die("%s %s cannot be read by nobody (uid 65534), whom checks run as under root: %s. Make the path "
          "world-readable (chmod o+rX), or grade from a folder that is",
          what, path.c_str(), why.c_str());
  };
  need(program, R_OK | X_OK, "the program");
  for (const auto& p : o.read) need(p, R_OK, "the file");
  for (const auto& p : o.exec) need(p, R_OK | X_OK, "the program");
  if (!o.scratch.empty()) need(o.scratch, R_OK | W_OK | X_OK, "the scratch folder");
}

// --build as root: no capability but reading past file modes (the build
// tree and the course source need not be readable by anybody else; Landlock
// decides what is read). Gone from the bounding set too, so that the
// programs the build runs, root's included, get no more.
void drop_capabilities() {
  constexpr uint64_t keep = (1ull << CAP_DAC_OVERRIDE) | (1ull << CAP_DAC_READ_SEARCH);
  for (int cap = 0; cap < 64; ++cap) {
    const int in = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);
    if (in < 0) break;  // past the kernel's last capability
    if (in == 1 && !((keep >> cap) & 1) && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0)
      die("cannot drop capability %d from the bounding set: %s", cap, strerror(errno));
  }
  prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2]{};
  if (syscall(SYS_capget, &header, data) != 0) die("capget: %s", strerror(errno));
  for (int i = 0; i < 2; ++i) {
    const uint32_t k = static_cast<uint32_t>(keep >> (32 * i));
    data[i].effective &= k;
    data[i].permitted &= k;
    data[i].inheritable = 0;
  }
  if (syscall(SYS_capset, &header, data) != 0) die("capset: %s", strerror(errno));
}

// Applies everything; returns what is in force. Dies on a failure that is
// not simply a missing mechanism.
Status confine(const Options& o, const std::string& program) {
  Status s;
  const rlimit core{0, 0};
  setrlimit(RLIMIT_CORE, &core);
  rlimit fsize;
  if (getrlimit(RLIMIT_FSIZE, &fsize) == 0 &&
      (fsize.rlim_max == RLIM_INFINITY || fsize.rlim_max > kMaxFileBytes)) {
    fsize.rlim_cur = fsize.rlim_max = kMaxFileBytes;
    if (setrlimit(RLIMIT_FSIZE, &fsize) != 0) die("setrlimit(RLIMIT_FSIZE): %s", strerror(errno));
  }
  if (geteuid() == 0) {
    if (o.build) {
      drop_capabilities();  // and stays root: see the top
    } else {
      drop_to_nobody(o, program);
      s.dropped = true;
    }
  }
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) die("PR_SET_NO_NEW_PRIVS: %s", strerror(errno));
  s.landlock = install_landlock(o, program, &s.landlock_missing);
  if (!seccomp_built()) {
    s.seccomp_missing = "built without libseccomp";
  } else if (!seccomp_kernel()) {
    s.seccomp_missing = "the kernel has no seccomp filters";
  } else {
#if CUDALAB_HAVE_SECCOMP
    install_seccomp(o);
    s.seccomp = true;
#endif
  }
  return s;
}

// `sockets`: what the trial could create: "none", "unix" (AF_UNIX only),
// "unix-listen" (AF_UNIX, connect refused), "any" (no seccomp: only
// Landlock 4's TCP rules).
std::string summary(int landlock, bool seccomp, bool root, const std::string& landlock_why,
                    const std::string& seccomp_why, const std::string& sockets) {
  std::string s;
  if (landlock >= 6)
    s = "landlock v" + std::to_string(landlock) + " (files, TCP, signals)";
  else if (landlock >= 4)
    s = "landlock v" + std::to_string(landlock) + " (files, TCP; no signal scoping)";
  else if (landlock > 0)
    s = "landlock v" + std::to_string(landlock) + " (files; no TCP rules, no signal scoping)";
  else
    s = "NO landlock (" + landlock_why + ": a check can read and write what its user can)";
  s += seccomp ? ", seccomp" : ", NO seccomp (" + seccomp_why + ")";
  s += sockets == "none"          ? ", no sockets"
       : sockets == "unix"        ? ", unix sockets only"
       : sockets == "unix-listen" ? ", unix sockets that cannot connect"
                                  : ", sockets NOT filtered (UDP, unix)";
  s += root ? ", runs as nobody" : ", runs as the grader's user (uid " + std::to_string(geteuid()) + ")";
  return s;
}

std::string missing_for_require(const Status& s) {
  std::string m;
  if (!s.landlock) m += "Landlock (" + s.landlock_missing + ")";
  if (!s.seccomp) m += std::string(m.empty() ? "" : " and ") + "seccomp (" + s.seccomp_missing + ")";
  return m;
}

std::string json_escape(const std::string& in) {
  std::string out;
  for (char c : in) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    out += c;
  }
  return out;
}

// Tries the whole confinement in a child on a throw-away scratch folder, and
// reports what took.
int probe(bool require, bool unix_sockets, bool unix_listen) {
  char dir[] = "/tmp/cudalab-sandbox-probe-XXXXXX";
  char other[] = "/tmp/cudalab-sandbox-probe-XXXXXX";
  if (!mkdtemp(dir) || !mkdtemp(other)) die("mkdtemp: %s", strerror(errno));
  chmod(other, 0777);  // only Landlock stands between the trial and this folder
  int pipefd[2];
  if (pipe(pipefd) != 0) die("pipe: %s", strerror(errno));
  const pid_t pid = fork();
  if (pid < 0) die("fork: %s", strerror(errno));
  if (pid == 0) {
    close(pipefd[0]);
    dup2(pipefd[1], STDERR_FILENO);  // a failure's message is the probe's answer
    Options o;
    o.scratch = dir;
    o.unix_sockets = unix_sockets;
    o.unix_listen = unix_listen;
    const Status s = confine(o, "/bin/sh");
    // Did it take? The scratch folder must be writable, the other folder not;
    // under seccomp, sockets as asked.
    const std::string inside = std::string(dir) + "/x", outside = std::string(other) + "/x";
    const int in = open(inside.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    const int out = open(outside.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    // A unix socket, and its connect to an abstract name nobody holds:
    // ECONNREFUSED where connect is allowed, EACCES where seccomp refuses it.
    const int unix_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    bool connects = false;
    if (unix_fd >= 0) {
      sockaddr_un a{};
      a.sun_family = AF_UNIX;
      const char name[] = "\0cudalab-sandbox-probe-nobody";
      memcpy(a.sun_path, name, sizeof name - 1);
      connects = connect(unix_fd, reinterpret_cast<sockaddr*>(&a),
                         static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + sizeof name - 1)) == 0 ||
                 errno != EACCES;
    }
    const bool udp_ok = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0) >= 0;
    const int sockets = udp_ok ? 2 : unix_fd < 0 ? 0 : connects ? 1 : 3;
    const int expected = unix_sockets ? 1 : unix_listen ? 3 : 0;
    // 0: as expected; else what did not behave (the parent's `troubles`).
    const int trouble = in < 0                             ? 1
                        : s.landlock != 0 && out >= 0      ? 2
                        : s.seccomp && sockets != expected ? 3
                                                           : 0;
    char line[1024];
    const int n = snprintf(line, sizeof line, "%d %d %d %d %d\n%s\n%s\n", s.landlock, s.seccomp, s.dropped,
                           trouble, sockets, s.landlock_missing.c_str(), s.seccomp_missing.c_str());
    (void)!write(pipefd[1], line, static_cast<std::size_t>(n));
    _exit(0);
  }
  close(pipefd[1]);
  std::string out;
  char buf[1024];
  for (ssize_t n; (n = read(pipefd[0], buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(n));
  close(pipefd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  for (const char* d : {dir, other}) {
    unlink((std::string(d) + "/x").c_str());
    rmdir(d);
  }
  Status s;
  int seccomp = 0, dropped = 0, trouble = 0, sockets = 2;
  std::string error;
  if (sscanf(out.c_str(), "%d %d %d %d %d", &s.landlock, &seccomp, &dropped, &trouble, &sockets) != 5) {
    error = "the trial confinement failed (exit status " + std::to_string(WEXITSTATUS(status)) + ")";
    if (!out.empty()) error += ": " + out.substr(0, out.find('\n'));
    s.landlock = 0;
  } else {
    const auto l1 = out.find('\n'), l2 = out.find('\n', l1 + 1);
    s.landlock_missing = out.substr(l1 + 1, l2 - l1 - 1);
    s.seccomp_missing = out.substr(l2 + 1, out.find('\n', l2 + 1) - l2 - 1);
    static const char* const troubles[] = {"", "its scratch folder was not writable",
                                           "Landlock did not keep it out of another folder",
                                           "seccomp did not refuse sockets as asked"};
    if (trouble != 0)
      error = std::string("the trial confinement did not behave: ") +
              troubles[trouble > 0 && trouble < 4 ? trouble : 1];
  }
  s.seccomp = seccomp;
  s.dropped = dropped;
  const char* socket_word = sockets == 0   ? "none"
                            : sockets == 1 ? "unix"
                            : sockets == 3 ? "unix-listen"
                                           : "any";
  std::string text = error.empty() ? summary(s.landlock, s.seccomp, s.dropped, s.landlock_missing,
                                             s.seccomp_missing, socket_word)
                                   : "NOT CONFINED: " + error;
  printf("{\"landlock\": %d, \"seccomp\": %s, \"sockets\": \"%s\", \"drops_to\": %s, \"summary\": \"%s\"}\n",
         error.empty() ? s.landlock : 0, s.seccomp ? "true" : "false", socket_word,
         s.dropped ? "\"nobody\"" : "null", json_escape(text).c_str());
  fflush(stdout);
  if (!error.empty()) return kSetupFailed;
  if (require) {
    if (const std::string m = missing_for_require(s); !m.empty()) {
      fprintf(stderr, "cudalab-sandbox: required isolation missing: %s\n", m.c_str());
      return kSetupFailed;
    }
  }
  return 0;
}

[[noreturn]] void usage(const char* msg) {
  fprintf(
      stderr,
      "cudalab-sandbox: %s\n"
      "usage: cudalab-sandbox [--scratch DIR] [--read PATH]... [--exec PATH]... [--write PATH]...\n"
      "                       [--keep-fd N]... [--allow-fork] [--unix-sockets | --unix-listen] [--build]\n"
      "                       [--require] -- PROGRAM ARGS...\n"
      "       cudalab-sandbox --probe [--unix-sockets | --unix-listen] [--require]\n",
      msg);
  _exit(kSetupFailed);
}

std::string absolute(const std::string& p) {
  if (p.empty() || p[0] == '/') return p;
  char cwd[4096];
  if (!getcwd(cwd, sizeof cwd)) die("getcwd: %s", strerror(errno));
  return std::string(cwd) + "/" + p;
}

Options parse(int argc, char** argv) {
  Options o;
  int i = 1;
  auto value = [&](const char* opt) -> std::string {
    if (i + 1 >= argc) usage((std::string(opt) + " needs a value").c_str());
    return argv[++i];
  };
  for (; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a == "--scratch")
      o.scratch = absolute(value("--scratch"));
    else if (a == "--read")
      o.read.push_back(absolute(value("--read")));
    else if (a == "--exec")
      o.exec.push_back(absolute(value("--exec")));
    else if (a == "--write")
      o.write.push_back(absolute(value("--write")));
    else if (a == "--keep-fd") {
      const std::string v = value("--keep-fd");
      char* end = nullptr;
      const long fd = strtol(v.c_str(), &end, 10);
      if (*end || fd < 0 || fd > 1 << 20) usage(("--keep-fd " + v + ": not a descriptor number").c_str());
      o.keep_fds.push_back(static_cast<int>(fd));
    } else if (a == "--allow-fork")
      o.allow_fork = true;
    else if (a == "--unix-sockets")
      o.unix_sockets = true;
    else if (a == "--unix-listen")
      o.unix_listen = true;
    else if (a == "--build")
      o.build = true;
    else if (a == "--require")
      o.require = true;
    else if (a == "--probe")
      o.probe = true;
    else if (a == "--help" || a == "-h")
      usage("runs PROGRAM confined (see the top of grader/run/sandbox_main.cpp)");
    else
      usage(("unknown option " + a).c_str());
  }
  for (; i < argc; ++i) o.command.push_back(argv[i]);
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  if (o.probe) return probe(o.require, o.unix_sockets, o.unix_listen);
  if (o.command.empty()) usage("no program to run");
  // Descriptors first: nothing of ours but --keep-fd and 0-2 may reach PROGRAM.
  close_other_fds(o.keep_fds);
  const std::string program = absolute(resolve_program(o.command[0]));
  if (access(program.c_str(), F_OK) != 0) die("cannot run %s: %s", o.command[0].c_str(), strerror(errno));
  if (!o.scratch.empty() && !is_dir(o.scratch))
    die("the scratch folder %s is not a folder", o.scratch.c_str());

  const Status s = confine(o, program);
  if (o.require)
    if (const std::string m = missing_for_require(s); !m.empty())
      die("required isolation missing: %s", m.c_str());

  // A minimal environment is the grader's to give; home and temporary files
  // go to the scratch folder, which is also a check's working directory (a
  // build keeps the one it was started in: its commands name files relative
  // to the build folder).
  if (!o.scratch.empty()) {
    if (!o.build && chdir(o.scratch.c_str()) != 0)
      die("cannot enter %s: %s", o.scratch.c_str(), strerror(errno));
    setenv("HOME", o.scratch.c_str(), 1);
    setenv("TMPDIR", o.scratch.c_str(), 1);
  } else {
    unsetenv("HOME");
    unsetenv("TMPDIR");
  }
  std::vector<char*> args;
  for (const auto& a : o.command) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  execve(program.c_str(), args.data(), environ);
  const int err = errno;
  fprintf(stderr, "cudalab-sandbox: cannot run %s: %s\n", program.c_str(), strerror(err));
  return err == ENOENT ? 127 : 126;
}
