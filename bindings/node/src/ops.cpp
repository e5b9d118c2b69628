// Registry ops: their schemas as data for index.js (which builds ts.ops from them), and calls,
// on the JS thread or on a libuv worker thread (async variants).
#include "ops.hpp"

#include <algorithm>
#include <cstdint>

#include "convert.hpp"
#include "tensor.hpp"

namespace tsrnode {

// listOps() -> [{index, name, schema, numOutputs, args: [{name, kind, optional, mutable,
// hasDefault, default}]}]
Napi::Value list_ops(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    const auto& ops = op_table();
    Napi::Array out = Napi::Array::New(env, ops.size());
    for (size_t i = 0; i < ops.size(); ++i) {
      const OpInfo& op = ops[i];
      Napi::Object o = Napi::Object::New(env);
      o.Set("index", Napi::Number::New(env, static_cast<double>(i)));
      o.Set("name", op.name);
      o.Set("schema", op.schema);
      o.Set("numOutputs", Napi::Number::New(env, static_cast<double>(op.num_outputs)));
      Napi::Array args = Napi::Array::New(env, op.args.size());
      for (size_t j = 0; j < op.args.size(); ++j) {
        const tsr_op_arg_t& a = op.args[j];
        Napi::Object d = Napi::Object::New(env);
        d.Set("name", a.name ? a.name : "");
        d.Set("kind", arg_kind_name(a.kind));
        d.Set("optional", Napi::Boolean::New(env, a.optional != 0));
        d.Set("mutable", Napi::Boolean::New(env, a.is_mutable != 0));
        d.Set("hasDefault", Napi::Boolean::New(env, a.has_default != 0));
        d.Set("default", a.has_default ? value_to_js(env, a.default_value) : env.Undefined());
        args.Set(static_cast<uint32_t>(j), d);
      }
      o.Set("args", args);
      out.Set(static_cast<uint32_t>(i), o);
    }
    return out;
  });
}

namespace {

const OpInfo& op_at(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const auto& ops = op_table();
  if (info.Length() < 2 || !info[0].IsNumber() || !info[1].IsArray()) throw_type_error(env, "callOp(index, args)");
  uint32_t i = info[0].As<Napi::Number>().Uint32Value();
  if (i >= ops.size()) throw_type_error(env, "callOp: no op number " + std::to_string(i));
  return ops[i];
}

// The argument an in-place op returned (Tensor(a!) -> Tensor(a!)), so that JS gets back the
// same object it passed; SIZE_MAX when the output is a new tensor.
size_t aliased_arg(const OpInfo& op, const BoxedArgs& args, tsr_tensor_t* out) {
  const tsr_api_t* a = tsr::api();
  for (size_t i = 0; i < args.size(); ++i) {
    const tsr_value_t& v = args.at(i);
    if (!op.args[i].is_mutable || v.tag != TSR_VALUE_TENSOR || !v.u.tensor) continue;
    tsr_tensor_t* in = v.u.tensor;
    if (in == out) return i;
    // The core may hand back a new handle viewing the same elements.
    if (a->tensor_shares_storage(in, out) && a->tensor_data(in) == a->tensor_data(out) &&
        a->tensor_ndim(in) == a->tensor_ndim(out) &&
        std::equal(a->tensor_sizes(in), a->tensor_sizes(in) + a->tensor_ndim(in), a->tensor_sizes(out)) &&
        std::equal(a->tensor_strides(in), a->tensor_strides(in) + a->tensor_ndim(in), a->tensor_strides(out)))
      return i;
  }
  return SIZE_MAX;
}

// Outputs -> a Tensor (one output), an array (several) or undefined (none). in_js(i): the JS
// object of argument i, for in-place results.
template <class InJs>
Napi::Value results(Napi::Env env, const OpInfo& op, const BoxedArgs& args, std::vector<tsr::Tensor>& outs,
                    InJs&& in_js) {
  std::vector<Napi::Value> vals;
  for (tsr::Tensor& t : outs) {
    size_t a = aliased_arg(op, args, t.get());
    vals.push_back(a != SIZE_MAX ? in_js(a) : TensorWrap::wrap(env, std::move(t)));
  }
  if (vals.empty()) return env.Undefined();
  if (vals.size() == 1) return vals[0];
  Napi::Array arr = Napi::Array::New(env, vals.size());
  for (size_t i = 0; i < vals.size(); ++i) arr.Set(static_cast<uint32_t>(i), vals[i]);
  return arr;
}

tsr_status_t run(const OpInfo& op, const BoxedArgs& args, std::vector<tsr::Tensor>& outs) {
  std::vector<tsr_tensor_t*> raw(op.num_outputs, nullptr);
  tsr_status_t st = tsr::api()->op_call(op.op, args.data(), args.size(), raw.data(), raw.size());
  if (!st)
    for (tsr_tensor_t* t : raw) outs.push_back(tsr::Tensor::adopt(t));
  return st;
}

}  // namespace

