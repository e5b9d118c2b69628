// The Gloo engine across processes on this machine: the test starts world_size copies of this
// binary (`--child SCENARIO RANK WORLD DIR TIMEOUT`), which meet in a private file-store
// directory and talk over TCP on 127.0.0.1 (ports picked by the kernel). Each child checks its
// own results against the float64 reference of every rank's inputs (which every rank can
// generate) and exits 0 when all match. Scenarios (all, mismatch and ddp are shared with the MPI
// test: process_scenarios.hpp):
//   all       every collective x reduce op x dtype x size (0, 1, 7, 1000; 1M float32 all_reduce),
//             send/recv around a ring, a subgroup
//   mismatch  rank 1 passes a different shape: every rank gets INVALID_ARGUMENT naming both
//   async     rank 0's all_reduce completes while it goes on (the others join only when it says so)
//   die       rank 1 exits between two all_reduces: the others fail within the timeout, then at once
//   ddp       DistributedDataParallel on world_size shards of a batch equals one model trained here
//             alone on the whole batch (plain and no_sync steps, buckets issued during backward);
//             unused parameters; bad shapes
//   checkpoint rank 0 writes a training checkpoint, every rank loads it through the group
// Every run ends by itself: the parent kills children still running after a time limit.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "process_scenarios.hpp"

extern char** environ;

namespace {

using namespace fabric_test;

// ---- the child ----------------------------------------------------------------------------

struct Child : ProcessChild {
  std::string dir;

  tsr_status_t join() {
    tsr_device_t dev{TSR_DEVICE_TYPE_CPU, 0};
    tsr_comm_group_options_t o{};
    o.struct_size = sizeof(o);
    o.devices = &dev;
    o.num_devices = 1;
    o.rank = rank;
    o.world_size = world;
    std::string rv = dir.rfind("tcp://", 0) == 0 ? dir : "file://" + dir;  // DIR may be a tcp:// URL
    o.rendezvous = rv.c_str();
    o.timeout_seconds = timeout;
    return table()->group_create(tsr::runtime(), &o, &group);
  }

