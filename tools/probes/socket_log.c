/* socket_log.c: which sockets does a CUDA check open? An LD_PRELOAD library
 * that logs every socket(), socketpair(), connect() and bind() call (and
 * sendto()/sendmsg() that name an address) to stderr, one line each prefixed
 * "socket_log:", then calls the real function. For the GPU host: by default
 * cudalab-sandbox refuses every socket (grader/run/sandbox_main.cpp), and
 * SandboxSpec::unix_sockets (--unix-sockets) lets a run have AF_UNIX ones;
 * this tells which runs (the CUDA runtime, compute-sanitizer) need them.
 *
 * Build (no other file needed):
 *   gcc -shared -fPIC -O2 -Wall -Wextra -o socket_log.so tools/probes/socket_log.c -ldl
 *
 * Run, from the repository root, after `meson compile -C build`:
 *   # 1. unconfined: what the CUDA runtime asks for
 *   LD_PRELOAD=$PWD/socket_log.so ./build/labs/03_tiling-tests square 2>&1 | grep socket_log:
 *   # 2. under compute-sanitizer: the sanitizer's own calls and its target's
 *   #    (the preload is inherited through the environment; each line names
 *   #    the process, so both show; if the target's are missing, the sanitizer
 *   #    dropped LD_PRELOAD, and strace -f -e trace=%network tells instead)
 *   LD_PRELOAD=$PWD/socket_log.so compute-sanitizer --tool memcheck \
 *       ./build/labs/03_tiling-tests square 2>&1 | grep socket_log:
 *   # 3. confined as the grader confines it (no sockets): what is refused,
 *   #    and whether the check still passes (the library must be --read)
 *   S=$(mktemp -d); LD_PRELOAD=$PWD/socket_log.so ./build/grader/cudalab-sandbox \
 *       --scratch $S --read $PWD/socket_log.so --read $PWD/labs -- \
 *       $PWD/build/labs/03_tiling-tests square; echo "exit $?"
 *   #    under the sanitizer as the grader runs it (grader/run/checks.cpp: the
 *   #    sanitizer's own program, its folder and the test binary executable):
 *   CS=$(dirname $(readlink -f $(which compute-sanitizer)))/../compute-sanitizer
 *   LD_PRELOAD=$PWD/socket_log.so ./build/grader/cudalab-sandbox --scratch $S \
 *       --read $PWD/socket_log.so --read $PWD/labs --allow-fork --exec $CS \
 *       --exec $PWD/build/labs/03_tiling-tests -- $CS/compute-sanitizer \
 *       --tool memcheck $PWD/build/labs/03_tiling-tests square; echo "exit $?"
 *   #    then both again with --unix-listen, and with --unix-sockets, after
 *   #    --scratch $S: a run that fails without a flag and passes with it
 *   #    is one that needs the flag.
 *
 * Seen on an H200 (kernel 6.18.44-fc-v657-gpu, CUDA 13.0, 2026-11-26), a
 * cudaMalloc + kernel + cudaMemcpy program:
 *   - the runtime: socket(AF_UNIX, SOCK_SEQPACKET|SOCK_CLOEXEC), connect to
 *     AF_UNIX path /tmp/nvidia-mps/control (ENOENT: no MPS daemon), then a
 *     second seqpacket socket bound to abstract @cuda-uvmfd-4026531836-PID.
 *     No sockets at all: cudaMalloc fails, "OS call failed or operation not
 *     supported on this OS". --unix-listen (connect refused, EACCES): works.
 *   - compute-sanitizer: the target binds a stream socket to abstract
 *     @nv_target_process_PID; the front end connects to it, retrying until
 *     its launch timeout, then waits for the target for ever. So the front
 *     end needs --unix-sockets; its target, run by a nested
 *     `cudalab-sandbox ... --unix-listen -- BINARY`, need not (memcheck
 *     found a planted out-of-bounds write so).
 *   - nothing touched /run or /var/run/nvidia-persistenced (absent there).
 *
 * A line: "socket_log: pid 1234 (03_tiling-tests) connect(fd 5, AF_UNIX
 * path /run/nvidia-persistenced/socket) = -1 errno 13 (Permission denied)".
 * An abstract unix name is printed as "abstract @name" (its NUL bytes as
 * "\0"). Calls made with syscall(2) directly, bypassing libc, are not seen:
 * strace -f -e trace=%network is the cross-check.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <sys/un.h>
#include <unistd.h>

static const char* family_name(int family) {
  switch (family) {
    case AF_UNIX: return "AF_UNIX";
    case AF_INET: return "AF_INET";
    case AF_INET6: return "AF_INET6";
    case AF_NETLINK: return "AF_NETLINK";
    case AF_PACKET: return "AF_PACKET";
    case AF_UNSPEC: return "AF_UNSPEC";
    default: return NULL;
  }
}

static void type_name(int type, char* out, size_t size) {
  const char* base;
  switch (type & 0xf) {
    case SOCK_STREAM: base = "SOCK_STREAM"; break;
    case SOCK_DGRAM: base = "SOCK_DGRAM"; break;
    case SOCK_SEQPACKET: base = "SOCK_SEQPACKET"; break;
    case SOCK_RAW: base = "SOCK_RAW"; break;
    default: base = NULL;
  }
  int n = base ? snprintf(out, size, "%s", base) : snprintf(out, size, "type %d", type & 0xf);
  if (n < 0 || (size_t)n >= size) return;
  if (type & SOCK_NONBLOCK) n += snprintf(out + n, size - (size_t)n, "|SOCK_NONBLOCK");
  if (n >= 0 && (size_t)n < size && (type & SOCK_CLOEXEC)) snprintf(out + n, size - (size_t)n, "|SOCK_CLOEXEC");
}

/* One line to stderr with write(2): no stdio locks, errno preserved. */
static void say(const char* fmt, ...) {
  const int saved = errno;
  char line[1024];
  int n = snprintf(line, sizeof line, "socket_log: pid %d (%s) ", (int)getpid(),
                   program_invocation_short_name ? program_invocation_short_name : "?");
  if (n < 0) n = 0;
  va_list ap;
  va_start(ap, fmt);
  const int m = vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
  va_end(ap);
  size_t len = (size_t)n + (m > 0 ? (size_t)m : 0);
  if (len > sizeof line - 2) len = sizeof line - 2;
  line[len++] = '\n';
  ssize_t w = write(STDERR_FILENO, line, len);
  (void)w;
  errno = saved;
}

