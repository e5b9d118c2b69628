// Runs a function in a forked child: its result comes back through a pipe, a crash comes back
// as the signal that ended it, and a hang is ended with SIGKILL after the time limit. The
// parent never executes the function, so nothing the child loads can take the parent down.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "cli.hpp"
#include "conformance_report.hpp"

namespace tessera_cli {

namespace {

double now_s() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

void record_status(int status, ChildOutcome* out) {
  if (WIFSIGNALED(status)) {
    out->signaled = true;
    out->signal = WTERMSIG(status);
  } else if (WIFEXITED(status)) {
    out->exit_code = WEXITSTATUS(status);
  }
}

}  // namespace

std::string signal_name(int sig) {
  switch (sig) {
    case SIGSEGV:
      return "SIGSEGV";
    case SIGBUS:
      return "SIGBUS";
    case SIGILL:
      return "SIGILL";
    case SIGFPE:
      return "SIGFPE";
    case SIGABRT:
      return "SIGABRT";
    case SIGTRAP:
      return "SIGTRAP";
    case SIGSYS:
      return "SIGSYS";
    case SIGKILL:
      return "SIGKILL";
    case SIGTERM:
      return "SIGTERM";
    case SIGINT:
      return "SIGINT";
    case SIGQUIT:
      return "SIGQUIT";
    case SIGHUP:
      return "SIGHUP";
    case SIGPIPE:
      return "SIGPIPE";
    case SIGALRM:
      return "SIGALRM";
    case SIGXCPU:
      return "SIGXCPU";
    case SIGXFSZ:
      return "SIGXFSZ";
    case SIGUSR1:
      return "SIGUSR1";
    case SIGUSR2:
      return "SIGUSR2";
    default:
      return "signal " + std::to_string(sig);
  }
}

bool write_all(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

ChildOutcome run_in_child_fn(int (*body)(int fd, void* ctx), void* ctx, double timeout_s, bool idle) {
  ChildOutcome out;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    out.error = std::string("pipe: ") + std::strerror(errno);
    return out;
  }
  std::fflush(nullptr);  // or the child would print the parent's buffered output again
  pid_t pid = fork();
  if (pid < 0) {
    out.error = std::string("fork: ") + std::strerror(errno);
    ::close(fds[0]);
    ::close(fds[1]);
    return out;
  }
  if (pid == 0) {
    ::close(fds[0]);
    forget_cleanup_in_child();  // a crash here must not remove the parent's temporary files
    // A crash is expected here sometimes: no core dumps, and a SIGPIPE (parent gone) ends us.
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    signal(SIGPIPE, SIG_DFL);
    int rc = kExitInternal;
    try {
      rc = body(fds[1], ctx);
    } catch (...) {
      rc = kExitInternal;
    }
    std::fflush(nullptr);
    ::close(fds[1]);
    _exit(rc);  // no atexit handlers or static destructors of the parent's image
  }
  out.started = true;
  ::close(fds[1]);
  double deadline = now_s() + timeout_s;
  bool eof = false;
  bool reaped = false;
  char buf[65536];
  while (!eof) {
    double left = deadline - now_s();
    if (left <= 0) break;
    struct pollfd p = {fds[0], POLLIN, 0};
    int ms = static_cast<int>(left * 1000.0) + 1;
    int r = poll(&p, 1, ms);
    if (r < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (r == 0) continue;  // the loop re-checks the deadline
    ssize_t n = ::read(fds[0], buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      eof = true;
    } else if (n == 0) {
      eof = true;
    } else {
      out.output.append(buf, static_cast<size_t>(n));
      if (idle) deadline = now_s() + timeout_s;
    }
  }
  ::close(fds[0]);
  // The pipe closed (the child exited, or closed it) or the time ran out: reap within the
  // remaining time, else kill.
  while (!reaped) {
    int status = 0;
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) {
      record_status(status, &out);
      reaped = true;
      break;
    }
    if (w < 0 && errno != EINTR) {
      out.error = std::string("waitpid: ") + std::strerror(errno);
      break;
    }
    if (now_s() >= deadline) {
      kill(pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      // It may have finished on its own just before the kill landed.
      if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
        out.timed_out = true;
      else
        record_status(status, &out);
      reaped = true;
      break;
    }
    struct timespec ts = {0, 5 * 1000 * 1000};
    nanosleep(&ts, nullptr);
  }
  return out;
}

}  // namespace tessera_cli
