// Autograd: the Tensor's gradient members and the module's grad-mode switches. Grad mode is per
// thread in the core: these switches act on the JS thread; async ops copy the caller's mode
// onto their worker thread (ops.cpp).
#include "autograd.hpp"

#include "tensor.hpp"

namespace tsrnode {

Napi::Value TensorWrap::requires_grad(const Napi::CallbackInfo& info) {
  live(info.Env());
  return Napi::Boolean::New(info.Env(), t_.requires_grad());
}
void TensorWrap::set_requires_grad(const Napi::CallbackInfo& info, const Napi::Value& v) {
  live(info.Env());
  if (!v.IsBoolean()) throw_type_error(info.Env(), "requiresGrad: expected a boolean");
  guard(info.Env(), [&] { t_.requires_grad_(v.As<Napi::Boolean>().Value()); });
}
// requiresGrad_(on = true) -> this
Napi::Value TensorWrap::requires_grad_(const Napi::CallbackInfo& info) {
  live(info.Env());
  bool on = info.Length() == 0 || info[0].IsUndefined() || info[0].ToBoolean();
  guard(info.Env(), [&] { t_.requires_grad_(on); });
  return info.This();
}
Napi::Value TensorWrap::grad(const Napi::CallbackInfo& info) {
  live(info.Env());
  return guard(info.Env(), [&] { return wrap(info.Env(), t_.grad()); });
}
void TensorWrap::set_grad(const Napi::CallbackInfo& info, const Napi::Value& v) {
  live(info.Env());
  Napi::Env env = info.Env();
  if (v.IsNull() || v.IsUndefined()) {
    guard(env, [&] { t_.set_grad(tsr::Tensor()); });
    return;
  }
  TensorWrap* g = unwrap(env, v);
  if (!g) throw_type_error(env, "grad: expected a Tensor or null");
  guard(env, [&] { t_.set_grad(g->t_); });
}
Napi::Value TensorWrap::is_leaf(const Napi::CallbackInfo& info) {
  live(info.Env());
  return Napi::Boolean::New(info.Env(), t_.is_leaf());
}
Napi::Value TensorWrap::grad_fn(const Napi::CallbackInfo& info) {
  live(info.Env());
  const char* n = t_.grad_fn_name();
  return n ? Napi::Value(Napi::String::New(info.Env(), n)) : info.Env().Null();
}
Napi::Value TensorWrap::version(const Napi::CallbackInfo& info) {
  live(info.Env());
  return Napi::Number::New(info.Env(), static_cast<double>(t_.version()));
}
Napi::Value TensorWrap::detach(const Napi::CallbackInfo& info) {
  live(info.Env());
  return guard(info.Env(), [&] { return wrap(info.Env(), t_.detach()); });
}
Napi::Value TensorWrap::retain_grad(const Napi::CallbackInfo& info) {
  live(info.Env());
  guard(info.Env(), [&] { t_.retain_grad(); });
  return info.This();
}
// _backward(grad | null, retainGraph, createGraph)
Napi::Value TensorWrap::backward(const Napi::CallbackInfo& info) {
  live(info.Env());
  Napi::Env env = info.Env();
  tsr::Tensor g;
  if (info.Length() > 0 && !info[0].IsNull() && !info[0].IsUndefined()) {
    TensorWrap* w = unwrap(env, info[0]);
    if (!w) throw_type_error(env, "backward: the gradient must be a Tensor");
    g = w->t_;
  }
  bool retain = info.Length() > 1 && info[1].ToBoolean();
  bool create = info.Length() > 2 && info[2].ToBoolean();
  guard(env, [&] { t_.backward(g, retain, create); });
  return env.Undefined();
}

// ---- module functions -----------------------------------------------------------------------------

Napi::Value is_grad_enabled(const Napi::CallbackInfo& info) {
  return Napi::Boolean::New(info.Env(), tsr::api()->grad_mode_enabled() != 0);
}
// setGradEnabled(on) -> the previous mode
Napi::Value set_grad_enabled(const Napi::CallbackInfo& info) {
  bool prev = tsr::api()->grad_mode_enabled() != 0;
  tsr::api()->set_grad_mode(info.Length() > 0 && info[0].ToBoolean() ? 1 : 0);
  return Napi::Boolean::New(info.Env(), prev);
}
Napi::Value is_inference_mode(const Napi::CallbackInfo& info) {
  return Napi::Boolean::New(info.Env(), tsr::api()->inference_mode_enabled() != 0);
}
Napi::Value set_inference_mode(const Napi::CallbackInfo& info) {
  bool prev = tsr::api()->inference_mode_enabled() != 0;
  tsr::api()->set_inference_mode(info.Length() > 0 && info[0].ToBoolean() ? 1 : 0);
  return Napi::Boolean::New(info.Env(), prev);
}

namespace {
std::vector<tsr::Tensor> tensor_array(Napi::Env env, const Napi::Value& v, const char* what, bool allow_null) {
  if (!v.IsArray()) throw_type_error(env, std::string("autograd.grad: ") + what + " must be an array of Tensors");
  Napi::Array a = v.As<Napi::Array>();
  std::vector<tsr::Tensor> out;
  for (uint32_t i = 0; i < a.Length(); ++i) {
    Napi::Value e = a.Get(i);
    if (allow_null && (e.IsNull() || e.IsUndefined())) {
      out.emplace_back();
      continue;
    }
    TensorWrap* w = TensorWrap::unwrap(env, e);
    if (!w)
      throw_type_error(env, std::string("autograd.grad: ") + what + "[" + std::to_string(i) + "] is not a Tensor");
    out.push_back(w->tensor());
  }
  return out;
}
}  // namespace

// autogradGrad(outputs, inputs, gradOutputs | null, retainGraph, createGraph, allowUnused) -> (Tensor|null)[]
Napi::Value autograd_grad(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2) throw_type_error(env, "autograd.grad: expected (outputs, inputs)");
  auto outputs = tensor_array(env, info[0], "outputs", false);
  auto inputs = tensor_array(env, info[1], "inputs", false);
  std::vector<tsr::Tensor> grad_outputs;
  if (info.Length() > 2 && !info[2].IsNull() && !info[2].IsUndefined())
    grad_outputs = tensor_array(env, info[2], "gradOutputs", true);
  bool retain = info.Length() > 3 && info[3].ToBoolean();
  bool create = info.Length() > 4 && info[4].ToBoolean();
  bool unused = info.Length() > 5 && info[5].ToBoolean();
  return guard(env, [&]() -> Napi::Value {
    auto grads = tsr::autograd::grad(outputs, inputs, grad_outputs, retain, create, unused);
    Napi::Array r = Napi::Array::New(env, grads.size());
    for (size_t i = 0; i < grads.size(); ++i)
      r.Set(static_cast<uint32_t>(i), TensorWrap::wrap(env, std::move(grads[i])));
    return r;
  });
}

}  // namespace tsrnode
