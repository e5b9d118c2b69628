// Tessera SDK: DataParallel, one process over several devices (torch.nn.DataParallel).
//
//   auto model = make_model();                                  // on devices[0]
//   tsr::distributed::DataParallel dp(model, {Device::cpu(0), Device::cpu(1)}, make_model);
//   Tensor loss = loss_fn(dp(x), y);   // x split along dim 0 over the devices, output on devices[0]
//   loss.backward();                   // model's .grad: the gradient of the whole batch
//   optimizer.step();                  // an optimizer over model->parameters()
//
// Each forward scatters the input along `dim` in torch.chunk's pieces (fewer replicas run when the
// batch has fewer rows than devices), replicates the module onto the other devices with
// Module::replicate_from (parameters copied with autograd history, so backward sums every
// replica's gradient into the original parameters: no separate gradient reduction step), runs
// each replica on its piece, and gathers the outputs onto devices[0] along `dim`.
//
// `make` builds a module shaped like the original; it is called once per extra device, at
// construction, and the replicas' own initial values are never used. The replicas run one after
// another from the calling thread: on devices with streams their kernels still run at once (a
// launch returns before the kernel ends); on virtual CPU devices they share the host's cores
// anyway. Buffers (running statistics) are copied to the replicas each forward and what the
// replicas write to them is dropped, as in PyTorch. For training across processes, or for speed
// on GPUs, prefer DistributedDataParallel (one process per device), as PyTorch advises too.
// Thread-safety: one thread uses a DataParallel at a time.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tessera/nn/module.hpp"
#include "tessera/tessera.hpp"

namespace tsr::distributed {

class DataParallel {
 public:
  DataParallel(std::shared_ptr<nn::Module> module, std::vector<Device> devices,
               const std::function<std::shared_ptr<nn::Module>()>& make, int64_t dim = 0)
      : module_(std::move(module)), devices_(std::move(devices)), dim_(dim) {
    if (!module_) throw Error(TSR_INVALID_ARGUMENT, "DataParallel: module is null");
    if (devices_.empty()) throw Error(TSR_INVALID_ARGUMENT, "DataParallel: no devices given");
    for (Tensor& p : module_->parameters())
      if (!(p.device() == devices_[0]))
        throw Error(TSR_INVALID_ARGUMENT, "DataParallel: the module's parameters must be on devices[0] (" +
                                              devices_[0].str() + "), found one on " + p.device().str());
    for (size_t i = 1; i < devices_.size(); ++i) {
      if (!make) throw Error(TSR_INVALID_ARGUMENT, "DataParallel: more than one device needs a `make` function");
      std::shared_ptr<nn::Module> r = make();
      if (!r) throw Error(TSR_INVALID_ARGUMENT, "DataParallel: make() returned a null module");
      r->replicate_from(*module_, devices_[i]);  // checks that it is built like the module
      replicas_.push_back(std::move(r));
    }
  }

  Tensor operator()(const Tensor& x) { return forward(x); }
  Tensor forward(const Tensor& x) {
    const int64_t n = static_cast<int64_t>(devices_.size());
    if (n == 1) return (*module_)(x.to(devices_[0]));
    std::vector<Tensor> pieces = chunk(x, n, dim_);
    std::vector<Tensor> outs;
    for (size_t i = 0; i < pieces.size(); ++i) {
      Tensor xi = pieces[i].to(devices_[i]);
      if (i == 0) {
        outs.push_back((*module_)(xi));
        continue;
      }
      nn::Module& r = *replicas_[i - 1];
      r.replicate_from(*module_, devices_[i]);
      outs.push_back(r(xi).to(devices_[0]));
    }
    return outs.size() == 1 ? outs[0] : cat(outs, dim_);
  }

  nn::Module& module() { return *module_; }
  const std::vector<Device>& devices() const { return devices_; }

 private:
  std::shared_ptr<nn::Module> module_;
  std::vector<Device> devices_;
  int64_t dim_;
  std::vector<std::shared_ptr<nn::Module>> replicas_;  // for devices_[1..]
};

}  // namespace tsr::distributed