  // A collective across processes completes while its caller goes on: rank 0 issues an
  // all_reduce that the others cannot join until rank 0 says so (a file), so an engine that
  // completed before returning would hang here until the timeout.
  bool scenario_async() {
    Tensor t = tsr::full({1000}, double(rank + 1), TSR_F32, Device::cpu(0));
    const std::string go = dir + "/rank0-issued";
    if (rank == 0) {
      tsr_tensor_t* ih[1] = {t.get()};
      tsr_collective_args_t a{};
      a.struct_size = sizeof(a);
      a.kind = TSR_COLLECTIVE_ALL_REDUCE;
      a.op = TSR_REDUCE_SUM;
      a.num_tensors = 1;
      a.inputs = ih;
      tsr_comm_work_t* w = nullptr;
      if (!ok(table()->collective(group, &a, &w), "issuing the all_reduce")) return false;
      int32_t done = 1;
      if (!ok(table()->work_query(w, &done), "work_query")) return false;
      tsr_status_t early = table()->work_wait(w, 0.05);
      const tsr_code_t early_code = early ? tsr::api()->status_code(early) : TSR_OK;
      if (early) tsr::api()->status_free(early);
      if (FILE* f = std::fopen(go.c_str(), "w")) std::fclose(f);
      const bool waited = ok(table()->work_wait(w, -1), "work_wait");
      table()->work_release(w);
      if (world > 1 && done != 0) {
        failure = "the all_reduce was done before the other ranks had joined it";
        return false;
      }
      if (world > 1 && early_code != TSR_DEADLINE_EXCEEDED) {
        failure = "a wait of 50 ms for a collective the others had not joined gave code " + std::to_string(early_code);
        return false;
      }
      if (!waited) return false;
    } else {
      auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout);
      while (!std::filesystem::exists(go)) {
        if (std::chrono::steady_clock::now() > until) {
          failure = "rank 0 never issued its all_reduce";
          return false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      if (!ok(issue(TSR_COLLECTIVE_ALL_REDUCE, dist::ReduceOp::Sum, 0, t, {}), "all_reduce")) return false;
    }
    const double sum = world * (world + 1) / 2.0;
    return same(t, std::vector<double>(1000, sum), TSR_F32, "the overlapped all_reduce");
  }

  bool scenario_die() {
    Tensor t = tsr::full({1000}, 1.0, TSR_F32, Device::cpu(0));
    if (!ok(issue(TSR_COLLECTIVE_ALL_REDUCE, dist::ReduceOp::Sum, 0, t, {}), "first all_reduce")) return false;
    if (rank == 1) _exit(7);  // a crashed rank
    auto start = std::chrono::steady_clock::now();
    tsr_status_t st = issue(TSR_COLLECTIVE_ALL_REDUCE, dist::ReduceOp::Sum, 0, t, {});
    double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!st) {
      failure = "an all_reduce with a dead rank succeeded";
      return false;
    }
    tsr_code_t code = tsr::api()->status_code(st);
    std::string m = tsr::api()->status_message(st);
    tsr::api()->status_free(st);
    if ((code != TSR_DEADLINE_EXCEEDED && code != TSR_UNAVAILABLE) || waited > timeout + 10) {
      failure = "code " + std::to_string(code) + " after " + std::to_string(waited) + " s: " + m;
      return false;
    }
    st = issue(TSR_COLLECTIVE_BARRIER, dist::ReduceOp::Sum, 0, {}, {});  // the group is broken now
    code = st ? tsr::api()->status_code(st) : TSR_OK;
    if (st) tsr::api()->status_free(st);
    if (code != TSR_FAILED_PRECONDITION) {
      failure = "a broken group answered code " + std::to_string(code);
      return false;
    }
    return true;
  }
};

int child_main(int argc, char** argv) {
  if (argc < 7) return 2;
  Child c;
  const std::string scenario = argv[2];
  c.rank = std::atoi(argv[3]);
  c.world = std::atoi(argv[4]);
  c.dir = argv[5];
  c.timeout = std::atof(argv[6]);
  if (scenario == "ddp" || scenario == "checkpoint") {
    bool good = false;
    try {
      dist::DeviceGroup pg = dist::DeviceGroup::join(
          Device::cpu(0), c.rank, c.world, c.dir.rfind("tcp://", 0) == 0 ? c.dir : "file://" + c.dir, c.timeout);
      good = scenario == "ddp" ? c.scenario_ddp(pg) : c.scenario_checkpoint(pg);
    } catch (const std::exception& e) {
      c.failure = std::string("threw: ") + e.what();
    }
    if (!good) std::fprintf(stderr, "rank %d of %d (%s): %s\n", c.rank, c.world, scenario.c_str(), c.failure.c_str());
    std::fflush(nullptr);
    return good ? 0 : 1;
  }
  bool good = c.ok(c.join(), "group_create");
  if (good) {
    good = scenario == "all"        ? c.scenario_all()
           : scenario == "mismatch" ? c.scenario_mismatch()
           : scenario == "async"    ? c.scenario_async()
                                    : c.scenario_die();
    table()->group_release(c.group);
  }
  if (!good) std::fprintf(stderr, "rank %d of %d (%s): %s\n", c.rank, c.world, scenario.c_str(), c.failure.c_str());
  std::fflush(nullptr);
  return good ? 0 : 1;
}

// ---- the parent ---------------------------------------------------------------------------

std::string g_self;

// A TCP port nobody listens on now (the kernel's choice; taken again moments later by rank 0).
int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof(a);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    ::close(fd);
    return 0;
  }
  ::close(fd);
  return ntohs(a.sin_port);
}

