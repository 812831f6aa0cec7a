// What a hostile check would try, one action per run, for test_sandbox.cpp:
//   sandbox-helper ACTION [ARG]
// prints "ok" (exit 0) or the error's name and text (exit 1).
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

namespace {
int report(bool ok) {
  if (ok) {
    printf("ok\n");
    return 0;
  }
  const int e = errno;
  printf("error %d %s\n", e, strerror(e));
  return 1;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const std::string action = argv[1];
  const char* arg = argc > 2 ? argv[2] : "";
  if (action == "write") {  // create a file
    const int fd = open(arg, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    return report(fd >= 0 && write(fd, "forged\n", 7) == 7);
  }
  if (action == "mkdir") return report(mkdir(arg, 0755) == 0);
  if (action == "append") {  // to an existing file
    const int fd = open(arg, O_WRONLY | O_APPEND);
    return report(fd >= 0 && write(fd, "forged\n", 7) == 7);
  }
  if (action == "read") {
    const int fd = open(arg, O_RDONLY);
    char buf[64];
    return report(fd >= 0 && read(fd, buf, sizeof buf) >= 0);
  }
  if (action == "cat") {  // print the file
    const int fd = open(arg, O_RDONLY);
    if (fd < 0) return report(false);
    char buf[4096];
    for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) fwrite(buf, 1, static_cast<size_t>(n), stdout);
    return 0;
  }
  if (action == "list") {  // a folder's entries
    const int fd = open(arg, O_RDONLY | O_DIRECTORY);
    return report(fd >= 0);
  }
  if (action == "exec") {
    execl(arg, arg, "--version", static_cast<char*>(nullptr));
    return report(false);
  }
  if (action == "fd-write") {  // to an inherited descriptor
    const int fd = atoi(arg);
    return report(write(fd, "record\n", 7) == 7);
  }
  if (action == "fd-open") {  // whether a descriptor is open
    return report(fcntl(atoi(arg), F_GETFD) >= 0);
  }
  if (action == "connect") {  // TCP to 127.0.0.1:PORT
    const int s = socket(AF_INET, SOCK_STREAM, 0);
    if (s < 0) return report(false);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(atoi(arg)));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return report(connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  }
  if (action == "udp") return report(socket(AF_INET, SOCK_DGRAM, 0) >= 0);
  if (action == "unix") return report(socket(AF_UNIX, SOCK_STREAM, 0) >= 0);
  if (action == "unix-dgram") return report(socket(AF_UNIX, SOCK_DGRAM, 0) >= 0);
  if (action ==
      "bind-abstract") {  // what the CUDA runtime does: a seqpacket socket, bound to an abstract name
    const int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (s < 0) return report(false);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    const int n =
        snprintf(a.sun_path + 1, sizeof a.sun_path - 1, "cudalab-helper-%d", static_cast<int>(getpid()));
    const auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + static_cast<size_t>(n));
    return report(bind(s, reinterpret_cast<sockaddr*>(&a), len) == 0 && listen(s, 1) == 0);
  }
  if (action == "connect-unix") {  // to the pathname socket ARG
    const int s = socket(AF_UNIX, SOCK_STREAM, 0);
    if (s < 0) return report(false);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    snprintf(a.sun_path, sizeof a.sun_path, "%s", arg);
    return report(connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  }
  if (action == "socketpair" || action == "socketpair-dgram") {  // a connected pair, one byte through it
    int sv[2];
    if (socketpair(AF_UNIX, action == "socketpair" ? SOCK_STREAM : SOCK_DGRAM, 0, sv) != 0)
      return report(false);
    char c = 0;
    return report(write(sv[0], "x", 1) == 1 && read(sv[1], &c, 1) == 1 && c == 'x');
  }
  if (action == "spawn") {  // fork, exec ARG, wait: its exit code, else the exec's errno
    const pid_t p = fork();
    if (p < 0) return report(false);
    if (p == 0) {
      execl(arg, arg, static_cast<char*>(nullptr));
      _exit(errno & 0xff);
    }
    int status = 0;
    if (waitpid(p, &status, 0) != p) return report(false);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      errno = WIFEXITED(status) ? WEXITSTATUS(status) : ECHILD;
      return report(false);
    }
    return report(true);
  }
  if (action == "setpgid-stays") {  // a child's setpgid(0, 0) says yes, but its group is the same
    // (in a child: this process leads its group already, where it is a no-op)
    const pid_t group = getpgrp();
    const pid_t p = fork();
    if (p < 0) return report(false);
    if (p == 0) {
      if (setpgid(0, 0) != 0) _exit(errno & 0xff);
      _exit(getpgrp() == group ? 0 : 255);
    }
    int status = 0;
    if (waitpid(p, &status, 0) != p || !WIFEXITED(status)) return report(false);
    if (WEXITSTATUS(status) == 255) {
      printf("error 0 the child left its process group\n");
      return 1;
    }
    errno = WEXITSTATUS(status);
    return report(errno == 0);
  }
  if (action == "chmod-suid" || action == "chmod") {  // create ARG, then chmod 04755 (0755)
    const int fd = open(arg, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return report(false);
    close(fd);
    return report(chmod(arg, action == "chmod" ? 0755 : 04755) == 0);
  }
  if (action == "chown") return report(chown(arg, geteuid(), getegid()) == 0);  // to its own owner
  if (action == "fork") {
    const pid_t p = fork();
    if (p == 0) _exit(0);
    if (p > 0) waitpid(p, nullptr, 0);
    return report(p > 0);
  }
  if (action == "thread-kill-self") return report(kill(getpid(), 0) == 0 && kill(0, 0) == 0);
  if (action == "kill") return report(kill(atoi(arg), SIGCONT) == 0);
  if (action == "setsid") return report(setsid() >= 0);
  if (action == "setpgid") return report(setpgid(0, 0) == 0);
  if (action == "ptrace") return report(ptrace(PTRACE_ATTACH, atoi(arg), nullptr, nullptr) == 0);
  if (action == "whoami") {
    printf("uid %d gid %d\n", static_cast<int>(getuid()), static_cast<int>(getgid()));
    return 0;
  }
  if (action == "env") {
    const char* v = getenv(arg);
    printf("%s\n", v ? v : "(unset)");
    return 0;
  }
  if (action == "cwd") {
    char buf[4096];
    printf("%s\n", getcwd(buf, sizeof buf) ? buf : "(none)");
    return 0;
  }
  printf("unknown action %s\n", action.c_str());
  return 2;
}
