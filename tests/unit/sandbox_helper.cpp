// What a hostile check would try, one action per run, for test_sandbox.cpp:
//   sandbox-helper ACTION [ARG]
// prints "ok" (exit 0) or the error's name and text (exit 1).
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
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