// Starts `world` children and returns their exit statuses (-1: killed after `limit_s`). They
// meet in a private directory, or at `url` (tcp://) when given.
std::vector<int> run_world(const std::string& scenario, int world, double timeout, double limit_s,
                           const std::string& url = "") {
  char tmpl[] = "/tmp/tessera-gloo-test-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  const std::string where = url.empty() ? dir : url;
  std::vector<pid_t> pids;
  for (int r = 0; r < world; ++r) {
    std::vector<std::string> args = {g_self, "--child", scenario, std::to_string(r), std::to_string(world), where,
                                     std::to_string(timeout)};
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    EXPECT_EQ(posix_spawn(&pid, g_self.c_str(), nullptr, nullptr, argv.data(), environ), 0);
    pids.push_back(pid);
  }
  std::vector<int> codes(static_cast<size_t>(world), -2);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit_s);
  size_t left = pids.size();
  while (left > 0) {
    for (size_t i = 0; i < pids.size(); ++i) {
      if (codes[i] != -2) continue;
      int status = 0;
      if (waitpid(pids[i], &status, WNOHANG) == pids[i]) {
        codes[i] = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        --left;
      }
    }
    if (left > 0 && std::chrono::steady_clock::now() > deadline) {
      for (size_t i = 0; i < pids.size(); ++i)
        if (codes[i] == -2) {
          kill(pids[i], SIGKILL);
          waitpid(pids[i], nullptr, 0);
          codes[i] = -1;
        }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return codes;
}

// Skips the test when the fabric backend was built without its Gloo engine.
#define REQUIRE_GLOO()                                                                          \
  do {                                                                                          \
    std::string why = gloo_missing();                                                           \
    if (!why.empty()) GTEST_SKIP() << why;                                                      \
  } while (0)

std::string gloo_missing() {
  char tmpl[] = "/tmp/tessera-gloo-probe-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  Child c;
  c.world = 1;
  c.dir = dir;
  tsr_status_t st = c.join();
  std::string why;
  if (st) {
    std::string m = tsr::api()->status_message(st);
    if (m.find("cannot load the gloo engine") != std::string::npos) why = "no Gloo engine in this build: " + m;
    tsr::api()->status_free(st);
  } else {
    table()->group_release(c.group);
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return why;
}

TEST(Gloo, EveryCollectiveAcrossProcesses) {
  REQUIRE_GLOO();
  for (int world : {1, 2, 3, 4}) {
    std::vector<int> codes = run_world("all", world, 60, 240);
    for (int r = 0; r < world; ++r) EXPECT_EQ(codes[r], 0) << "world " << world << " rank " << r;
  }
}

TEST(Gloo, MismatchedShapesNameBothRanksOnEveryRank) {
  REQUIRE_GLOO();
  std::vector<int> codes = run_world("mismatch", 3, 30, 120);
  for (int r = 0; r < 3; ++r) EXPECT_EQ(codes[r], 0) << "rank " << r;
}

TEST(Gloo, CollectivesCompleteWhileTheCallerGoesOn) {
  REQUIRE_GLOO();
  for (int world : {1, 3}) {
    std::vector<int> codes = run_world("async", world, 30, 120);
    for (int r = 0; r < world; ++r) EXPECT_EQ(codes[r], 0) << "world " << world << " rank " << r;
  }
}

TEST(Gloo, ADeadRankFailsTheOthersWithinTheTimeout) {
  REQUIRE_GLOO();
  std::vector<int> codes = run_world("die", 3, 5, 120);
  EXPECT_EQ(codes[0], 0);
  EXPECT_EQ(codes[1], 7);  // the rank that died
  EXPECT_EQ(codes[2], 0);
}

TEST(Gloo, DistributedDataParallelEqualsOneProcessOnTheWholeBatch) {
  REQUIRE_GLOO();
  for (int world : {1, 2, 3}) {
    std::vector<int> codes = run_world("ddp", world, 60, 240);
    for (int r = 0; r < world; ++r) EXPECT_EQ(codes[r], 0) << "world " << world << " rank " << r;
  }
}

// Rank 0 writes a checkpoint and every rank loads it through the group (the other ranks never
// see the file); rank 0's failures reach every rank.
TEST(Gloo, CheckpointsFromRankZeroLoadOnEveryRank) {
  REQUIRE_GLOO();
  for (int world : {1, 3}) {
    std::vector<int> codes = run_world("checkpoint", world, 60, 240);
    for (int r = 0; r < world; ++r) EXPECT_EQ(codes[r], 0) << "world " << world << " rank " << r;
  }
}

// Across machines the processes meet at tcp://host:port, where rank 0 serves the store; here all
// on 127.0.0.1 with a port the kernel picked.
TEST(Gloo, TcpRendezvous) {
  REQUIRE_GLOO();
  const int port = free_port();
  ASSERT_GT(port, 0);
  std::vector<int> codes = run_world("all", 3, 60, 240, "tcp://127.0.0.1:" + std::to_string(port));
  for (int r = 0; r < 3; ++r) EXPECT_EQ(codes[r], 0) << "rank " << r;
  // Nobody serving: a clear error after the timeout, not a hang.
  Child c;
  c.world = 2;
  c.rank = 1;
  c.timeout = 1;
  c.dir = "tcp://127.0.0.1:" + std::to_string(free_port());
  tsr_status_t st = c.join();
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(tsr::api()->status_code(st), TSR_UNAVAILABLE);
  EXPECT_NE(std::string(tsr::api()->status_message(st)).find("cannot reach the rendezvous server"), std::string::npos)
      << tsr::api()->status_message(st);
  tsr::api()->status_free(st);
}

TEST(Gloo, WrongRendezvousIsAClearError) {
  REQUIRE_GLOO();
  Child c;
  c.rank = 0;
  c.world = 2;
  c.dir = "/nonexistent/tessera-rendezvous";
  tsr_status_t st = c.join();
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(tsr::api()->status_code(st), TSR_UNAVAILABLE);
  EXPECT_NE(std::string(tsr::api()->status_message(st)).find("/nonexistent/tessera-rendezvous does not exist"),
            std::string::npos)
      << tsr::api()->status_message(st);
  tsr::api()->status_free(st);
}

}  // namespace

int main(int argc, char** argv) {
  // A child ends with _exit: what Gloo keeps until exit is not the child's leak to report
  // (LeakSanitizer runs at exit in the sanitizer build).
  if (argc > 1 && std::string(argv[1]) == "--child") _exit(child_main(argc, argv));
  g_self = std::filesystem::canonical("/proc/self/exe").string();
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