/* The address, in words: family, and for AF_UNIX the path or abstract name. */
static void describe(const struct sockaddr* addr, socklen_t len, char* out, size_t size) {
  if (!addr || len < sizeof(sa_family_t)) {
    snprintf(out, size, "no address");
    return;
  }
  const char* fam = family_name(addr->sa_family);
  if (addr->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
    const struct sockaddr_in* in = (const struct sockaddr_in*)addr;
    char ip[INET_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET, &in->sin_addr, ip, sizeof ip);
    snprintf(out, size, "AF_INET %s port %u", ip, ntohs(in->sin_port));
    return;
  }
  if (addr->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
    const struct sockaddr_in6* in6 = (const struct sockaddr_in6*)addr;
    char ip[INET6_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof ip);
    snprintf(out, size, "AF_INET6 %s port %u", ip, ntohs(in6->sin6_port));
    return;
  }
  if (addr->sa_family != AF_UNIX) {
    if (fam)
      snprintf(out, size, "%s", fam);
    else
      snprintf(out, size, "family %d", addr->sa_family);
    return;
  }
  const struct sockaddr_un* un = (const struct sockaddr_un*)addr;
  const size_t off = offsetof(struct sockaddr_un, sun_path);
  size_t n = len > off ? (size_t)len - off : 0;
  if (n > sizeof un->sun_path) n = sizeof un->sun_path;
  if (n == 0) {
    snprintf(out, size, "AF_UNIX unnamed (autobind)");
    return;
  }
  if (un->sun_path[0] != '\0') {
    snprintf(out, size, "AF_UNIX path %.*s", (int)strnlen(un->sun_path, n), un->sun_path);
    return;
  }
  /* Abstract: sun_path[0] is NUL, the name is the rest of `len`. */
  size_t k = (size_t)snprintf(out, size, "AF_UNIX abstract @");
  for (size_t i = 1; i < n && k + 3 < size; ++i) {
    const char c = un->sun_path[i];
    if (c == '\0') {
      out[k++] = '\\';
      out[k++] = '0';
    } else {
      out[k++] = (c >= 32 && c < 127) ? c : '?';
    }
  }
  out[k < size ? k : size - 1] = '\0';
}

