// `tessera launch -n N [--timeout S] -- PROGRAM ARGS...`: starts N local processes of PROGRAM
// (torchrun's role) with the environment init_process_group reads (RANK, LOCAL_RANK,
// WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR, TESSERA_INIT_METHOD=file://<a private directory>,
// and OMP_NUM_THREADS = cores / N unless set),
// forwards their output line by line with a "[rank i] " prefix, and when one rank fails (exits
// non-zero or dies of a signal) stops the others (SIGTERM, then SIGKILL after 5 s) and exits
// with that rank's status (128 + N for signal N). The rendezvous directory is removed on every
// exit. Several machines: the same command on each with --nnodes K --node-rank R --master
// ADDR:PORT (ranks R*N .. R*N+N-1; node 0's rank 0 serves the tcp:// rendezvous at ADDR:PORT).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "conformance_report.hpp"

extern char** environ;

namespace tessera_cli {

namespace {

struct Rank {
  pid_t pid = -1;
  int out_fd = -1;    // the read end of its stdout+stderr pipe
  std::string partial;  // output not yet ending in a newline
  bool exited = false;
  int status = 0;  // exit code, or 128 + signal
};

double now_s() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

void emit(int rank, const std::string& line) { std::printf("[rank %d] %s\n", rank, line.c_str()); }

void drain(Rank& r, int rank, bool final) {
  char buf[8192];
  for (;;) {
    ssize_t n = ::read(r.out_fd, buf, sizeof(buf));
    if (n > 0) {
      r.partial.append(buf, static_cast<size_t>(n));
      size_t nl;
      while ((nl = r.partial.find('\n')) != std::string::npos) {
        emit(rank, r.partial.substr(0, nl));
        r.partial.erase(0, nl + 1);
      }
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    break;  // EAGAIN (nothing more now) or EOF
  }
  if (final && !r.partial.empty()) {
    emit(rank, r.partial);
    r.partial.clear();
  }
  std::fflush(stdout);
}

}  // namespace

int cmd_launch(int argc, char** argv) {
  // Everything after "--" is the program and its arguments.
  int dashes = -1;
  for (int i = 2; i < argc; ++i)
    if (std::string(argv[i]) == "--") {
      dashes = i;
      break;
    }
  std::vector<OptionSpec> specs = {
      {"-n", true, "number of processes (ranks) on this machine"},
      {"--nproc-per-node", true, "the same as -n"},
      {"--timeout", true, "seconds the whole job may run before every rank is stopped (default: no limit)"},
      {"--nnodes", true, "machines in the job (default 1); more need --node-rank and --master"},
      {"--node-rank", true, "this machine's number, 0..nnodes-1"},
      {"--master", true, "ADDR:PORT where node 0's rank 0 serves the rendezvous (tcp://)"},
      {"--help", false, "this help"},
  };
  Args args;
  if (!parse_args("launch", dashes < 0 ? argc : dashes, argv, 2, specs, &args)) return kExitUsage;
  if (args.has("--help") || dashes < 0 || dashes + 1 >= argc) {
    std::FILE* to = args.has("--help") ? stdout : stderr;
    std::fprintf(to,
                 "usage: tessera launch -n N [--nnodes K --node-rank R --master ADDR:PORT] -- PROGRAM [ARGS...]\n\n"
                 "Starts N processes of PROGRAM on this machine with RANK, LOCAL_RANK, WORLD_SIZE,\n"
                 "LOCAL_WORLD_SIZE, MASTER_ADDR and TESSERA_INIT_METHOD set (init_process_group reads\n"
                 "them), prefixes their output with [rank i], and stops them all when one fails, exiting\n"
                 "with its status. Exit status: 0 all ranks succeeded, the failing rank's status\n"
                 "otherwise, 2 usage, 4 could not start.\n\n");
    print_options(specs);
    return args.has("--help") ? kExitOk : kExitUsage;
  }
  if (!args.positional.empty()) {
    std::fprintf(stderr, "tessera launch: unexpected '%s' before '--'\n", args.positional[0].c_str());
    return kExitUsage;
  }
  const std::string nval = args.values.count("-n") ? args.value("-n") : args.value("--nproc-per-node");
  char* end = nullptr;
  long n = std::strtol(nval.c_str(), &end, 10);
  if (nval.empty() || *end || n < 1 || n > 256) {
    std::fprintf(stderr, "tessera launch: -n needs a number of processes from 1 to 256, got '%s'\n", nval.c_str());
    return kExitUsage;
  }
  long nnodes = 1, node_rank = 0;
  std::string init_method;  // "" = a private file:// directory (one machine)
  if (args.values.count("--nnodes")) {
    nnodes = std::strtol(args.value("--nnodes").c_str(), &end, 10);
    if (*end || nnodes < 1) {
      std::fprintf(stderr, "tessera launch: --nnodes needs a positive number\n");
      return kExitUsage;
    }
  }
  if (nnodes > 1 || args.values.count("--master")) {
    node_rank = std::strtol(args.value("--node-rank", "x").c_str(), &end, 10);
    if (*end || node_rank < 0 || node_rank >= nnodes || !args.values.count("--master")) {
      std::fprintf(stderr,
                   "tessera launch: a job over %ld machines needs --node-rank (0..%ld) and --master ADDR:PORT "
                   "(node 0's address, reachable from every machine)\n",
                   nnodes, nnodes - 1);
      return kExitUsage;
    }
    init_method = "tcp://" + args.value("--master");
  }
  double limit = 0;
  if (args.values.count("--timeout")) {
    limit = std::strtod(args.value("--timeout").c_str(), &end);
    if (*end || !(limit > 0)) {
      std::fprintf(stderr, "tessera launch: --timeout needs a positive number of seconds\n");
      return kExitUsage;
    }
  }

  TempDir rendezvous;
  if (!rendezvous.create("tessera-launch")) {
    std::fprintf(stderr, "tessera launch: cannot create a rendezvous directory: %s\n", std::strerror(errno));
    return kExitInternal;
  }
  // SIGINT/SIGTERM to the launcher: the ranks get SIGTERM too (they are in our process group
  // only if the shell put them there; we forward explicitly below by polling this flag).
  static volatile sig_atomic_t stop_requested = 0;
  struct sigaction sa;
  std::memset(&sa, 0, sizeof(sa));
  sa.sa_handler = [](int) { stop_requested = 1; };
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);

  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  const long threads_each = std::max(1L, (cores > 0 ? cores : 1) / n);
  std::vector<Rank> ranks(static_cast<size_t>(n));
  for (long r = 0; r < n; ++r) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
      std::fprintf(stderr, "tessera launch: pipe: %s\n", std::strerror(errno));
      return kExitInternal;
    }
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e) {
      std::string kv = *e;
      std::string key = kv.substr(0, kv.find('='));
      if (key == "RANK" || key == "LOCAL_RANK" || key == "WORLD_SIZE" || key == "LOCAL_WORLD_SIZE" ||
          key == "MASTER_ADDR" || key == "TESSERA_INIT_METHOD")
        continue;
      env.push_back(kv);
    }
    env.push_back("RANK=" + std::to_string(node_rank * n + r));
    env.push_back("LOCAL_RANK=" + std::to_string(r));
    env.push_back("WORLD_SIZE=" + std::to_string(nnodes * n));
    env.push_back("LOCAL_WORLD_SIZE=" + std::to_string(n));
    env.push_back("MASTER_ADDR=" + (init_method.empty() ? std::string("127.0.0.1")
                                                        : args.value("--master").substr(0, args.value("--master").rfind(':'))));
    env.push_back("TESSERA_INIT_METHOD=" + (init_method.empty() ? "file://" + rendezvous.path() : init_method));
    // N processes share this machine's cores: as torchrun, give each its share of OpenMP
    // threads unless the caller chose (N processes x all cores each would oversubscribe).
    if (!std::getenv("OMP_NUM_THREADS")) env.push_back("OMP_NUM_THREADS=" + std::to_string(threads_each));
    std::vector<char*> envp, av;
    for (std::string& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    for (int i = dashes + 1; i < argc; ++i) av.push_back(argv[i]);
    av.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
    pid_t pid = -1;
    int rc = posix_spawnp(&pid, av[0], &fa, nullptr, av.data(), envp.data());
    posix_spawn_file_actions_destroy(&fa);
    ::close(fds[1]);
    if (rc != 0) {
      std::fprintf(stderr, "tessera launch: cannot start %s: %s\n", av[0], std::strerror(rc));
      ::close(fds[0]);
      for (Rank& x : ranks)
        if (x.pid > 0) kill(x.pid, SIGKILL);
      for (Rank& x : ranks)
        if (x.pid > 0) waitpid(x.pid, nullptr, 0);
      return kExitInternal;
    }
    fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);
    ranks[static_cast<size_t>(r)].pid = pid;
    ranks[static_cast<size_t>(r)].out_fd = fds[0];
  }

  const double start = now_s();
  int failed_rank = -1, result = kExitOk;
  double kill_at = 0;  // when the stragglers get SIGKILL after a SIGTERM
  for (;;) {
    std::vector<struct pollfd> pfds;
    for (const Rank& r : ranks)
      if (r.out_fd >= 0) pfds.push_back({r.out_fd, POLLIN, 0});
    if (!pfds.empty()) poll(pfds.data(), pfds.size(), 100);
    size_t running = 0;
    for (size_t i = 0; i < ranks.size(); ++i) {
      Rank& r = ranks[i];
      if (r.out_fd >= 0) drain(r, static_cast<int>(i), false);
      if (!r.exited) {
        int status = 0;
        if (waitpid(r.pid, &status, WNOHANG) == r.pid) {
          r.exited = true;
          r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
          drain(r, static_cast<int>(i), true);
          ::close(r.out_fd);
          r.out_fd = -1;
          if (r.status != 0 && failed_rank < 0) {
            failed_rank = static_cast<int>(i);
            result = r.status;
            std::fprintf(stderr, "tessera launch: rank %zu %s %d; stopping the other ranks\n", i,
                         WIFSIGNALED(status) ? "died of signal" : "exited with status",
                         WIFSIGNALED(status) ? WTERMSIG(status) : r.status);
          }
        } else {
          ++running;
        }
      }
    }
    if (running == 0) break;
    const bool over_time = limit > 0 && now_s() - start > limit;
    if ((failed_rank >= 0 || stop_requested || over_time) && kill_at == 0) {
      if (over_time) {
        std::fprintf(stderr, "tessera launch: the job ran past --timeout %g s; stopping every rank\n", limit);
        result = 124;
      }
      if (stop_requested && failed_rank < 0 && !over_time) result = 130;
      for (Rank& r : ranks)
        if (!r.exited) kill(r.pid, SIGTERM);
      kill_at = now_s() + 5;
    }
    if (kill_at > 0 && now_s() > kill_at)
      for (Rank& r : ranks)
        if (!r.exited) kill(r.pid, SIGKILL);
  }
  return result;
}

}  // namespace tessera_cli
