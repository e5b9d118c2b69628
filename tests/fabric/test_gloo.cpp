// The Gloo engine across processes on this machine: the test starts world_size copies of this
// binary (`--child SCENARIO RANK WORLD DIR TIMEOUT`), which meet in a private file-store
// directory and talk over TCP on 127.0.0.1 (ports picked by the kernel). Each child checks its
// own results against the float64 reference of every rank's inputs (which every rank can
// generate) and exits 0 when all match. Scenarios:
//   all       every collective x reduce op x dtype x size (0, 1, 7, 1000; 1M float32 all_reduce),
//             send/recv around a ring, a subgroup
//   mismatch  rank 1 passes a different shape: every rank gets INVALID_ARGUMENT naming both
//   async     rank 0's all_reduce completes while it goes on (the others join only when it says so)
//   die       rank 1 exits between two all_reduces: the others fail within the timeout, then at once
//   ddp       DistributedDataParallel on world_size shards of a batch equals one model trained here
//             alone on the whole batch (plain and no_sync steps, buckets issued during backward);
//             unused parameters; bad shapes
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

#include "reference.hpp"
#include "tessera/distributed/ddp.hpp"
#include "tessera/nn.hpp"

extern char** environ;

namespace {

using namespace fabric_test;

// ---- the child ----------------------------------------------------------------------------

const tsr_collectives_t* table() {
  return static_cast<const tsr_collectives_t*>(tsr::api()->get_extension(tsr::runtime(), TSR_COLLECTIVES_EXTENSION));
}

struct Child {
  int rank = 0, world = 0;
  std::string dir;
  double timeout = 30;
  tsr_comm_group_t* group = nullptr;
  std::string failure;

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
  // One collective on this rank's tensors; returns the status (caller frees).
  tsr_status_t issue(tsr_collective_kind_t kind, dist::ReduceOp op, int root, const Tensor& in, const Tensor& out,
                     tsr_comm_group_t* g = nullptr) {
    tsr_tensor_t* ih[1] = {in.defined() ? in.get() : nullptr};
    tsr_tensor_t* oh[1] = {out.defined() ? out.get() : nullptr};
    tsr_collective_args_t a{};
    a.struct_size = sizeof(a);
    a.kind = kind;
    a.op = static_cast<tsr_reduce_op_t>(op);
    a.root = root;
    a.num_tensors = kind == TSR_COLLECTIVE_BARRIER ? 0 : 1;
    a.inputs = ih;
    a.outputs = out.defined() ? oh : nullptr;
    return table()->collective(g ? g : group, &a, nullptr);
  }
  bool ok(tsr_status_t st, const std::string& what) {
    if (!st) return true;
    failure = what + ": " + tsr::api()->status_message(st);
    tsr::api()->status_free(st);
    return false;
  }
  bool same(const Tensor& t, const std::vector<double>& want, tsr_dtype_t dt, const std::string& what) {
    std::string m = mismatch(t, want, dt);
    if (m.empty()) return true;
    failure = what + ": " + m;
    return false;
  }
  // Every rank's input, generated identically on every rank.
  std::vector<std::vector<double>> all_inputs(int64_t n, tsr_dtype_t dt, uint64_t seed) {
    std::vector<std::vector<double>> v;
    for (int r = 0; r < world; ++r) v.push_back(values(random_on(n, dt, r, seed, Device::cpu(0))));
    return v;
  }

