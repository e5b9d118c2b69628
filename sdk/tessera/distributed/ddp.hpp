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
// about bucket_bytes (25 MiB), in reverse registration order, the order backward reaches them;
// after backward each bucket's gradients are packed into one flat tensor, all-reduced (averaged)
// in one call, and written back: one collective per bucket instead of one per parameter. A
// parameter that got no gradient (unused in this step's forward, perhaps only on some ranks)
// takes part with zeros, so no rank waits forever, and gets the average of the ranks' gradients.
//
// Differences from PyTorch: backward goes through ddp.backward(loss) rather than
// loss.backward(); every parameter is treated as possibly unused (find_unused_parameters=True)
// at no extra cost; and the buckets are reduced after backward, not while it runs. Overlapping
// them with backward needs to know when a parameter's gradient is complete, which Tessera's
// autograd ABI does not signal yet: a tensor hook sees each incoming gradient of a parameter
// used twice separately (PyTorch's register_post_accumulate_grad_hook is the missing piece).
// Every rank must call backward (or no_sync backward) the same number of times, in step.
// Thread-safety: one thread uses a DistributedDataParallel at a time.
#pragma once

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
      if (buckets_.empty() || buckets_.back().bytes + bytes > bucket_bytes ||
          buckets_.back().dtype != p.dtype() || !(buckets_.back().device == p.device()))
        buckets_.push_back(Bucket{{}, {}, 0, 0, p.dtype(), p.device(), Tensor()});
      Bucket& b = buckets_.back();
      b.params.push_back(p);
      b.offsets.push_back(b.numel);
      b.numel += p.numel();
      b.bytes += bytes;
    }
    for (Bucket& b : buckets_) b.flat = zeros({b.numel}, b.dtype, b.device);
  }
  DistributedDataParallel(const DistributedDataParallel&) = delete;
  DistributedDataParallel& operator=(const DistributedDataParallel&) = delete;

  Tensor operator()(const Tensor& x) { return (*module_)(x); }
  nn::Module& module() { return *module_; }
  size_t num_buckets() const { return buckets_.size(); }

  // loss.backward(), then every bucket not yet reduced during backward is reduced; afterwards
  // every parameter's .grad is the average over the ranks (under no_sync: the local sum).
  void backward(const Tensor& loss) {
    loss.backward();
    if (no_sync_) return;
    NoGradGuard no_grad;
    for (Bucket& b : buckets_) {
      for (size_t i = 0; i < b.params.size(); ++i) {
        Tensor g = b.params[i].grad();
        Tensor slot = b.flat.narrow(0, b.offsets[i], b.params[i].numel());
        if (g.defined())
          slot.copy_(g.reshape({-1}));
        else
          slot.fill_(0.0);
      }
      group_.all_reduce({b.flat}, ReduceOp::Avg).wait();
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
    Tensor flat;
  };
  std::shared_ptr<nn::Module> module_;
  const DeviceGroup& group_;
  std::vector<Bucket> buckets_;
  bool no_sync_ = false;
};

}  // namespace tsr::distributed