// callOp(index, args[]) -> Tensor | Tensor[] | undefined
Napi::Value call_op(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const OpInfo& op = op_at(info);
  Napi::Array js_args = info[1].As<Napi::Array>();
  return guard(env, [&] {
    BoxedArgs args(env, op, js_args, false);
    std::vector<tsr::Tensor> outs;
    tsr::check(run(op, args, outs));
    return results(env, op, args, outs, [&](size_t i) { return js_args.Get(static_cast<uint32_t>(i)); });
  });
}

namespace {

// One op on a libuv worker thread. The arguments are converted on the JS thread (N-API is not
// usable elsewhere) and hold references to every input tensor, so the inputs outlive the call
// even if their JS objects are collected meanwhile.
class OpWorker : public Napi::AsyncWorker {
 public:
  OpWorker(Napi::Env env, const OpInfo& op, std::unique_ptr<BoxedArgs> args, Napi::Array js_args)
      : Napi::AsyncWorker(env, "tessera.op"),
        op_(op),
        args_(std::move(args)),
        js_args_(Napi::Persistent(js_args)),
        deferred_(Napi::Promise::Deferred::New(env)),
        // Grad and inference modes are per thread: run the op under the caller's.
        grad_mode_(tsr::api()->grad_mode_enabled()),
        inference_mode_(tsr::api()->inference_mode_enabled()) {}

  Napi::Promise promise() const { return deferred_.Promise(); }

 protected:
  void Execute() override {
    const tsr_api_t* a = tsr::api();
    const int32_t prev_grad = a->grad_mode_enabled(), prev_inf = a->inference_mode_enabled();
    a->set_grad_mode(grad_mode_);
    a->set_inference_mode(inference_mode_);
    tsr_status_t st = run(op_, *args_, outs_);
    a->set_grad_mode(prev_grad);
    a->set_inference_mode(prev_inf);
    if (st) {
      code_ = a->status_code(st);
      std::string msg = a->status_message(st);
      a->status_free(st);
      SetError(msg);
    }
  }
  void OnOK() override {
    Napi::Env env = Env();
    try {
      Napi::Array js_args = js_args_.Value();
      deferred_.Resolve(guard(env, [&] {
        return results(env, op_, *args_, outs_, [&](size_t i) { return js_args.Get(static_cast<uint32_t>(i)); });
      }));
    } catch (const Napi::Error& e) {
      deferred_.Reject(e.Value());
    }
  }
  void OnError(const Napi::Error& e) override {
    e.Value().Set("code", Napi::String::New(Env(), code_name(code_)));
    deferred_.Reject(e.Value());
  }

 private:
  const OpInfo& op_;
  std::unique_ptr<BoxedArgs> args_;
  Napi::Reference<Napi::Array> js_args_;
  Napi::Promise::Deferred deferred_;
  int32_t grad_mode_, inference_mode_;
  std::vector<tsr::Tensor> outs_;
  tsr_code_t code_ = TSR_UNKNOWN;
};

}  // namespace

// callOpAsync(index, args[]) -> Promise<Tensor | Tensor[] | undefined>. Argument errors throw
// synchronously (TypeError); errors of the op itself reject the promise.
Napi::Value call_op_async(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const OpInfo& op = op_at(info);
  Napi::Array js_args = info[1].As<Napi::Array>();
  return guard(env, [&] {
    auto args = std::make_unique<BoxedArgs>(env, op, js_args, true);
    auto* w = new OpWorker(env, op, std::move(args), js_args);  // deletes itself when done
    Napi::Promise p = w->promise();
    w->Queue();
    return p;
  });
}

}  // namespace tsrnode
