// The sm100 backend library (loaded by the shell, shell/plugin_shell.cpp, only on a machine with
// a compute capability 10.x GPU): registers, on the cuda backend's device type, kernels that
// override cuda's generic ones on 10.x devices only (predicate: tsr::ComputeCapabilityGate,
// priority kPriority). It adds no device type, allocator or op of its own; the manifest's
// "depends": ["cuda"] makes the loader initialise cuda first, so its device type exists here.
#include <memory>

#include "probe.hpp"
#include "sm100_common.hpp"

#ifndef TSR_SM100_PLUGIN_VERSION
#define TSR_SM100_PLUGIN_VERSION "0.0.0"
#endif

namespace tsr::sm100 {

void register_override(Registrar& r, const Context& ctx, const char* op, const char* kernel_name, uint32_t dtype_mask,
                       tsr_kernel_fn_t fn) {
  if (!r.has_op(op)) return;  // registering a kernel for an unknown op would fail the whole init
  r.kernel(op, kernel_name, ctx.cuda_type, dtype_mask, fn, kPriority, tsr::ComputeCapabilityGate::predicate,
           ctx.gate);
}

void throw_cuda(cudaError_t err, const char* op, const char* what, int device) {
  (void)cudaGetLastError();
  fail(err == cudaErrorMemoryAllocation ? TSR_RESOURCE_EXHAUSTED : TSR_INTERNAL, op, ": ", what,
       " failed on cuda:", device, ": ", cudaGetErrorString(err));
}

DeviceGuard::DeviceGuard(int device) {
  if (cudaGetDevice(&prev_) != cudaSuccess) prev_ = -1;
  if (prev_ != device) TSR_SM100_CUDA_CHECK(cudaSetDevice(device), "sm100", device);
}
DeviceGuard::~DeviceGuard() {
  if (prev_ >= 0) (void)cudaSetDevice(prev_);
}

namespace {

void* init(Registrar& r) {
  int32_t cuda_type = -1;
  if (tsr_status_t st = r.api()->device_type_lookup(r.runtime(), "cuda", &cuda_type)) {
    r.api()->status_free(st);
    fail(TSR_FAILED_PRECONDITION, "sm100: the cuda device type is not registered (the cuda plugin must load first)");
  }
  auto gate = std::make_unique<tsr::ComputeCapabilityGate>();
  gate->bind(r.api(), r.runtime(), 10);
  const Context ctx{cuda_type, gate.get()};
  register_scaled_mm(r, ctx);
  register_quantize(r, ctx);
  return gate.release();  // the predicate's user_data: freed at shutdown
}

void shutdown(void* state) { delete static_cast<tsr::ComputeCapabilityGate*>(state); }

}  // namespace
}  // namespace tsr::sm100

TSR_DEFINE_PLUGIN("sm100", TSR_SM100_PLUGIN_VERSION, "Tessera Blackwell (compute capability 10.x) kernels",
                  tsr::sm100::score, tsr::sm100::init, tsr::sm100::shutdown)
