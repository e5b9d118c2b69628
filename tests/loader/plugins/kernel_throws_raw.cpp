// An op library whose raw meta function and raw kernel (no SDK thunk) let C++ exceptions escape,
// which the ABI forbids: the core contains them and keeps their what() in the status.
#include <stdexcept>

#include "tessera/plugin.hpp"

namespace {

// kthrow::meta_throws(Tensor x): the meta function throws.
tsr_status_t meta_throws(const tsr_meta_call_t*) { throw std::runtime_error("boom from raw meta"); }

// kthrow::kernel_throws(Tensor x): a valid meta (output like x), then the kernel throws.
tsr_status_t meta_like_input(const tsr_meta_call_t* c) {
  tsr_tensor_t* x = c->args[0].u.tensor;
  tsr_tensor_spec_t& o = c->outputs[0];
  o.dtype = c->api->tensor_dtype(x);
  o.device = c->api->tensor_device(x);
  o.ndim = c->api->tensor_ndim(x);
  for (int32_t d = 0; d < o.ndim; ++d) o.sizes[d] = c->api->tensor_sizes(x)[d];
  *c->dispatch_dtype = o.dtype;
  return nullptr;
}
tsr_status_t kernel_throws(const tsr_kernel_call_t*) { throw std::runtime_error("boom from raw kernel"); }
tsr_status_t kernel_throws_int(const tsr_kernel_call_t*) { throw 42; }

void init(tsr::Registrar& r) {
  int32_t cpu = -1;
  tsr::check(r.api(), r.api()->device_type_lookup(r.runtime(), "cpu", &cpu));
  r.op("kthrow::meta_throws(Tensor x) -> Tensor", meta_throws);
  r.op("kthrow::kernel_throws(Tensor x) -> Tensor", meta_like_input);
  r.kernel("kthrow::kernel_throws", "kthrow::kernel_throws_cpu", cpu, TSR_DTYPE_BIT(TSR_F32), kernel_throws);
  r.kernel("kthrow::kernel_throws", "kthrow::kernel_throws_int_cpu", cpu, TSR_DTYPE_BIT(TSR_F64), kernel_throws_int);
}

}  // namespace

TSR_DEFINE_PLUGIN("kthrow", "0.1", "raw meta and kernels that throw", nullptr, init, nullptr)
