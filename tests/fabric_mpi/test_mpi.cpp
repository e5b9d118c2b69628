// The MPI engine across processes: CTest starts this binary under `mpirun -n N` (N = 1 to 4;
// tests/fabric_mpi/CMakeLists.txt), and every rank runs the same tests in the same order, each
// rank checking its own results (process_scenarios.hpp, shared with the Gloo test):
//   - every collective x reduce op x dtype x size (0, 1, 7, 1000; 1M float32 all_reduce), send/recv
//     around a ring, a subgroup of the odd ranks (MPI_Comm_split);
//   - mismatched shapes: every rank gets INVALID_ARGUMENT naming both ranks;
//   - max and min propagate NaN for every floating dtype; integers wrap around;
//   - two groups used at once from two threads;
//   - a send/recv pair whose shapes differ: the receiver names both, and the pair stays usable;
//   - the engine chosen by default under mpirun, and ranks that disagree with MPI_COMM_WORLD;
//   - DistributedDataParallel through init_process_group() equals one process on the whole batch.
// A rank that finds a difference prints it and exits 1 at once: mpirun then ends the other ranks
// (which may wait in a collective the failed rank will never call) and fails the job. This
// binary links no MPI: the fabric backend's mpi engine does, and initializes and finalizes it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <unistd.h>

#include "process_scenarios.hpp"
#include "tessera/distributed/process_group.hpp"

