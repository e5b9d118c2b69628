// Tessera SDK: DistributedDataParallel, data parallelism over a process group
// (torch.nn.parallel.DistributedDataParallel).
//
//   auto pg = tsr::distributed::init_process_group();
//   tsr::distributed::DistributedDataParallel ddp(model, pg);   // rank 0's weights everywhere
//   Tensor loss = loss_fn(ddp(x_local), y_local);
//   ddp.backward(loss);      // loss.backward() + the gradients averaged over the ranks
//   optimizer.step();
//   { auto guard = ddp.no_sync(); ddp.backward(loss2); }   // accumulate locally, no communication
//
// At construction the parameters and buffers are broadcast from rank 0 (a parameter whose shape
// differs on some rank is an error naming both ranks). The parameters are grouped into buckets of
// about bucket_bytes (25 MiB), in reverse registration order, the order backward reaches them.
// During backward, a post-accumulate-grad hook on each parameter copies its gradient into its
// bucket's flat tensor as soon as the gradient is complete; when a bucket is full it is
// all-reduced (averaged) in one call that runs on the group's communication thread while
// backward computes the earlier layers. Buckets are issued in bucket order on every rank, as
// collectives must be. When backward returns, the buckets still waiting (a parameter that got no
// gradient: unused in this step's forward, perhaps only on some ranks, takes part with zeros, so
// no rank waits forever) are issued, all are waited for, and the averages written back to .grad.
//
// Differences from PyTorch: backward goes through ddp.backward(loss) rather than
// loss.backward() (the hooks act only inside it); and every parameter is treated as possibly
// unused (find_unused_parameters=True) at no extra cost.
// Every rank must call backward (or no_sync backward) the same number of times, in step.
// Thread-safety: one thread uses a DistributedDataParallel at a time.
#pragma once

#include <algorithm>
#include <memory>
#include <vector>

#include "tessera/autograd.hpp"
#include "tessera/distributed/collectives.hpp"
#include "tessera/nn/module.hpp"

namespace tsr::distributed {

class DistributedDataParallel {
 public:
  DistributedDataParallel(std::shared_ptr<nn::Module> module, const DeviceGroup& group,
                          size_t bucket_bytes = size_t(25) << 20)
      : module_(std::move(module)), group_(group) {
    NoGradGuard no_grad;
    for (auto& [name, p] : module_->named_parameters()) {
      try {
        group_.broadcast({p}, 0).wait();
      } catch (const Error& e) {
        throw Error(e.code(), "DistributedDataParallel: parameter '" + name + "': " + e.what());
      }
    }
    for (auto& [name, b] : module_->named_buffers()) {
      try {
        group_.broadcast({b}, 0).wait();
      } catch (const Error& e) {
        throw Error(e.code(), "DistributedDataParallel: buffer '" + name + "': " + e.what());
      }
    }
    // Buckets in reverse registration order, one dtype and device each.
    std::vector<Tensor> params = module_->parameters();
    for (auto it = params.rbegin(); it != params.rend(); ++it) {
      const Tensor& p = *it;
      if (!p.requires_grad()) continue;
      const size_t bytes = static_cast<size_t>(p.numel()) * static_cast<size_t>(itemsize(p.dtype()));
      if (buckets_.empty() || buckets_.back().bytes + bytes > bucket_bytes || buckets_.back().dtype != p.dtype() ||
          !(buckets_.back().device == p.device())) {
        Bucket fresh;
        fresh.dtype = p.dtype();
        fresh.device = p.device();
        buckets_.push_back(std::move(fresh));
      }
      Bucket& b = buckets_.back();
      b.params.push_back(p);
      b.offsets.push_back(b.numel);
      b.numel += p.numel();
      b.bytes += bytes;
    }
    for (size_t bi = 0; bi < buckets_.size(); ++bi) {
      Bucket& b = buckets_[bi];
      b.flat = zeros({b.numel}, b.dtype, b.device);
      b.packed.assign(b.params.size(), false);
      for (size_t i = 0; i < b.params.size(); ++i)
        b.hooks.push_back(
            b.params[i].register_post_accumulate_grad_hook([this, bi, i](const Tensor&) { on_gradient_ready(bi, i); }));
    }
  }
  DistributedDataParallel(const DistributedDataParallel&) = delete;
  DistributedDataParallel& operator=(const DistributedDataParallel&) = delete;
  ~DistributedDataParallel() {
    for (Bucket& b : buckets_)
      for (size_t i = 0; i < b.params.size(); ++i) b.params[i].remove_post_accumulate_grad_hook(b.hooks[i]);
  }

