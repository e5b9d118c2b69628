// The scenarios every engine across processes runs (tests/fabric/test_gloo.cpp, one process per
// rank started by the test itself; tests/fabric_mpi/test_mpi.cpp, started by mpirun): each rank
// checks its own results against the float64 reference of every rank's inputs (which every rank
// can generate) and returns false with `failure` set at the first difference.
//   scenario_all       every collective x reduce op x dtype x size (0, 1, 7, 1000; 1M float32
//                      all_reduce), send/recv around a ring, a subgroup of the odd ranks
//   scenario_mismatch  rank 1 passes a different shape: every rank gets INVALID_ARGUMENT naming
//                      both, the tensor unchanged, and the group still works
//   scenario_ddp       DistributedDataParallel (three buckets, all issued during backward) on
//                      world_size shards of a batch equals one model
//                      trained here alone on the whole batch (plain and no_sync steps); unused
//                      parameters; parameter shapes that differ across ranks
//   scenario_checkpoint rank 0 writes a training checkpoint and every rank loads it through the
//                      group (the other ranks pass paths that do not exist: only rank 0 touches
//                      the file); rank 0's read and write failures reach every rank
#pragma once

#include <string>
#include <vector>

#include "reference.hpp"
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>

#include "tessera/distributed/checkpoint.hpp"
#include "tessera/distributed/ddp.hpp"
#include "tessera/nn.hpp"

namespace fabric_test {

inline const tsr_collectives_t* table() {
  return static_cast<const tsr_collectives_t*>(tsr::api()->get_extension(tsr::runtime(), TSR_COLLECTIVES_EXTENSION));
}

// Models with rank-specific initial weights, so that only DDP's broadcast makes them agree.
inline std::shared_ptr<tsr::nn::Sequential> small_model(uint64_t seed, int64_t hidden = 5) {
  tsr::manual_seed(seed);
  using tsr::nn::Linear, tsr::nn::Tanh;
  return std::make_shared<tsr::nn::Sequential>(std::vector<std::shared_ptr<tsr::nn::Module>>{
      std::make_shared<Linear>(3, hidden), std::make_shared<Tanh>(), std::make_shared<Linear>(hidden, 2)});
}

// One rank of a group across processes; `group` is made by the engine's test (join there).
struct ProcessChild {
  int rank = 0, world = 0;
  double timeout = 30;
  tsr_comm_group_t* group = nullptr;
  std::string failure;

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


  bool close(const std::vector<Tensor>& a, const std::vector<Tensor>& b, const std::string& what) {
    for (size_t i = 0; i < a.size(); ++i)
      if (!same(a[i], values(b[i]), TSR_F32, what + " parameter " + std::to_string(i))) return false;
    return true;
  }
  // Rank r's checkpoint, which every rank can generate.
  static tsr::TrainingCheckpoint checkpoint_of(int r) {
    tsr::TrainingCheckpoint ck;
    ck.model.insert("0.weight", random_on(12, TSR_F32, r, 55, Device::cpu(0)).reshape({3, 4}));
    ck.model.insert("0.bias", random_on(3, TSR_BF16, r, 56, Device::cpu(0)));
    ck.optimizer.insert("state.0.step", random_on(1, TSR_I64, r, 57, Device::cpu(0)));
    ck.step = 100 + r;
    ck.rng = {static_cast<uint64_t>(7 + r), 11};
    ck.extra["written_by"] = "rank " + std::to_string(r);
    return ck;
  }
  bool same_checkpoint(const tsr::TrainingCheckpoint& got, const tsr::TrainingCheckpoint& want) {
    if (got.step != want.step || got.rng != want.rng || got.extra != want.extra) {
      failure = "loaded step " + std::to_string(got.step) + " / extra '" +
                (got.extra.count("written_by") ? got.extra.at("written_by") : "") + "', expected rank 0's";
      return false;
    }
    for (const tsr::StateDict* sd : {&want.model, &want.optimizer})
      for (const std::string& k : sd->keys()) {
        const tsr::StateDict& from = sd == &want.model ? got.model : got.optimizer;
        const Tensor& t = from.at(k);
        if (t.dtype() != sd->at(k).dtype() || t.sizes() != sd->at(k).sizes() || values(t) != values(sd->at(k))) {
          failure = "tensor '" + k + "' differs from rank 0's";
          return false;
        }
      }
    return true;
  }
  template <class F>
  bool every_rank_throws(F&& f, tsr_code_t code, const std::string& part, const std::string& what) {
    try {
      f();
      failure = what + ": no error";
      return false;
    } catch (const tsr::Error& e) {
      if (e.code() == code && std::string(e.what()).find(part) != std::string::npos) return true;
      failure = what + ": unexpected error " + std::to_string(e.code()) + ": " + e.what();
      return false;
    }
  }
  bool scenario_checkpoint(dist::DeviceGroup& pg) {
    const Device member = Device::cpu(0);
    std::string dir, path;
    if (rank == 0) {
      char t[] = "/tmp/tessera-ckpt-test-XXXXXX";
      if (!mkdtemp(t)) {
        failure = "mkdtemp failed";
        return false;
      }
      dir = t;
      path = dir + "/run.safetensors";
    } else {
      path = "/nonexistent-tessera-rank-" + std::to_string(rank) + "/run.safetensors";  // never touched
    }
    struct Cleanup {
      std::string dir;
      ~Cleanup() {
        std::error_code ec;
        if (!dir.empty()) std::filesystem::remove_all(dir, ec);
      }
    } cleanup{dir};
    dist::save_checkpoint(pg, member, path, checkpoint_of(rank));
    struct stat st;
    if (rank == 0 && ::stat(path.c_str(), &st) != 0) {
      failure = "save_checkpoint returned before rank 0's file existed";
      return false;
    }
    if (!same_checkpoint(dist::load_checkpoint(pg, member, path), checkpoint_of(0))) return false;
    // Rank 0's failures reach every rank, which then all go on together.
    if (!every_rank_throws([&] { dist::load_checkpoint(pg, member, rank == 0 ? dir + "/missing" : path); },
                           TSR_NOT_FOUND, "load_checkpoint: rank 0 could not read", "a missing file"))
      return false;
    if (!every_rank_throws(
            [&] { dist::save_checkpoint(pg, member, rank == 0 ? dir + "/no/such/dir/x" : path, checkpoint_of(rank)); },
            TSR_NOT_FOUND, "save_checkpoint: rank 0 could not write", "an unwritable path"))
      return false;
    // A file that is not a checkpoint fails to parse on every rank, naming the user's path.
    if (rank == 0) {
      FILE* f = std::fopen(path.c_str(), "wb");
      std::fputs("not a checkpoint", f);
      std::fclose(f);
    }
    if (!every_rank_throws([&] { dist::load_checkpoint(pg, member, path); }, TSR_DATA_LOSS,
                           rank == 0 ? path : std::string("(the bytes rank 0 read)"), "a corrupt file"))
      return false;
    pg.barrier().wait();
    return true;
  }

  // On `pg`, this process's group of `world` ranks (of any engine across processes).
  bool scenario_ddp(dist::DeviceGroup& pg) {
    // Equivalence: R ranks on shards of a global batch == one model on the whole batch.
    auto model = small_model(100 + static_cast<uint64_t>(rank));
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

}  // namespace fabric_test