static void result(int rc, int err, char* out, size_t size) {
  if (rc < 0)
    snprintf(out, size, "-1 errno %d (%s)", err, strerror(err));
  else
    snprintf(out, size, "%d", rc);
}

static void* real(const char* name) {
  void* f = dlsym(RTLD_NEXT, name);
  if (!f) say("cannot find the real %s: %s", name, dlerror());
  return f;
}

#define REAL(ret, name, ...)                                 \
  static ret (*real_##name)(__VA_ARGS__);                    \
  if (!real_##name) real_##name = (ret(*)(__VA_ARGS__))real(#name); \
  if (!real_##name) {                                        \
    errno = ENOSYS;                                          \
    return -1;                                               \
  }

int socket(int domain, int type, int protocol) {
  REAL(int, socket, int, int, int);
  const int rc = real_socket(domain, type, protocol);
  const int err = errno;
  char t[96], r[96], f[32];
  type_name(type, t, sizeof t);
  result(rc, err, r, sizeof r);
  const char* fam = family_name(domain);
  if (!fam) snprintf(f, sizeof f, "family %d", domain);
  say("socket(%s, %s, %d) = %s", fam ? fam : f, t, protocol, r);
  errno = err;
  return rc;
}

int socketpair(int domain, int type, int protocol, int sv[2]) {
  REAL(int, socketpair, int, int, int, int*);
  const int rc = real_socketpair(domain, type, protocol, sv);
  const int err = errno;
  char t[96], r[96], f[32];
  type_name(type, t, sizeof t);
  result(rc, err, r, sizeof r);
  const char* fam = family_name(domain);
  if (!fam) snprintf(f, sizeof f, "family %d", domain);
  if (rc == 0)
    say("socketpair(%s, %s, %d) = 0 (fds %d %d)", fam ? fam : f, t, protocol, sv[0], sv[1]);
  else
    say("socketpair(%s, %s, %d) = %s", fam ? fam : f, t, protocol, r);
  errno = err;
  return rc;
}

int connect(int fd, const struct sockaddr* addr, socklen_t len) {
  REAL(int, connect, int, const struct sockaddr*, socklen_t);
  const int rc = real_connect(fd, addr, len);
  const int err = errno;
  char a[256], r[96];
  describe(addr, len, a, sizeof a);
  result(rc, err, r, sizeof r);
  say("connect(fd %d, %s) = %s", fd, a, r);
  errno = err;
  return rc;
}

int bind(int fd, const struct sockaddr* addr, socklen_t len) {
  REAL(int, bind, int, const struct sockaddr*, socklen_t);
  const int rc = real_bind(fd, addr, len);
  const int err = errno;
  char a[256], r[96];
  describe(addr, len, a, sizeof a);
  result(rc, err, r, sizeof r);
  say("bind(fd %d, %s) = %s", fd, a, r);
  errno = err;
  return rc;
}

/* Datagrams sent to a named address (the way around connect()); the
 * ordinary send on a connected socket (no address) is not logged. */
ssize_t sendto(int fd, const void* buf, size_t n, int flags, const struct sockaddr* addr, socklen_t len) {
  REAL(ssize_t, sendto, int, const void*, size_t, int, const struct sockaddr*, socklen_t);
  const ssize_t rc = real_sendto(fd, buf, n, flags, addr, len);
  if (addr) {
    const int err = errno;
    char a[256], r[96];
    describe(addr, len, a, sizeof a);
    result(rc < 0 ? -1 : (int)rc, err, r, sizeof r);
    say("sendto(fd %d, %zu bytes, %s) = %s", fd, n, a, r);
    errno = err;
  }
  return rc;
}

ssize_t sendmsg(int fd, const struct msghdr* msg, int flags) {
  REAL(ssize_t, sendmsg, int, const struct msghdr*, int);
  const ssize_t rc = real_sendmsg(fd, msg, flags);
  if (msg && msg->msg_name) {
    const int err = errno;
    char a[256], r[96];
    describe((const struct sockaddr*)msg->msg_name, msg->msg_namelen, a, sizeof a);
    result(rc < 0 ? -1 : (int)rc, err, r, sizeof r);
    say("sendmsg(fd %d, %s) = %s", fd, a, r);
    errno = err;
  }
  return rc;
}

__attribute__((constructor)) static void hello(void) {
  say("loaded");
}
