// Tessera SDK: autograd on the host side (included by tessera/tessera.hpp).
//
//   Tensor w = tsr::randn({3, 3}).requires_grad_();
//   Tensor loss = tsr::sum(tsr::matmul(x, w));
//   loss.backward();            // w.grad() now holds d loss / d w
//   { tsr::NoGradGuard g; ... } // nothing recorded inside
//
// Grad mode and inference mode are per thread.
#pragma once

#include <functional>
#include <memory>

#include "tessera/tessera.hpp"

namespace tsr {

inline bool Tensor::requires_grad() const { return api()->tensor_requires_grad(h()) != 0; }
inline Tensor& Tensor::requires_grad_(bool on) {
  check(api()->tensor_set_requires_grad(h(), on ? 1 : 0));
  return *this;
}
inline bool Tensor::is_leaf() const { return api()->tensor_is_leaf(h()) != 0; }
inline Tensor Tensor::grad() const {
  tsr_tensor_t* g = nullptr;
  check(api()->tensor_grad(h(), &g));
  return adopt(g);
}
inline void Tensor::set_grad(const Tensor& g) { check(api()->tensor_set_grad(h(), g.get())); }
inline Tensor Tensor::detach() const {
  return make([&](auto** o) { return api()->tensor_detach(h(), o); });
}
inline void Tensor::retain_grad() { check(api()->tensor_retain_grad(h())); }
inline void Tensor::backward(const Tensor& grad, bool retain_graph, bool create_graph) const {
  tsr_tensor_t* t = h();
  tsr_tensor_t* g = grad.get();
  check(api()->autograd_backward(1, &t, &g, retain_graph ? 1 : 0, create_graph ? 1 : 0));
}
inline void Tensor::backward() const { backward(Tensor()); }
inline const char* Tensor::grad_fn_name() const { return api()->tensor_grad_fn_name(h()); }
inline uint32_t Tensor::version() const { return api()->tensor_version(h()); }

namespace detail {
using HookFn = std::function<Tensor(const Tensor&)>;
inline tsr_status_t run_hook(void* user, tsr_tensor_t* grad, tsr_tensor_t** replacement) {
  try {
    Tensor r = (*static_cast<HookFn*>(user))(Tensor::borrow(grad));
    *replacement = r.release();
    return nullptr;
  } catch (const Error& e) {
    return api()->status_create(e.code(), e.what());
  } catch (const std::exception& e) {
    return api()->status_create(TSR_INTERNAL, (std::string("gradient hook threw: ") + e.what()).c_str());
  }
}
inline void free_hook(void* user) { delete static_cast<HookFn*>(user); }
using PostHookFn = std::function<void(const Tensor&)>;
inline tsr_status_t run_post_hook(void* user, tsr_tensor_t* leaf) {
  try {
    (*static_cast<PostHookFn*>(user))(Tensor::borrow(leaf));
    return nullptr;
  } catch (const Error& e) {
    return api()->status_create(e.code(), e.what());
  } catch (const std::exception& e) {
    return api()->status_create(TSR_INTERNAL, (std::string("post-accumulate-grad hook threw: ") + e.what()).c_str());
  }
}
inline void free_post_hook(void* user) { delete static_cast<PostHookFn*>(user); }
}  // namespace detail

template <class F>
uint64_t Tensor::register_post_accumulate_grad_hook(F fn) {
  auto* user = new detail::PostHookFn(std::move(fn));
  uint64_t handle = 0;
  tsr_status_t st = api()->tensor_register_post_accumulate_grad_hook(h(), detail::run_post_hook, user,
                                                                     detail::free_post_hook, &handle);
  if (st) detail::free_post_hook(user);
  check(st);
  return handle;
}

inline void Tensor::remove_post_accumulate_grad_hook(uint64_t handle) {
  check(api()->tensor_remove_post_accumulate_grad_hook(h(), handle));
}

template <class F>
void Tensor::register_hook(F fn) {
  auto* user = new detail::HookFn(std::move(fn));
  tsr_status_t st = api()->tensor_register_hook(h(), detail::run_hook, user, detail::free_hook);
  if (st) detail::free_hook(user);
  check(st);
}

// Disables recording on this thread for the guard's lifetime (torch.no_grad()).
class NoGradGuard {
 public:
  NoGradGuard() : prev_(api()->grad_mode_enabled() != 0) { api()->set_grad_mode(0); }
  ~NoGradGuard() { api()->set_grad_mode(prev_ ? 1 : 0); }
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool prev_;
};

// Re-enables recording inside a NoGradGuard (torch.enable_grad()).
class EnableGradGuard {
 public:
  EnableGradGuard() : prev_(api()->grad_mode_enabled() != 0) { api()->set_grad_mode(1); }
  ~EnableGradGuard() { api()->set_grad_mode(prev_ ? 1 : 0); }
  EnableGradGuard(const EnableGradGuard&) = delete;
  EnableGradGuard& operator=(const EnableGradGuard&) = delete;

 private:
  bool prev_;
};

// No recording and no version counting (torch.inference_mode()).
class InferenceMode {
 public:
  InferenceMode() : prev_(api()->inference_mode_enabled() != 0) { api()->set_inference_mode(1); }
  ~InferenceMode() { api()->set_inference_mode(prev_ ? 1 : 0); }
  InferenceMode(const InferenceMode&) = delete;
  InferenceMode& operator=(const InferenceMode&) = delete;

 private:
  bool prev_;
};

inline bool is_grad_enabled() { return api()->grad_mode_enabled() != 0; }

namespace autograd {

// Gradients of `outputs` with respect to `inputs` (torch.autograd.grad). grad_outputs may be
// empty for one-element outputs. Unused inputs give undefined tensors when allow_unused.
inline std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                                const std::vector<Tensor>& grad_outputs = {}, bool retain_graph = false,
                                bool create_graph = false, bool allow_unused = false) {
  std::vector<tsr_tensor_t*> outs, gouts, ins;
  for (const Tensor& t : outputs) outs.push_back(t.get());
  for (size_t i = 0; i < outputs.size(); ++i)
    gouts.push_back(i < grad_outputs.size() ? grad_outputs[i].get() : nullptr);
  for (const Tensor& t : inputs) ins.push_back(t.get());
  std::vector<tsr_tensor_t*> res(inputs.size(), nullptr);
  check(api()->autograd_grad(outs.size(), outs.data(), gouts.data(), ins.size(), ins.data(),
                             retain_graph || create_graph ? 1 : 0, create_graph ? 1 : 0, allow_unused ? 1 : 0,
                             res.data()));
  std::vector<Tensor> r;
  for (tsr_tensor_t* t : res) r.push_back(Tensor::adopt(t));
  return r;
}

// Backpropagates from several tensors at once.
inline void backward(const std::vector<Tensor>& tensors, const std::vector<Tensor>& grads = {},
                     bool retain_graph = false, bool create_graph = false) {
  std::vector<tsr_tensor_t*> ts, gs;
  for (const Tensor& t : tensors) ts.push_back(t.get());
  for (size_t i = 0; i < tensors.size(); ++i) gs.push_back(i < grads.size() ? grads[i].get() : nullptr);
  check(api()->autograd_backward(ts.size(), ts.data(), gs.data(), retain_graph ? 1 : 0, create_graph ? 1 : 0));
}

}  // namespace autograd
}  // namespace tsr
