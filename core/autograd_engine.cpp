// Autograd engine (first cut: modes only; recording lands next).
#include "autograd_engine.hpp"

namespace tsr::core {

namespace {
thread_local bool t_grad_mode = true;
thread_local bool t_inference_mode = false;
}  // namespace

bool grad_mode() { return t_grad_mode && !t_inference_mode; }
void set_grad_mode(bool on) { t_grad_mode = on; }
bool inference_mode() { return t_inference_mode; }
void set_inference_mode(bool on) { t_inference_mode = on; }
bool should_record(const CallCtx&) { return false; }
tsr_status_t call_recorded(CallCtx& ctx) { return ctx.op->impl(ctx); }
tsr_status_t check_out_autograd(const CallCtx&) { return nullptr; }
tsr_status_t check_inplace_allowed(const CallCtx&, Tensor*) { return nullptr; }
tsr_status_t rebase_history(Tensor*, Tensor*) { return nullptr; }
void free_autograd_meta(Tensor*) {}

}  // namespace tsr::core

namespace tsr::core::ag_api {
static tsr_status_t pending() { return make_status(TSR_UNIMPLEMENTED, "autograd: not yet available"); }
int32_t tensor_requires_grad(const tsr_tensor_t*) { return 0; }
tsr_status_t tensor_set_requires_grad(tsr_tensor_t*, int32_t) { return pending(); }
int32_t tensor_is_leaf(const tsr_tensor_t*) { return 1; }
tsr_status_t tensor_grad(const tsr_tensor_t*, tsr_tensor_t** out) { *out = nullptr; return nullptr; }
tsr_status_t tensor_set_grad(tsr_tensor_t*, tsr_tensor_t*) { return pending(); }
const char* tensor_grad_fn_name(const tsr_tensor_t*) { return nullptr; }
tsr_status_t tensor_detach(tsr_tensor_t*, tsr_tensor_t**) { return pending(); }
tsr_status_t tensor_retain_grad(tsr_tensor_t*) { return pending(); }
tsr_status_t tensor_register_hook(tsr_tensor_t*, tsr_status_t (*)(void*, tsr_tensor_t*, tsr_tensor_t**), void*,
                                  void (*)(void*)) { return pending(); }
uint32_t tensor_version(const tsr_tensor_t*) { return 0; }
tsr_status_t autograd_backward(size_t, tsr_tensor_t* const*, tsr_tensor_t* const*, int32_t, int32_t) { return pending(); }
tsr_status_t autograd_grad(size_t, tsr_tensor_t* const*, tsr_tensor_t* const*, size_t, tsr_tensor_t* const*, int32_t,
                           int32_t, int32_t, tsr_tensor_t**) { return pending(); }
int32_t grad_mode_enabled(void) { return grad_mode() ? 1 : 0; }
void set_grad_mode(int32_t on) { tsr::core::set_grad_mode(on != 0); }
int32_t inference_mode_enabled(void) { return inference_mode() ? 1 : 0; }
void set_inference_mode(int32_t on) { tsr::core::set_inference_mode(on != 0); }
}  // namespace tsr::core::ag_api
