// Plugin ops' gradients (ABI 1.4): the engine's GradCtx as a tsr_backward_call_t. The plugin's
// formula calls ops through the table like any host, so it runs on every device and, under
// create_graph, is recorded itself (double backward through plugin ops).
#include <vector>

#include "autograd/autograd.hpp"
#include "runtime/runtime.hpp"

namespace tsr::core {

void plugin_op_backward(GradCtx& g) {
  const tsr_op_s* op = g.op_;
  if (op == nullptr || op->extra.backward == nullptr)
    throw tsr::Error(TSR_INTERNAL, std::string(g.op_name()) + ": no plugin backward to call");
  const size_t n = g.nargs_;
  tsr_value_t args[GradCtx::kMaxArgs];
  int32_t needs[GradCtx::kMaxArgs] = {};
  tsr_tensor_t* grad_inputs[GradCtx::kMaxArgs] = {};
  for (size_t i = 0; i < n; ++i) {
    args[i] = g.args_[i];
    if (args[i].tag == TSR_VALUE_TENSOR) {  // the engine cleared it; the saved tensor stands in
      args[i].u.tensor = g.saved_inputs_[i].get();
      if (args[i].u.tensor == nullptr) args[i].tag = TSR_VALUE_NONE;
    }
    needs[i] = g.needs_[i];
  }
  std::vector<tsr_tensor_t*> outputs, grads;
  for (const tsr::Tensor& t : g.saved_outputs_) outputs.push_back(t.get());
  for (const tsr::Tensor& t : *g.grads_) grads.push_back(t.get());
  tsr_backward_call_t call{};
  call.struct_size = sizeof(call);
  call.api = tsr::api();
  call.runtime = g.runtime();
  call.op_name = g.op_name();
  call.args = args;
  call.nargs = n;
  call.outputs = outputs.data();
  call.noutputs = outputs.size();
  call.grad_outputs = grads.data();
  call.needs_input_grad = needs;
  call.grad_inputs = grad_inputs;
  call.user_data = op->extra.user_data;
  tsr_status_t st = op->extra.backward(&call);
  // Adopt what was set before reporting anything, so nothing leaks on either path.
  tsr::Tensor results[GradCtx::kMaxArgs];
  for (size_t i = 0; i < n; ++i) results[i] = tsr::Tensor::adopt(grad_inputs[i]);
  if (st) {
    const tsr_api_t* api = tsr::api();
    tsr_code_t code = api->status_code(st);
    std::string msg = api->status_message(st);
    api->status_free(st);
    const std::string name = g.op_name();
    throw tsr::Error(code, msg.compare(0, name.size(), name) == 0 ? msg : name + " backward: " + msg);
  }
  for (size_t i = 0; i < n; ++i)
    if (needs[i] && results[i].defined()) g.set(i, std::move(results[i]));
}

}  // namespace tsr::core