  bool scenario_all() {
    for (tsr_dtype_t dt : kDtypes)
      for (int64_t k : {int64_t(0), int64_t(1), int64_t(7), int64_t(1000)}) {
        const std::string what = std::string(tsr::dtype_name(dt)) + " k " + std::to_string(k);
        for (dist::ReduceOp op : kOps) {
          const uint64_t seed = static_cast<uint64_t>(k) * 10 + static_cast<uint64_t>(op);
          Tensor t = random_on(k, dt, rank, seed, Device::cpu(0));
          auto vs = all_inputs(k, dt, seed);
          std::vector<double> want(static_cast<size_t>(k));
          for (size_t j = 0; j < want.size(); ++j) want[j] = reference(vs, j, op, dt);
          if (!ok(issue(TSR_COLLECTIVE_ALL_REDUCE, op, 0, t, {}), "all_reduce " + what)) return false;
          if (!same(t, want, dt, "all_reduce " + what + " op " + std::to_string(static_cast<int>(op)))) return false;
          Tensor r = random_on(k, dt, rank, seed + 1, Device::cpu(0));
          auto rv = all_inputs(k, dt, seed + 1);
          for (size_t j = 0; j < want.size(); ++j) want[j] = reference(rv, j, op, dt);
          if (!ok(issue(TSR_COLLECTIVE_REDUCE, op, world - 1, r, {}), "reduce " + what)) return false;
          if (!same(r, rank == world - 1 ? want : rv[rank], dt, "reduce " + what)) return false;
        }
        Tensor b = random_on(k, dt, rank, 21, Device::cpu(0));
        auto bv = all_inputs(k, dt, 21);
        if (!ok(issue(TSR_COLLECTIVE_BROADCAST, dist::ReduceOp::Sum, world / 2, b, {}), "broadcast " + what)) return false;
        if (!same(b, bv[world / 2], dt, "broadcast " + what)) return false;
        Tensor g = random_on(k, dt, rank, 22, Device::cpu(0));
        Tensor gout = tsr::zeros({world * k}, dt, Device::cpu(0));
        auto gv = all_inputs(k, dt, 22);
        std::vector<double> cat;
        for (const auto& v : gv) cat.insert(cat.end(), v.begin(), v.end());
        if (!ok(issue(TSR_COLLECTIVE_ALL_GATHER, dist::ReduceOp::Sum, 0, g, gout), "all_gather " + what)) return false;
        if (!same(gout, cat, dt, "all_gather " + what)) return false;
        Tensor s = random_on(world * k, dt, rank, 23, Device::cpu(0));
        Tensor sout = tsr::zeros({k}, dt, Device::cpu(0));
        auto sv = all_inputs(world * k, dt, 23);
        std::vector<double> mine(static_cast<size_t>(k));
        for (int64_t j = 0; j < k; ++j)
          mine[static_cast<size_t>(j)] = reference(sv, static_cast<size_t>(rank * k + j), dist::ReduceOp::Sum, dt);
        if (!ok(issue(TSR_COLLECTIVE_REDUCE_SCATTER, dist::ReduceOp::Sum, 0, s, sout), "reduce_scatter " + what))
          return false;
        if (!same(sout, mine, dt, "reduce_scatter " + what)) return false;
        Tensor x = random_on(world * k, dt, rank, 24, Device::cpu(0));
        Tensor xout = tsr::zeros({world * k}, dt, Device::cpu(0));
        auto xv = all_inputs(world * k, dt, 24);
        std::vector<double> got;
        for (int j = 0; j < world; ++j) got.insert(got.end(), xv[j].begin() + rank * k, xv[j].begin() + (rank + 1) * k);
        if (!ok(issue(TSR_COLLECTIVE_ALL_TO_ALL, dist::ReduceOp::Sum, 0, x, xout), "all_to_all " + what)) return false;
        if (!same(xout, got, dt, "all_to_all " + what)) return false;
        // send/recv around the ring: even ranks send first, odd ranks receive first.
        if (world > 1) {
          Tensor mine_t = random_on(k, dt, rank, 25, Device::cpu(0));
          Tensor from = tsr::zeros({k}, dt, Device::cpu(0));
          const int next = (rank + 1) % world, prev = (rank + world - 1) % world;
          auto pv = all_inputs(k, dt, 25);
          bool sent_first = rank % 2 == 0;
          for (int step = 0; step < 2; ++step) {
            bool send = (step == 0) == sent_first;
            tsr_status_t st = send ? issue(TSR_COLLECTIVE_SEND, dist::ReduceOp::Sum, next, mine_t, {})
                                   : issue(TSR_COLLECTIVE_RECV, dist::ReduceOp::Sum, prev, {}, from);
            if (!ok(st, (send ? "send " : "recv ") + what)) return false;
          }
          if (!same(from, pv[prev], dt, "recv " + what)) return false;
        }
      }
    {  // a gradient-bucket size: 1M float32 (4 MiB), summed
      const int64_t k = int64_t(1) << 20;
      Tensor t = random_on(k, TSR_F32, rank, 77, Device::cpu(0));
      auto vs = all_inputs(k, TSR_F32, 77);
      std::vector<double> want(static_cast<size_t>(k));
      for (size_t j = 0; j < want.size(); ++j) want[j] = reference(vs, j, dist::ReduceOp::Sum, TSR_F32);
      if (!ok(issue(TSR_COLLECTIVE_ALL_REDUCE, dist::ReduceOp::Sum, 0, t, {}), "all_reduce of 1M float32") ||
          !same(t, want, TSR_F32, "all_reduce of 1M float32"))
        return false;
    }
    if (!ok(issue(TSR_COLLECTIVE_BARRIER, dist::ReduceOp::Sum, 0, {}, {}), "barrier")) return false;
    // A subgroup of the odd ranks; the others are not in it.
    if (world < 2) return true;
    std::vector<int32_t> odd;
    for (int r = 1; r < world; r += 2) odd.push_back(r);
    tsr_comm_group_t* sub = nullptr;
    if (!ok(table()->group_split(group, odd.data(), static_cast<int32_t>(odd.size()), &sub), "group_split")) return false;
    if ((rank % 2 == 1) != (sub != nullptr)) {
      failure = "group_split: membership is wrong";
      return false;
    }
    if (sub) {
      Tensor t = tsr::full({3}, rank, TSR_F32, Device::cpu(0));
      double sum = 0;
      for (int32_t r : odd) sum += r;
      bool good = ok(issue(TSR_COLLECTIVE_ALL_REDUCE, dist::ReduceOp::Sum, 0, t, {}, sub), "subgroup all_reduce") &&
                  same(t, {sum, sum, sum}, TSR_F32, "subgroup all_reduce");
      table()->group_release(sub);
      if (!good) return false;
    }
    return ok(issue(TSR_COLLECTIVE_BARRIER, dist::ReduceOp::Sum, 0, {}, {}), "final barrier");
  }

