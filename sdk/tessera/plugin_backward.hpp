// Tessera SDK (vendor side): gradient formulas for a plugin's own ops (ABI 1.4,
// tsr_op_def_t.backward), written with the host SDK's tensors and ops, as the core writes its
// own (so a formula runs on every device and is itself differentiable under create_graph).
//
//   void my_op_backward(tsr::BackwardCall& c) {
//     tsr::Tensor g = c.grad(0);                     // undefined: no gradient reached result 0
//     if (!g.defined()) return;
//     if (c.needs(0)) c.set(0, g * 2.0);             // d/d input 0
//   }
//   r.op(kSchema, TSR_META(my_op_meta), TSR_BACKWARD(my_op_backward));
//
// Thread-safety: formulas may run on any thread that runs a backward pass, several at once.
// Errors: throw tsr::Error (or call tsr::fail); the thunk turns it into the backward's status.
#pragma once

#include "tessera/plugin.hpp"
#include "tessera/tessera.hpp"

namespace tsr {

class BackwardCall : public detail::ArgsView {
 public:
  explicit BackwardCall(const tsr_backward_call_t* c)
      : ArgsView(c->op_name ? c->op_name : "backward", c->args, c->nargs), c_(c) {}
  const tsr_backward_call_t* raw() const { return c_; }
  const char* op_name() const { return op_; }
  void* user_data() const { return c_->user_data; }
  // Tensor argument i of the forward call (undefined when it was None).
  Tensor input(size_t i) const { return Tensor::borrow(arg_tensor(i)); }
  // Result i of the forward call.
  Tensor output(size_t i = 0) const {
    if (i >= c_->noutputs) fail(TSR_INTERNAL, op_, ": output ", i, " missing (", c_->noutputs, " saved)");
    return Tensor::borrow(c_->outputs[i]);
  }
  // The gradient of result i; undefined when none reached it (read it as zero).
  Tensor grad(size_t i = 0) const {
    if (i >= c_->noutputs) fail(TSR_INTERNAL, op_, ": gradient ", i, " missing (", c_->noutputs, " results)");
    return c_->grad_outputs[i] ? Tensor::borrow(c_->grad_outputs[i]) : Tensor();
  }
  // Whether argument i wants a gradient.
  bool needs(size_t i) const { return i < c_->nargs && c_->needs_input_grad[i] != 0; }
  // The gradient of argument i (of the input's shape, or one that broadcasts to it).
  void set(size_t i, const Tensor& g) {
    if (!needs(i) || !g.defined()) return;
    if (c_->grad_inputs[i]) c_->api->tensor_release(c_->grad_inputs[i]);
    Tensor keep = g;
    c_->grad_inputs[i] = keep.release();
  }

 private:
  const tsr_backward_call_t* c_;
};

namespace detail {
template <void (*Fn)(BackwardCall&)>
tsr_status_t backward_thunk(const tsr_backward_call_t* call) noexcept {
  try {
    if (detail::api_slot().load() == nullptr) set_api(call->api);  // a plugin's own SDK copy
    RuntimeScope scope(call->runtime);
    BackwardCall bc(call);
    Fn(bc);
    return nullptr;
  } catch (...) {
    return status_from_current_exception(call->api, call->op_name ? call->op_name : "backward");
  }
}
}  // namespace detail

template <void (*Fn)(BackwardCall&)>
constexpr tsr_backward_fn_t make_backward() {
  return &detail::backward_thunk<Fn>;
}
#define TSR_BACKWARD(fn) (::tsr::make_backward<&(fn)>())

}  // namespace tsr
