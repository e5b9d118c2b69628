// The JS Tensor class: inspection, conversions and views over the C ABI (through the SDK's
// tsr::Tensor, which owns one reference).
#include "tensor.hpp"

#include "blob.hpp"

namespace tsrnode {

namespace {

// Marks JS objects made by this class, so that a plain object with the right shape is never
// taken for a tensor (napi_unwrap alone cannot tell).
const napi_type_tag kTensorTag = {0x7465737365726131ULL, 0x6e6f64652d74656eULL};

constexpr int64_t kTensorOverheadBytes = 1024;

}  // namespace

int64_t to_int(Napi::Env env, const Napi::Value& v, const std::string& what) {
  if (v.IsBigInt()) {
    bool lossless = false;
    int64_t i = v.As<Napi::BigInt>().Int64Value(&lossless);
    if (!lossless) throw_type_error(env, what + ": BigInt out of the int64 range");
    return i;
  }
  if (v.IsNumber()) {
    double d = v.As<Napi::Number>().DoubleValue();
    // 2^63 is exact in a double; anything at or beyond it does not fit an int64.
    if (d == static_cast<double>(static_cast<int64_t>(d)) && d < 9223372036854775808.0 && d >= -9223372036854775808.0)
      return static_cast<int64_t>(d);
  }
  throw_type_error(env, what + ": expected an integer");
}

std::vector<int64_t> int_list_args(const Napi::CallbackInfo& info, size_t start, const std::string& what) {
  std::vector<int64_t> out;
  if (info.Length() > start && info[start].IsArray()) {
    Napi::Array a = info[start].As<Napi::Array>();
    for (uint32_t i = 0; i < a.Length(); ++i) out.push_back(to_int(info.Env(), a.Get(i), what));
    return out;
  }
  for (size_t i = start; i < info.Length(); ++i) out.push_back(to_int(info.Env(), info[i], what));
  return out;
}

Napi::Function TensorWrap::define(Napi::Env env) {
  using W = TensorWrap;
  return DefineClass(env, "Tensor",
                     {
                         InstanceAccessor<&W::shape>("shape"),
                         InstanceAccessor<&W::strides>("strides"),
                         InstanceAccessor<&W::dtype>("dtype"),
                         InstanceAccessor<&W::device>("device"),
                         InstanceAccessor<&W::ndim>("ndim"),
                         InstanceAccessor<&W::numel>("numel"),
                         InstanceAccessor<&W::storage_offset>("storageOffset"),
                         InstanceAccessor<&W::is_contiguous>("isContiguous"),
                         InstanceAccessor<&W::data_ptr>("dataPtr"),
                         InstanceAccessor<&W::requires_grad, &W::set_requires_grad>("requiresGrad"),
                         InstanceAccessor<&W::grad, &W::set_grad>("grad"),
                         InstanceAccessor<&W::is_leaf>("isLeaf"),
                         InstanceAccessor<&W::grad_fn>("gradFn"),
                         InstanceAccessor<&W::version>("version"),
                         InstanceMethod<&W::shares_storage>("sharesStorage"),
                         InstanceMethod<&W::to_typed_array>("_toTypedArray"),
                         InstanceMethod<&W::to>("_to"),
                         InstanceMethod<&W::copy_>("copy_"),
                         InstanceMethod<&W::reshape>("reshape"),
                         InstanceMethod<&W::view>("view"),
                         InstanceMethod<&W::transpose>("transpose"),
                         InstanceMethod<&W::permute>("permute"),
                         InstanceMethod<&W::expand>("expand"),
                         InstanceMethod<&W::slice>("slice"),
                         InstanceMethod<&W::select>("select"),
                         InstanceMethod<&W::narrow>("narrow"),
                         InstanceMethod<&W::squeeze>("squeeze"),
                         InstanceMethod<&W::unsqueeze>("unsqueeze"),
                         InstanceMethod<&W::contiguous>("contiguous"),
                         InstanceMethod<&W::clone>("clone"),
                         InstanceMethod<&W::requires_grad_>("requiresGrad_"),
                         InstanceMethod<&W::detach>("detach"),
                         InstanceMethod<&W::retain_grad>("retainGrad"),
                         InstanceMethod<&W::backward>("_backward"),
                         InstanceMethod<&W::dispose_js>("dispose"),
                         InstanceAccessor<&W::is_disposed>("isDisposed"),
                     });
}

Napi::Value TensorWrap::wrap(Napi::Env env, tsr::Tensor t) {
  if (!t.defined()) return env.Null();
  tsr_tensor_t* h = t.release();
  try {
    return addon_data(env).tensor_ctor.New({Napi::External<tsr_tensor_t>::New(env, h)});
  } catch (...) {
    tsr::api()->tensor_release(h);  // the constructor failed before adopting it: still ours
    throw;
  }
}

TensorWrap* TensorWrap::unwrap(Napi::Env env, const Napi::Value& v) {
  if (!v.IsObject()) return nullptr;
  bool tagged = false;
  if (napi_check_object_type_tag(env, v, &kTensorTag, &tagged) != napi_ok || !tagged) return nullptr;
  TensorWrap* w = Unwrap(v.As<Napi::Object>());
  if (w) w->live(env);  // a disposed tensor passed anywhere is the caller's error, said here
  return w;
}

void TensorWrap::live(Napi::Env env) const {
  if (!t_.defined()) throw make_error(env, TSR_FAILED_PRECONDITION, "Tensor: used after dispose()");
}

void TensorWrap::dispose() {
  if (!t_.defined()) return;
  int64_t total = 0;
  napi_adjust_external_memory(Env(), -accounted_, &total);
  accounted_ = 0;
  t_.reset();
}

Napi::Value TensorWrap::dispose_js(const Napi::CallbackInfo& info) {
  dispose();
  return info.Env().Undefined();
}

Napi::Value TensorWrap::is_disposed(const Napi::CallbackInfo& info) {
  return Napi::Boolean::New(info.Env(), disposed());
}

TensorWrap::TensorWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<TensorWrap>(info) {
  Napi::Env env = info.Env();
  if (info.Length() != 1 || !info[0].IsExternal())
    throw_type_error(env, "Tensor: use ts.tensor(), ts.zeros() or an op to make tensors");
  NAPI_THROW_IF_FAILED_VOID(env, napi_type_tag_object(env, info.This(), &kTensorTag));
  // Inside ts.tidy(): the scope disposes this tensor at its end unless it is returned.
  AddonData& d = addon_data(env);
  if (!d.tidy_scopes.empty()) {
    napi_ref weak = nullptr;  // weak: the scope never keeps a tensor alive
    NAPI_THROW_IF_FAILED_VOID(env, napi_create_reference(env, info.This(), 0, &weak));
    d.tidy_scopes.back().push_back(weak);
  }
  // Nothing below throws: from here this object owns the reference (until here, wrap() does).
  t_ = tsr::Tensor::adopt(info[0].As<Napi::External<tsr_tensor_t>>().Data());
  // The tensor lives outside the JS heap: tell V8, so that GC runs before a training loop's
  // dropped intermediates pile up. Its elements, plus what a tensor costs the core whatever its
  // size (the tensor and storage objects, the allocator's smallest block: about 1.7 KB per
  // 4-element tensor measured on the CPU backend), or 100k scalars would look free to V8.
  accounted_ = kTensorOverheadBytes + t_.numel() * static_cast<int64_t>(tsr::itemsize(t_.dtype()));
  int64_t total = 0;
  napi_adjust_external_memory(env, accounted_, &total);
}

TensorWrap::~TensorWrap() {
  if (accounted_ == 0) return;
  int64_t total = 0;
  napi_adjust_external_memory(Env(), -accounted_, &total);
}

// ---- inspection ---------------------------------------------------------------------------------

namespace {
Napi::Array int_array(Napi::Env env, const std::vector<int64_t>& v) {
  Napi::Array a = Napi::Array::New(env, v.size());
  for (size_t i = 0; i < v.size(); ++i)
    a.Set(static_cast<uint32_t>(i), Napi::Number::New(env, static_cast<double>(v[i])));
  return a;
}
}  // namespace

Napi::Value TensorWrap::shape(const Napi::CallbackInfo& info) {
  live(info.Env());
  return int_array(info.Env(), t_.sizes());
}
Napi::Value TensorWrap::strides(const Napi::CallbackInfo& info) {
  live(info.Env());
  return int_array(info.Env(), t_.strides());
}
Napi::Value TensorWrap::dtype(const Napi::CallbackInfo& info) {
  live(info.Env());
  return Napi::String::New(info.Env(), dtype_js_name(t_.dtype()));
}
Napi::Value TensorWrap::device(const Napi::CallbackInfo& info) {
  live(info.Env());
  return Napi::String::New(info.Env(), device_string(t_.device().d));
}
Napi::Value TensorWrap::ndim(const Napi::CallbackInfo& info) {
  live(info.Env());
  return Napi::Number::New(info.Env(), static_cast<double>(t_.dim()));
}
Napi::Value TensorWrap::numel(const Napi::CallbackInfo& info) {
  live(info.Env());
  return Napi::Number::New(info.Env(), static_cast<double>(t_.numel()));
}
Napi::Value TensorWrap::storage_offset(const Napi::CallbackInfo& info) {
  live(info.Env());
  return Napi::Number::New(info.Env(), static_cast<double>(t_.storage_offset()));
}
Napi::Value TensorWrap::is_contiguous(const Napi::CallbackInfo& info) {
  live(info.Env());
  return Napi::Boolean::New(info.Env(), t_.is_contiguous());
}
Napi::Value TensorWrap::data_ptr(const Napi::CallbackInfo& info) {
  live(info.Env());
  return Napi::BigInt::New(info.Env(), static_cast<uint64_t>(reinterpret_cast<uintptr_t>(t_.data_ptr())));
}
Napi::Value TensorWrap::shares_storage(const Napi::CallbackInfo& info) {
  live(info.Env());
  TensorWrap* o = info.Length() > 0 ? unwrap(info.Env(), info[0]) : nullptr;
  if (!o) throw_type_error(info.Env(), "sharesStorage: expected a Tensor");
  return Napi::Boolean::New(info.Env(), t_.shares_storage(o->t_));
}

// ---- data ---------------------------------------------------------------------------------------

// _toTypedArray(copy: boolean)
Napi::Value TensorWrap::to_typed_array(const Napi::CallbackInfo& info) {
  live(info.Env());
  Napi::Env env = info.Env();
  return guard(env, [&] { return tsrnode::to_typed_array(env, t_, info.Length() > 0 && info[0].ToBoolean()); });
}

// _to(dtype | null, device | null, copy: boolean)
Napi::Value TensorWrap::to(const Napi::CallbackInfo& info) {
  live(info.Env());
  Napi::Env env = info.Env();
  return guard(env, [&] {
    tsr_dtype_t dt = TSR_DTYPE_UNDEFINED;
    tsr_device_t dev = t_.device().d;
    if (info.Length() > 0 && !info[0].IsNull() && !info[0].IsUndefined()) dt = parse_dtype(env, info[0], "to");
    if (info.Length() > 1 && !info[1].IsNull() && !info[1].IsUndefined()) dev = parse_device(env, info[1], "to");
    bool copy = info.Length() > 2 && info[2].ToBoolean();
    tsr_tensor_t* out = nullptr;
    tsr::check(tsr::api()->tensor_to(t_.get(), dt, dev, copy ? 1 : 0, &out));
    // tensor_to returns the same tensor when nothing changes: keep the JS object's identity.
    if (out == t_.get()) {
      tsr::api()->tensor_release(out);
      return info.This();
    }
    return wrap(env, tsr::Tensor::adopt(out));
  });
}

Napi::Value TensorWrap::copy_(const Napi::CallbackInfo& info) {
  live(info.Env());
  Napi::Env env = info.Env();
  TensorWrap* src = info.Length() > 0 ? unwrap(env, info[0]) : nullptr;
  if (!src) throw_type_error(env, "copy_: expected a source Tensor");
  return guard(env, [&]() -> Napi::Value {
    t_.copy_(src->t_);
    return info.This();
  });
}

// ---- views and copies ---------------------------------------------------------------------------

Napi::Value TensorWrap::reshape(const Napi::CallbackInfo& info) {
  live(info.Env());
  return guard(info.Env(), [&] { return wrap(info.Env(), t_.reshape(int_list_args(info, 0, "reshape"))); });
}
Napi::Value TensorWrap::view(const Napi::CallbackInfo& info) {
  live(info.Env());
  return guard(info.Env(), [&] { return wrap(info.Env(), t_.view(int_list_args(info, 0, "view"))); });
}
Napi::Value TensorWrap::transpose(const Napi::CallbackInfo& info) {
  live(info.Env());
  Napi::Env env = info.Env();
  if (info.Length() < 2) throw_type_error(env, "transpose: expected two dims");
  return guard(env, [&] {
    return wrap(env, t_.transpose(to_int(env, info[0], "transpose"), to_int(env, info[1], "transpose")));
  });
}
Napi::Value TensorWrap::permute(const Napi::CallbackInfo& info) {
  live(info.Env());
  return guard(info.Env(), [&] { return wrap(info.Env(), t_.permute(int_list_args(info, 0, "permute"))); });
}
Napi::Value TensorWrap::expand(const Napi::CallbackInfo& info) {
  live(info.Env());
  return guard(info.Env(), [&] { return wrap(info.Env(), t_.expand(int_list_args(info, 0, "expand"))); });
}
// slice(dim, start = 0, end = size, step = 1): Python-style bounds (negative wrap, clamped).
Napi::Value TensorWrap::slice(const Napi::CallbackInfo& info) {
  live(info.Env());
  Napi::Env env = info.Env();
  return guard(env, [&] {
    auto arg = [&](size_t i, int64_t dflt) {
      return info.Length() > i && !info[i].IsUndefined() && !info[i].IsNull() ? to_int(env, info[i], "slice") : dflt;
    };
    return wrap(env, t_.slice(arg(0, 0), arg(1, 0), arg(2, INT64_MAX), arg(3, 1)));
  });
}
Napi::Value TensorWrap::select(const Napi::CallbackInfo& info) {
  live(info.Env());
  Napi::Env env = info.Env();
  if (info.Length() < 2) throw_type_error(env, "select: expected (dim, index)");
  return guard(env,
               [&] { return wrap(env, t_.select(to_int(env, info[0], "select"), to_int(env, info[1], "select"))); });
}
Napi::Value TensorWrap::narrow(const Napi::CallbackInfo& info) {
  live(info.Env());
  Napi::Env env = info.Env();
  if (info.Length() < 3) throw_type_error(env, "narrow: expected (dim, start, length)");
  return guard(env, [&] {
    return wrap(
        env, t_.narrow(to_int(env, info[0], "narrow"), to_int(env, info[1], "narrow"), to_int(env, info[2], "narrow")));
  });
}
Napi::Value TensorWrap::squeeze(const Napi::CallbackInfo& info) {
  live(info.Env());
  Napi::Env env = info.Env();
  return guard(env, [&] {
    if (info.Length() == 0 || info[0].IsUndefined() || info[0].IsNull()) return wrap(env, t_.squeeze());
    return wrap(env, t_.squeeze(to_int(env, info[0], "squeeze")));
  });
}
Napi::Value TensorWrap::unsqueeze(const Napi::CallbackInfo& info) {
  live(info.Env());
  Napi::Env env = info.Env();
  if (info.Length() < 1) throw_type_error(env, "unsqueeze: expected a dim");
  return guard(env, [&] { return wrap(env, t_.unsqueeze(to_int(env, info[0], "unsqueeze"))); });
}
Napi::Value TensorWrap::contiguous(const Napi::CallbackInfo& info) {
  live(info.Env());
  return guard(info.Env(), [&]() -> Napi::Value {
    tsr::Tensor c = t_.contiguous();
    if (c.get() == t_.get()) return info.This();
    return wrap(info.Env(), std::move(c));
  });
}
Napi::Value TensorWrap::clone(const Napi::CallbackInfo& info) {
  live(info.Env());
  return guard(info.Env(), [&] { return wrap(info.Env(), t_.clone()); });
}

}  // namespace tsrnode
