// Which kernels an op reaches: run its OpInfo samples on cpu:0 (where every kernel exists) with a
// tessera.dispatch_trace observer (abi/tessera/ext_dispatch_trace.h) and collect every kernel
// lookup, forward and backward. `tessera kernels --device D --reach` compares the sets with the
// kernels device type D registered: the registry's own answer to "what must a backend implement
// for this op to run", not a hand-kept list. Composites decompose the same way on every device,
// so the CPU's trace is the device's, except where an op dispatches differently per device
// (a fused kernel registered for one device type only), which the reach report then overstates.
#include <mutex>

#include "runner.hpp"
#include "runner_util.hpp"
#include "tessera/ext_dispatch_trace.h"

namespace tsr::conformance {
namespace {

struct Recorder {
  std::mutex mu;
  std::set<KernelUse>* into = nullptr;
};

void observe(void* user, const char* op, tsr_device_t, int32_t dtype, int32_t) {
  auto* r = static_cast<Recorder*>(user);
  std::lock_guard<std::mutex> lock(r->mu);
  if (r->into) r->into->insert(KernelUse{op, static_cast<tsr_dtype_t>(dtype)});
}

bool is_floating(tsr_dtype_t dt) { return dt == TSR_F16 || dt == TSR_BF16 || dt == TSR_F32 || dt == TSR_F64; }

}  // namespace

ReachTrace trace_reach(tsr_runtime_t* rt, const OpInfo& info, tsr_dtype_t dt, uint64_t seed) {
  ReachTrace out;
  tsr::set_runtime(rt);
  const tsr_api_t* api = tsr::api();
  auto* trace = static_cast<const tsr_dispatch_trace_t*>(api->get_extension(rt, TSR_DISPATCH_TRACE_EXTENSION));
  if (!trace) {
    out.error = "the core does not publish " TSR_DISPATCH_TRACE_EXTENSION;
    return out;
  }
  Recorder rec;
  if (tsr_status_t st = trace->set_observer(rt, observe, &rec)) {
    out.error = api->status_message(st);
    api->status_free(st);
    return out;
  }
  const Where cpu{tsr::Device::cpu(), dt};
  try {
    for (const Sample& s : info.samples(seed)) {
      Tensors in;
      for (const Tensor& t : s.inputs)
        in.push_back(t.defined() && t.dtype() == TSR_F64 ? t.to(dt) : t);
      try {
        {
          std::lock_guard<std::mutex> lock(rec.mu);
          rec.into = &out.forward;
        }
        detail::run_sample(s, in, cpu);
        if (info.differentiable && is_floating(dt)) {
          std::vector<int> wrt = detail::grad_inputs_of(s, in);
          if (!wrt.empty()) {
            // Leaves, the forward and the cotangents off the record: only the gradient
            // computation itself (the engine and the backward formulas) counts.
            std::lock_guard<std::mutex> lock(rec.mu);
            rec.into = nullptr;
          }
          if (!wrt.empty()) {
            tsr::EnableGradGuard grad_on;
            Tensors leaves;
            for (const Tensor& t : in) leaves.push_back(t.defined() ? t.detach().clone() : t);
            Tensors wrt_leaves;
            for (int i : wrt) wrt_leaves.push_back(leaves[static_cast<size_t>(i)].requires_grad_(true));
            Tensors results = detail::run_sample(s, leaves, cpu);
            Tensors outs, cots;
            for (const Tensor& r : results)
              if (r.defined() && r.requires_grad() && is_floating(r.dtype())) {
                outs.push_back(r);
                cots.push_back(tsr::ones(r.sizes(), r.dtype(), r.device()));
              }
            if (!outs.empty()) {
              {
                std::lock_guard<std::mutex> lock(rec.mu);
                rec.into = &out.backward;
              }
              tsr::autograd::grad(outs, wrt_leaves, cots, false, false, true);
            }
          }
        }
      } catch (const std::exception& e) {
        if (out.error.empty()) out.error = e.what();  // e.g. a sample meant to fail
      }
    }
  } catch (const std::exception& e) {
    out.error = e.what();
  }
  {
    std::lock_guard<std::mutex> lock(rec.mu);
    rec.into = nullptr;
  }
  if (tsr_status_t st = trace->set_observer(rt, nullptr, nullptr)) api->status_free(st);
  // What only the backward needs (its forward re-run is already in `forward`).
  for (auto it = out.backward.begin(); it != out.backward.end();)
    it = out.forward.count(*it) ? out.backward.erase(it) : std::next(it);
  return out;
}

}  // namespace tsr::conformance