namespace {

using namespace fabric_test;

int env_int(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::atoi(v) : -1;
}

struct MpiChild : ProcessChild {
  MpiChild() {
    rank = env_int("OMPI_COMM_WORLD_RANK");
    world = env_int("OMPI_COMM_WORLD_SIZE");
  }
  // A group over MPI_COMM_WORLD; `engine` NULL lets the backend choose.
  tsr_status_t join(const char* engine, int as_rank, int as_world, tsr_comm_group_t** out) {
    tsr_device_t dev{TSR_DEVICE_TYPE_CPU, 0};
    tsr_comm_group_options_t o{};
    o.struct_size = sizeof(o);
    o.devices = &dev;
    o.num_devices = 1;
    o.rank = as_rank;
    o.world_size = as_world;
    o.engine = engine;
    o.timeout_seconds = timeout;
    return table()->group_create(tsr::runtime(), &o, out);
  }
  // Ends this rank at the first failure, so that no rank waits for it (see the file comment).
  void require(bool good, const char* scenario) {
    if (good) return;
    std::fprintf(stderr, "rank %d of %d (%s): %s\n", rank, world, scenario, failure.c_str());
    std::fflush(nullptr);
    _exit(1);
  }
};

#define REQUIRE_MPIRUN(c)                                                                    \
  do {                                                                                       \
    if ((c).rank < 0 || (c).world < 1)                                                       \
      GTEST_SKIP() << "not started by Open MPI's mpirun (OMPI_COMM_WORLD_RANK/SIZE unset); " \
                      "CTest runs this binary as mpirun -n N";                               \
  } while (0)

TEST(Mpi, EveryCollectiveAcrossProcesses) {
  MpiChild c;
  REQUIRE_MPIRUN(c);
  c.require(c.ok(c.join("mpi", c.rank, c.world, &c.group), "group_create"), "all");
  tsr_comm_group_info_t info{};
  info.struct_size = sizeof(info);
  c.require(c.ok(table()->group_info(c.group, &info), "group_info"), "all");
  EXPECT_STREQ(info.engine, "mpi");
  EXPECT_EQ(info.world_size, c.world);
  EXPECT_EQ(info.rank, c.rank);
  c.require(c.scenario_all(), "all");
  table()->group_release(c.group);
}

TEST(Mpi, MismatchedShapesNameBothRanksOnEveryRank) {
  MpiChild c;
  REQUIRE_MPIRUN(c);
  if (c.world < 2) GTEST_SKIP() << "needs two ranks";
  c.require(c.ok(c.join("mpi", c.rank, c.world, &c.group), "group_create"), "mismatch");
  c.require(c.scenario_mismatch(), "mismatch");
  table()->group_release(c.group);
}

// MAX and MIN propagate NaN as torch.maximum does (the engine's own ops; MPI_MAX need not), for
// every floating dtype, in all_reduce, reduce and reduce_scatter: the last rank's element 1 is
// NaN, element 0 is not.
TEST(Mpi, MaxAndMinPropagateNaN) {
  MpiChild c;
  REQUIRE_MPIRUN(c);
  c.require(c.ok(c.join("mpi", c.rank, c.world, &c.group), "group_create"), "nan");
  const double nan = std::nan("");
  for (tsr_dtype_t dt : {TSR_F32, TSR_F64, TSR_F16, TSR_BF16})
    for (dist::ReduceOp op : {dist::ReduceOp::Max, dist::ReduceOp::Min}) {
      const std::string what = std::string(tsr::dtype_name(dt)) + (op == dist::ReduceOp::Max ? " max" : " min");
      auto input = [&] {
        std::vector<double> v = {1.0 + c.rank, c.rank == c.world - 1 ? nan : 1.0 + c.rank};
        return tsr::from_vector(v, {2}, Device::cpu(0)).to(dt);
      };
      const double first = op == dist::ReduceOp::Max ? c.world : 1.0;
      auto check = [&](const Tensor& t, const std::string& kind) {
        std::vector<double> got = values(t);
        c.failure = kind + " " + what + " gave " + std::to_string(got[0]) + ", " + std::to_string(got[1]) +
                    "; expected " + std::to_string(first) + ", nan";
        c.require(got[0] == first && std::isnan(got[1]), "nan");
      };
      Tensor t = input();
      c.require(c.ok(c.issue(TSR_COLLECTIVE_ALL_REDUCE, op, 0, t, {}), "all_reduce " + what), "nan");
      check(t, "all_reduce");
      Tensor r = input();
      c.require(c.ok(c.issue(TSR_COLLECTIVE_REDUCE, op, 0, r, {}), "reduce " + what), "nan");
      if (c.rank == 0) check(r, "reduce");
      // reduce_scatter: every rank's slice is [element 0, element 1].
      std::vector<double> s;
      for (int j = 0; j < c.world; ++j) {
        std::vector<double> v = values(input());
        s.insert(s.end(), v.begin(), v.end());
      }
      Tensor out = tsr::zeros({2}, dt, Device::cpu(0));
      c.require(c.ok(c.issue(TSR_COLLECTIVE_REDUCE_SCATTER, op, 0,
                             tsr::from_vector(s, {2 * c.world}, Device::cpu(0)).to(dt), out),
                     "reduce_scatter " + what),
                "nan");
      check(out, "reduce_scatter");
    }
  table()->group_release(c.group);
}

// Integers wrap around as the tensors' arithmetic does (MPI's built-in SUM and PROD on them).
TEST(Mpi, IntegersWrapAround) {
  MpiChild c;
  REQUIRE_MPIRUN(c);
  if (c.world < 2) GTEST_SKIP() << "needs two ranks";
  c.require(c.ok(c.join("mpi", c.rank, c.world, &c.group), "group_create"), "wrap");
  struct Case {
    tsr_dtype_t dt;
    dist::ReduceOp op;
    double v;
  };
  for (const Case& k : {Case{TSR_I8, dist::ReduceOp::Sum, 100}, Case{TSR_I8, dist::ReduceOp::Prod, 100},
                        Case{TSR_U8, dist::ReduceOp::Sum, 200}, Case{TSR_U8, dist::ReduceOp::Prod, 100},
                        Case{TSR_I32, dist::ReduceOp::Sum, 1 << 30}}) {
    const std::string what = std::string(tsr::dtype_name(k.dt)) + " op " + std::to_string(static_cast<int>(k.op));
    Tensor t = tsr::full({3}, k.v, k.dt, Device::cpu(0));
    std::vector<std::vector<double>> vs(static_cast<size_t>(c.world), std::vector<double>(3, k.v));
    std::vector<double> want(3, reference(vs, 0, k.op, k.dt));
    c.require(c.ok(c.issue(TSR_COLLECTIVE_ALL_REDUCE, k.op, 0, t, {}), "all_reduce " + what) &&
                  c.same(t, want, k.dt, "all_reduce " + what),
              "wrap");
  }
  table()->group_release(c.group);
}

// Different groups may be used at once (the ABI): two threads, each on its own group, each
// all-reducing in a loop, so that the two groups' collectives interleave differently on each
// rank. At MPI_THREAD_SERIALIZED (CTest's fabric.mpi.n3.serialized) this checks that a group
// waiting in MPI does not hold up the other's.
TEST(Mpi, TwoGroupsAtOnce) {
  MpiChild c;
  REQUIRE_MPIRUN(c);
  tsr_comm_group_t* g[2] = {nullptr, nullptr};
  for (auto& x : g) c.require(c.ok(c.join("mpi", c.rank, c.world, &x), "group_create"), "two groups");
  std::string failures[2];
  auto loop = [&](int i) {
    MpiChild t;
    for (int step = 0; step < 100 && t.failure.empty(); ++step) {
      Tensor x = tsr::full({7}, double(c.rank + step + i), TSR_I64, Device::cpu(0));
      const double want = double(c.world) * (step + i) + c.world * (c.world - 1) / 2.0;
      if (t.ok(t.issue(TSR_COLLECTIVE_ALL_REDUCE, dist::ReduceOp::Sum, 0, x, {}, g[i]), "all_reduce"))
        t.same(x, std::vector<double>(7, want), TSR_I64,
               "group " + std::to_string(i) + " step " + std::to_string(step));
    }
    failures[i] = t.failure;
  };
  std::thread other(loop, 1);
  loop(0);
  other.join();
  c.failure = failures[0] + failures[1];
  c.require(c.failure.empty(), "two groups");
  for (auto& x : g) table()->group_release(x);
}

// A recv into a tensor of another shape than the send's: the receiver says so naming both
// ranks (the sender cannot know), and the next pair of the two ranks still meets correctly.
TEST(Mpi, SendRecvShapesDiffer) {
  MpiChild c;
  REQUIRE_MPIRUN(c);
  if (c.world < 2) GTEST_SKIP() << "needs two ranks";
  c.require(c.ok(c.join("mpi", c.rank, c.world, &c.group), "group_create"), "send/recv");
  if (c.rank == 0) {
    c.require(
        c.ok(c.issue(TSR_COLLECTIVE_SEND, dist::ReduceOp::Sum, 1, tsr::full({4}, 2.0, TSR_F32, Device::cpu(0)), {}),
             "send"),
        "send/recv");
    c.require(
        c.ok(c.issue(TSR_COLLECTIVE_SEND, dist::ReduceOp::Sum, 1, tsr::full({2}, 3.0, TSR_F32, Device::cpu(0)), {}),
             "second send"),
        "send/recv");
  } else if (c.rank == 1) {
    Tensor into = tsr::zeros({5}, TSR_F32, Device::cpu(0));
    tsr_status_t st = c.issue(TSR_COLLECTIVE_RECV, dist::ReduceOp::Sum, 0, {}, into);
    c.failure = "a recv into another shape succeeded";
    c.require(st != nullptr, "send/recv");
    const std::string m = tsr::api()->status_message(st);
    const tsr_code_t code = tsr::api()->status_code(st);
    tsr::api()->status_free(st);
    c.failure = "unexpected error: " + m;
    c.require(code == TSR_INVALID_ARGUMENT &&
                  m.find("recv: rank 0 sent float32 [4] but rank 1 receives into float32 [5] (shapes differ)") !=
                      std::string::npos,
              "send/recv");
    c.require(c.same(into, std::vector<double>(5, 0.0), TSR_F32, "the tensor after a refused recv"), "send/recv");
    Tensor next = tsr::zeros({2}, TSR_F32, Device::cpu(0));
    c.require(c.ok(c.issue(TSR_COLLECTIVE_RECV, dist::ReduceOp::Sum, 0, {}, next), "second recv") &&
                  c.same(next, {3.0, 3.0}, TSR_F32, "second recv"),
              "send/recv");
  }
  c.require(c.ok(c.issue(TSR_COLLECTIVE_BARRIER, dist::ReduceOp::Sum, 0, {}, {}), "barrier"), "send/recv");
  table()->group_release(c.group);
}

TEST(Mpi, EngineChoiceAndRanks) {
  MpiChild c;
  REQUIRE_MPIRUN(c);
  // No engine named, several processes, under mpirun: the mpi engine, no rendezvous needed.
  if (c.world > 1) {
    tsr_comm_group_t* g = nullptr;
    c.require(c.ok(c.join(nullptr, c.rank, c.world, &g), "group_create without an engine"), "engine choice");
    tsr_comm_group_info_t info{};
    info.struct_size = sizeof(info);
    c.require(c.ok(table()->group_info(g, &info), "group_info"), "engine choice");
    EXPECT_STREQ(info.engine, "mpi");
    Tensor t = tsr::full({3}, 1.0, TSR_I32, Device::cpu(0));
    c.require(c.ok(c.issue(TSR_COLLECTIVE_ALL_REDUCE, dist::ReduceOp::Sum, 0, t, {}, g), "all_reduce") &&
                  c.same(t, std::vector<double>(3, c.world), TSR_I32, "all_reduce"),
              "engine choice");
    table()->group_release(g);
  }
  // Ranks that are not MPI's: every rank fails (none is left waiting), naming the numbers.
  tsr_comm_group_t* g = nullptr;
  tsr_status_t st = c.join("mpi", (c.rank + 1) % c.world, c.world + 1, &g);
  c.failure = "ranks that disagree with MPI_COMM_WORLD were accepted";
  c.require(st != nullptr, "ranks");
  const std::string m = tsr::api()->status_message(st);
  const tsr_code_t code = tsr::api()->status_code(st);
  tsr::api()->status_free(st);
  const std::string want = "rank 0 of MPI_COMM_WORLD (size " + std::to_string(c.world) + ") was given rank " +
                           std::to_string(1 % c.world) + " of world_size " + std::to_string(c.world + 1);
  c.failure = "unexpected error: " + m;
  c.require(code == TSR_INVALID_ARGUMENT && m.find(want) != std::string::npos, "ranks");
}

TEST(Mpi, DistributedDataParallelEqualsOneProcessOnTheWholeBatch) {
  MpiChild c;
  REQUIRE_MPIRUN(c);
  bool good = false;
  try {
    // Rank and world size from mpirun's variables, the mpi engine by default under mpirun.
    dist::DeviceGroup pg = dist::init_process_group();
    EXPECT_STREQ(pg.info().engine, "mpi");
    EXPECT_EQ(pg.rank(), c.rank);
    EXPECT_EQ(pg.size(), c.world);
    good = c.scenario_ddp(pg);
  } catch (const std::exception& e) {
    c.failure = std::string("threw: ") + e.what();
  }
  c.require(good, "ddp");
}

TEST(Mpi, CheckpointsFromRankZeroLoadOnEveryRank) {
  MpiChild c;
  REQUIRE_MPIRUN(c);
  bool good = false;
  try {
    dist::DeviceGroup pg = dist::init_process_group();
    good = c.scenario_checkpoint(pg);
  } catch (const std::exception& e) {
    c.failure = std::string("threw: ") + e.what();
  }
  c.require(good, "checkpoint");
}

}  // namespace

int main(int argc, char** argv) {
  // One report is enough: the other ranks print only their failures.
  const char* r = std::getenv("OMPI_COMM_WORLD_RANK");
  if (r && std::atoi(r) != 0) GTEST_FLAG_SET(brief, true);
  ::testing::InitGoogleTest(&argc, argv);
  // Returns (not _exit) so that the mpi engine's MPI_Finalize runs at exit, as mpirun expects.
  return RUN_ALL_TESTS();
}
