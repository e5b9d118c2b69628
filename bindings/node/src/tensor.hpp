// The JS Tensor class: one tsr::Tensor reference per JS object, released by its finalizer.
// index.js adds the op methods (t.add, t.sum, ...) to its prototype from the registry.
#pragma once

#include <vector>

#include "common.hpp"

namespace tsrnode {

class TensorWrap : public Napi::ObjectWrap<TensorWrap> {
 public:
  static Napi::Function define(Napi::Env env);
  // A new JS Tensor owning `t` (an undefined tensor gives null).
  static Napi::Value wrap(Napi::Env env, tsr::Tensor t);
  // The tensor behind a JS value, or nullptr when `v` is not a Tensor.
  static TensorWrap* unwrap(Napi::Env env, const Napi::Value& v);

  explicit TensorWrap(const Napi::CallbackInfo& info);
  ~TensorWrap() override;
  const tsr::Tensor& tensor() const { return t_; }
  // Drops the tensor reference now instead of at garbage collection (dispose(), ts.tidy()).
  void dispose();
  bool disposed() const { return !t_.defined(); }
  // Set by ts.keep(): never disposed by a tidy scope.
  bool kept = false;
  // Marks the results a tidy scope hands back (tidy.cpp).
  bool keep_mark = false;

 private:
  // Throws FAILED_PRECONDITION when the tensor was disposed.
  void live(Napi::Env env) const;
  Napi::Value dispose_js(const Napi::CallbackInfo& info);
  Napi::Value is_disposed(const Napi::CallbackInfo& info);
  // Inspection.
  Napi::Value shape(const Napi::CallbackInfo& info);
  Napi::Value strides(const Napi::CallbackInfo& info);
  Napi::Value dtype(const Napi::CallbackInfo& info);
  Napi::Value device(const Napi::CallbackInfo& info);
  Napi::Value ndim(const Napi::CallbackInfo& info);
  Napi::Value numel(const Napi::CallbackInfo& info);
  Napi::Value storage_offset(const Napi::CallbackInfo& info);
  Napi::Value is_contiguous(const Napi::CallbackInfo& info);
  Napi::Value data_ptr(const Napi::CallbackInfo& info);
  Napi::Value shares_storage(const Napi::CallbackInfo& info);
  // Data.
  Napi::Value to_typed_array(const Napi::CallbackInfo& info);
  Napi::Value to(const Napi::CallbackInfo& info);
  Napi::Value copy_(const Napi::CallbackInfo& info);
  // Views (share storage) and copies.
  Napi::Value reshape(const Napi::CallbackInfo& info);
  Napi::Value view(const Napi::CallbackInfo& info);
  Napi::Value transpose(const Napi::CallbackInfo& info);
  Napi::Value permute(const Napi::CallbackInfo& info);
  Napi::Value expand(const Napi::CallbackInfo& info);
  Napi::Value slice(const Napi::CallbackInfo& info);
  Napi::Value select(const Napi::CallbackInfo& info);
  Napi::Value narrow(const Napi::CallbackInfo& info);
  Napi::Value squeeze(const Napi::CallbackInfo& info);
  Napi::Value unsqueeze(const Napi::CallbackInfo& info);
  Napi::Value contiguous(const Napi::CallbackInfo& info);
  Napi::Value clone(const Napi::CallbackInfo& info);
  // Autograd (autograd.cpp).
  Napi::Value requires_grad(const Napi::CallbackInfo& info);
  void set_requires_grad(const Napi::CallbackInfo& info, const Napi::Value& v);
  Napi::Value requires_grad_(const Napi::CallbackInfo& info);
  Napi::Value grad(const Napi::CallbackInfo& info);
  void set_grad(const Napi::CallbackInfo& info, const Napi::Value& v);
  Napi::Value is_leaf(const Napi::CallbackInfo& info);
  Napi::Value grad_fn(const Napi::CallbackInfo& info);
  Napi::Value version(const Napi::CallbackInfo& info);
  Napi::Value detach(const Napi::CallbackInfo& info);
  Napi::Value retain_grad(const Napi::CallbackInfo& info);
  Napi::Value backward(const Napi::CallbackInfo& info);

  tsr::Tensor t_;
  int64_t accounted_ = 0;  // bytes reported to V8 as external memory
};

// An int from a JS number (integral) or BigInt; `what` names the argument in the TypeError.
int64_t to_int(Napi::Env env, const Napi::Value& v, const std::string& what);
// A list of ints from an array (info[start]) or from the remaining arguments (t.reshape(2, 3)).
std::vector<int64_t> int_list_args(const Napi::CallbackInfo& info, size_t start, const std::string& what);

}  // namespace tsrnode
