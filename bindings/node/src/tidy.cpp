// ts.tidy(fn): tensors made while fn runs are disposed when it returns, except the ones it
// returns. Needed because Node runs N-API finalizers from the event loop (SetImmediate), not
// during garbage collection: a synchronous training loop that never yields would keep every
// intermediate tensor's memory until it ends.
#include "tidy.hpp"

#include "tensor.hpp"

namespace tsrnode {

// tidyBegin()
Napi::Value tidy_begin(const Napi::CallbackInfo& info) {
  addon_data(info.Env()).tidy_scopes.emplace_back();
  return info.Env().Undefined();
}

// tidyEnd(keep: Tensor[]): disposes the innermost scope's tensors but `keep` (and those passed
// to ts.keep()); kept ones move to the enclosing scope, which disposes them unless it keeps
// them too.
Napi::Value tidy_end(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  AddonData& d = addon_data(env);
  if (d.tidy_scopes.empty()) throw make_error(env, TSR_FAILED_PRECONDITION, "tidy: no open scope");
  std::vector<napi_ref> scope = std::move(d.tidy_scopes.back());
  d.tidy_scopes.pop_back();
  std::vector<TensorWrap*> marked;
  if (info.Length() > 0 && info[0].IsArray()) {
    Napi::Array keep = info[0].As<Napi::Array>();
    for (uint32_t i = 0; i < keep.Length(); ++i) {
      TensorWrap* w = nullptr;
      try {
        w = TensorWrap::unwrap(env, keep.Get(i));
      } catch (const Napi::Error&) {  // a disposed result: nothing to keep
      }
      if (w) {
        w->keep_mark = true;
        marked.push_back(w);
      }
    }
  }
  for (napi_ref r : scope) {
    napi_value v = nullptr;
    TensorWrap* w = nullptr;
    // v is NULL when the tensor was already collected; its finalizer releases it.
    if (napi_get_reference_value(env, r, &v) == napi_ok && v &&
        napi_unwrap(env, v, reinterpret_cast<void**>(&w)) != napi_ok)
      w = nullptr;
    if (w && w->keep_mark && !w->kept && !d.tidy_scopes.empty()) {
      d.tidy_scopes.back().push_back(r);  // the enclosing scope owns it now
      continue;
    }
    if (w && !w->keep_mark && !w->kept) w->dispose();
    napi_delete_reference(env, r);
  }
  for (TensorWrap* w : marked) w->keep_mark = false;
  return env.Undefined();
}

// keep(t): t survives every tidy scope.
Napi::Value keep(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  TensorWrap* w = info.Length() > 0 ? TensorWrap::unwrap(env, info[0]) : nullptr;
  if (!w) throw_type_error(env, "keep: expected a Tensor");
  w->kept = true;
  return info[0];
}

}  // namespace tsrnode