  bool scenario_mismatch() {
    Tensor t = tsr::full({rank == 1 ? 5 : 4}, 1.0, TSR_F32, Device::cpu(0));
    tsr_status_t st = issue(TSR_COLLECTIVE_ALL_REDUCE, dist::ReduceOp::Sum, 0, t, {});
    if (!st) {
      failure = "a shape mismatch went unnoticed";
      return false;
    }
    std::string m = tsr::api()->status_message(st);
    tsr_code_t code = tsr::api()->status_code(st);
    tsr::api()->status_free(st);
    const std::string want =
        "rank 0 called all_reduce with float32 [4] but rank 1 called all_reduce with float32 [5] (shapes differ)";
    if (code != TSR_INVALID_ARGUMENT || m.find(want) == std::string::npos) {
      failure = "unexpected error: " + m;
      return false;
    }
    std::vector<double> ones(t.numel(), 1.0);
    if (!same(t, ones, TSR_F32, "the tensor after a refused all_reduce")) return false;
    // The group still works after an argument error.
    Tensor u = tsr::full({2}, 1.0, TSR_F32, Device::cpu(0));
    return ok(issue(TSR_COLLECTIVE_ALL_REDUCE, dist::ReduceOp::Sum, 0, u, {}), "all_reduce after the mismatch") &&
           same(u, {double(world), double(world)}, TSR_F32, "all_reduce after the mismatch");
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

// Models with rank-specific initial weights, so that only DDP's broadcast makes them agree.
std::shared_ptr<tsr::nn::Sequential> small_model(uint64_t seed, int64_t hidden = 5) {
  tsr::manual_seed(seed);
  using tsr::nn::Linear, tsr::nn::Tanh;
  return std::make_shared<tsr::nn::Sequential>(std::vector<std::shared_ptr<tsr::nn::Module>>{
      std::make_shared<Linear>(3, hidden), std::make_shared<Tanh>(), std::make_shared<Linear>(hidden, 2)});
}

struct DdpChild : Child {
  bool close(const std::vector<Tensor>& a, const std::vector<Tensor>& b, const std::string& what) {
    for (size_t i = 0; i < a.size(); ++i)
      if (!same(a[i], values(b[i]), TSR_F32, what + " parameter " + std::to_string(i))) return false;
    return true;
  }
  bool scenario_ddp() {
    // Equivalence: R ranks on shards of a global batch == one model on the whole batch.
    auto model = small_model(100 + static_cast<uint64_t>(rank));
    dist::DeviceGroup pg = dist::DeviceGroup::join(Device::cpu(0), rank, world,
                                                   dir.rfind("tcp://", 0) == 0 ? dir : "file://" + dir, timeout);
    // 64-byte buckets: the four parameters (80, 20, 40, 8 bytes) in three buckets, so that the
    // ordering of buckets completed during backward is exercised.
    dist::DistributedDataParallel ddp(model, pg, 64);
    if (ddp.num_buckets() != 3) {
      failure = "expected 3 buckets, got " + std::to_string(ddp.num_buckets());
      return false;
    }
    auto ref = small_model(7);
    std::vector<Tensor> mp = model->parameters(), rp = ref->parameters();
    {
      tsr::NoGradGuard no_grad;
      for (size_t i = 0; i < mp.size(); ++i) rp[i].copy_(mp[i]);  // rank 0's weights, by broadcast
    }
    const int64_t local = 4, global = local * world;
    auto step = [&](int s, bool sync) {
      Tensor x = random_on(global * 3, TSR_F32, 1000 + s, 1, Device::cpu(0)).reshape({global, 3});
      Tensor y = random_on(global * 2, TSR_F32, 2000 + s, 1, Device::cpu(0)).reshape({global, 2});
      Tensor lx = x.narrow(0, rank * local, local), ly = y.narrow(0, rank * local, local);
      if (sync) {
        ddp.backward(tsr::nn::mse_loss(ddp(lx), ly));
      } else {
        auto guard = ddp.no_sync();
        ddp.backward(tsr::nn::mse_loss(ddp(lx), ly));
      }
      tsr::nn::mse_loss((*ref)(x), y).backward();
    };
    auto sgd = [&](std::vector<Tensor>& ps) {
      tsr::NoGradGuard no_grad;
      for (Tensor& p : ps) {
        p.copy_(tsr::sub(p, tsr::mul(p.grad(), 0.1)));
        p.set_grad(Tensor());
      }
    };
    for (int s = 0; s < 3; ++s) {  // plain steps
      step(s, true);
      if (!close(gradients(mp), gradients(rp), "step " + std::to_string(s) + " gradient")) return false;
      if (ddp.buckets_issued_during_backward() != 3) {  // every bucket overlapped backward
        failure = std::to_string(ddp.buckets_issued_during_backward()) + " of 3 buckets were issued during backward";
        return false;
      }
      sgd(mp);
      sgd(rp);
    }
    step(10, false);  // accumulate locally, then a synced step: the average of both micro-batches' sum
    step(11, true);
    if (!close(gradients(mp), gradients(rp), "no_sync accumulation gradient")) return false;
    sgd(mp);
    sgd(rp);
    if (!close(mp, rp, "weights after the steps")) return false;
    // An unused parameter: only rank 0 runs the last layer; everybody still finishes, and its
    // gradient is rank 0's divided by world_size.
    auto m2 = small_model(300 + static_cast<uint64_t>(rank));
    dist::DistributedDataParallel d2(m2, pg);
    Tensor x = random_on(4 * 3, TSR_F32, 3000, 1, Device::cpu(0)).reshape({4, 3});
    auto& layers = *m2;
    Tensor h = layers[1]->forward(layers[0]->forward(x));
    Tensor out = rank == 0 ? layers[2]->forward(h) : h;
    Tensor local_grad;
    {
      Tensor loss = tsr::sum(tsr::mul(out, out));
      if (rank == 0) {
        std::vector<Tensor> w = {m2->parameters()[2]};
        local_grad = tsr::autograd::grad({loss}, w, {}, true)[0];
      }
      d2.backward(loss);
    }
    Tensor w2grad = m2->parameters()[2].grad();
    if (!w2grad.defined()) {
      failure = "the unused parameter got no gradient";
      return false;
    }
    if (rank == 0 && !same(w2grad, values(tsr::div(local_grad, double(world))), TSR_F32, "unused parameter"))
      return false;
    // Parameters whose shapes differ across ranks are refused at construction, naming both.
    if (world > 1) {
      auto bad = small_model(5, 5 + (rank == 1 ? 1 : 0));
      try {
        dist::DistributedDataParallel d3(bad, pg);
        failure = "different parameter shapes were accepted";
        return false;
      } catch (const tsr::Error& e) {
        std::string m = e.what();
        if (m.find("parameter '0.weight'") == std::string::npos || m.find("rank 1 called broadcast with float32 [6, 3]") == std::string::npos) {
          failure = "unexpected error: " + m;
          return false;
        }
      }
    }
    return true;
  }
  static std::vector<Tensor> gradients(const std::vector<Tensor>& ps) {
    std::vector<Tensor> g;
    for (const Tensor& p : ps) g.push_back(p.grad());
    return g;
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
  if (scenario == "ddp") {
    DdpChild d;
    d.rank = c.rank;
    d.world = c.world;
    d.dir = c.dir;
    d.timeout = c.timeout;
    bool good = false;
    try {
      good = d.scenario_ddp();
    } catch (const std::exception& e) {
      d.failure = std::string("threw: ") + e.what();
    }
    if (!good) std::fprintf(stderr, "rank %d of %d (ddp): %s\n", d.rank, d.world, d.failure.c_str());
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
