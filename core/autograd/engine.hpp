// The autograd engine's side of the core: per-tensor autograd state, recording of op calls
// into graph nodes, and the checks in-place and out= calls need. Formulas see only GradCtx
// (autograd.hpp).
#pragma once

#include "ops/op_impl.hpp"
#include "runtime/thread_local.hpp"

namespace tsr::core {

// Per-thread modes (API: set_grad_mode / set_inference_mode), read and set on every recorded
// call: inline, on `__thread` state (runtime/thread_local.hpp; engine.cpp defines them).
extern TSR_TLS_HOT bool t_grad_mode;
extern TSR_TLS_HOT bool t_inference_mode;
inline bool grad_mode() { return t_grad_mode && !t_inference_mode; }
inline void set_grad_mode(bool on) { t_grad_mode = on; }
inline bool inference_mode() { return t_inference_mode; }
inline void set_inference_mode(bool on) { t_inference_mode = on; }

// Whether a call with these arguments must be recorded (grad mode on and any floating tensor
// argument requires grad). Cheap: the dispatcher calls it on every op call.
bool should_record(const CallCtx& ctx);
// Runs a primitive op's impl with recording off and records one node for it.
tsr_status_t call_recorded(CallCtx& ctx);

// out= is not differentiable: refuses an out= call whose inputs require grad.
tsr_status_t check_out_autograd(const CallCtx& ctx);
// Refuses in-place writes to leaves that require grad (while recording).
tsr_status_t check_inplace_allowed(const CallCtx& ctx, Tensor* self);
// After `self` was overwritten with `result` in place: self takes result's history.
tsr_status_t rebase_history(Tensor* self, Tensor* result);

// The engine (autograd/engine.cpp).
tsr_status_t backward(size_t n, tsr_tensor_t* const* tensors, tsr_tensor_t* const* grads, bool retain_graph,
                      bool create_graph);
tsr_status_t grad(size_t noutputs, tsr_tensor_t* const* outputs, tsr_tensor_t* const* grad_outputs, size_t ninputs,
                  tsr_tensor_t* const* inputs, bool retain_graph, bool create_graph, bool allow_unused,
                  tsr_tensor_t** grads_out);

// Sets this thread's grad mode for the guard's lifetime.
class GradModeGuard {
 public:
  explicit GradModeGuard(bool on) : prev_(grad_mode_raw()) { set_grad_mode(on); }
  ~GradModeGuard() { set_grad_mode(prev_); }
  GradModeGuard(const GradModeGuard&) = delete;
  GradModeGuard& operator=(const GradModeGuard&) = delete;
  static bool grad_mode_raw() { return t_grad_mode; }

 private:
  bool prev_;
};

struct Node;
bool is_view_node(const Node* n);

// View and copy autograd (API entries): `view` was made from `base` by `kind`.
enum class ViewKind { Reshape, Transpose, Permute, Expand, Slice, Select, AsStrided, Identity };
struct ViewParams {
  int64_t a = 0, b = 0, c = 0, d = 0;  // Transpose(a,b); Slice(dim a, start b, end c, step d); Select(dim a, index b)
  std::vector<int64_t> dims{};         // Permute
};
// Records the view's history when grad mode is on and base requires grad.
tsr_status_t record_view(Tensor* base, Tensor* view, ViewKind kind, const ViewParams& p);
// dst.copy_(src) history: dst takes a node passing the gradient to src.
tsr_status_t record_copy(Tensor* dst, Tensor* src);
tsr_status_t check_copy_allowed(Tensor* dst, Tensor* src);

// The API table's autograd entries (tsr_api_t, "autograd" section).
namespace ag_api {
int32_t tensor_requires_grad(const tsr_tensor_t* t);
tsr_status_t tensor_set_requires_grad(tsr_tensor_t* t, int32_t on);
int32_t tensor_is_leaf(const tsr_tensor_t* t);
tsr_status_t tensor_grad(const tsr_tensor_t* t, tsr_tensor_t** out);
tsr_status_t tensor_set_grad(tsr_tensor_t* t, tsr_tensor_t* grad);
const char* tensor_grad_fn_name(const tsr_tensor_t* t);
tsr_status_t tensor_detach(tsr_tensor_t* t, tsr_tensor_t** out);
tsr_status_t tensor_retain_grad(tsr_tensor_t* t);
tsr_status_t tensor_register_hook(tsr_tensor_t* t, tsr_status_t (*fn)(void*, tsr_tensor_t*, tsr_tensor_t**), void* user,
                                  void (*free_user)(void*));
tsr_status_t tensor_register_post_accumulate_grad_hook(tsr_tensor_t* t, tsr_status_t (*fn)(void*, tsr_tensor_t*),
                                                       void* user, void (*free_user)(void*), uint64_t* handle);
tsr_status_t tensor_remove_post_accumulate_grad_hook(tsr_tensor_t* t, uint64_t handle);
uint32_t tensor_version(const tsr_tensor_t* t);
tsr_status_t autograd_backward(size_t n, tsr_tensor_t* const* tensors, tsr_tensor_t* const* grads, int32_t retain_graph,
                               int32_t create_graph);
tsr_status_t autograd_grad(size_t noutputs, tsr_tensor_t* const* outputs, tsr_tensor_t* const* grad_outputs,
                           size_t ninputs, tsr_tensor_t* const* inputs, int32_t retain_graph, int32_t create_graph,
                           int32_t allow_unused, tsr_tensor_t** grads_out);
int32_t grad_mode_enabled(void);
void set_grad_mode(int32_t on);
int32_t inference_mode_enabled(void);
void set_inference_mode(int32_t on);
}  // namespace ag_api

}  // namespace tsr::core