  Tensor operator()(const Tensor& x) { return (*module_)(x); }
  nn::Module& module() { return *module_; }
  size_t num_buckets() const { return buckets_.size(); }
  // Buckets whose all-reduce was issued while the last backward was still running (for tests
  // and benchmarks of the overlap).
  size_t buckets_issued_during_backward() const { return issued_during_backward_; }

  // loss.backward() with each full bucket all-reduced as backward goes; afterwards every
  // parameter's .grad is the average over the ranks (under no_sync: the local sum).
  void backward(const Tensor& loss) {
    if (no_sync_) {
      loss.backward();
      return;
    }
    for (Bucket& b : buckets_) {
      b.ready = 0;
      std::fill(b.packed.begin(), b.packed.end(), false);
      b.work = Work();
    }
    next_to_issue_ = 0;
    armed_ = true;
    try {
      loss.backward();
    } catch (...) {
      armed_ = false;
      for (Bucket& b : buckets_) b.work = Work();  // waits for what was issued
      throw;
    }
    armed_ = false;
    issued_during_backward_ = next_to_issue_;
    NoGradGuard no_grad;
    for (Bucket& b : buckets_) {  // unused parameters take part with zeros
      for (size_t i = 0; i < b.params.size(); ++i)
        if (!b.packed[i]) b.flat.narrow(0, b.offsets[i], b.params[i].numel()).fill_(0.0);
      b.ready = b.params.size();
    }
    issue_ready();
    for (Bucket& b : buckets_) {
      b.work.wait();
      b.work = Work();
      for (size_t i = 0; i < b.params.size(); ++i) {
        Tensor& p = b.params[i];
        Tensor avg = b.flat.narrow(0, b.offsets[i], p.numel()).reshape(p.sizes());
        Tensor g = p.grad();
        if (g.defined())
          g.copy_(avg);
        else
          p.set_grad(avg.clone());
      }
    }
  }
  // While the guard lives, backward accumulates gradients locally without communicating.
  class NoSync {
   public:
    explicit NoSync(DistributedDataParallel& d) : d_(d) { d_.no_sync_ = true; }
    ~NoSync() { d_.no_sync_ = false; }
    NoSync(const NoSync&) = delete;
    NoSync& operator=(const NoSync&) = delete;

   private:
    DistributedDataParallel& d_;
  };
  NoSync no_sync() { return NoSync(*this); }

 private:
  struct Bucket {
    std::vector<Tensor> params;
    std::vector<int64_t> offsets;
    int64_t numel = 0;
    size_t bytes = 0;
    tsr_dtype_t dtype = TSR_F32;
    Device device;
    Tensor flat;                  // the bucket's gradients, packed, all-reduced in place
    std::vector<uint64_t> hooks;  // per parameter: its post-accumulate-grad hook
    std::vector<bool> packed;     // per parameter: its gradient is in flat (this backward)
    size_t ready = 0;             // parameters packed
    Work work;                    // the bucket's all-reduce, once issued
  };

  // A parameter's gradient is complete for this backward pass: pack it, and issue every bucket
  // that is now full, in bucket order (a full bucket waits for the ones before it, so that every
  // rank issues the same collectives in the same order).
  void on_gradient_ready(size_t bi, size_t i) {
    if (!armed_) return;  // a backward outside ddp.backward, or under no_sync
    Bucket& b = buckets_[bi];
    if (b.packed[i]) return;
    NoGradGuard no_grad;
    b.flat.narrow(0, b.offsets[i], b.params[i].numel()).copy_(b.params[i].grad().reshape({-1}));
    b.packed[i] = true;
    ++b.ready;
    issue_ready();
  }
  void issue_ready() {
    while (next_to_issue_ < buckets_.size() &&
           buckets_[next_to_issue_].ready == buckets_[next_to_issue_].params.size()) {
      Bucket& b = buckets_[next_to_issue_++];
      b.work = group_.all_reduce({b.flat}, ReduceOp::Avg);
    }
  }

  std::shared_ptr<nn::Module> module_;
  const DeviceGroup& group_;
  std::vector<Bucket> buckets_;
  bool no_sync_ = false;
  bool armed_ = false;        // inside ddp.backward's loss.backward()
  size_t next_to_issue_ = 0;  // buckets before it have been issued this backward
  size_t issued_during_backward_ = 0;
};

}  // namespace tsr::distributed
