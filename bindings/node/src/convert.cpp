// JS values -> boxed op arguments, by the kind the core parsed from each op's schema.
#include "convert.hpp"

#include <cmath>

#include "tensor.hpp"

namespace tsrnode {

const std::vector<OpInfo>& op_table() {
  // Built on first use (addon init): C++ statics initialise once even with several Node
  // environments (worker_threads) loading the addon concurrently.
  static const std::vector<OpInfo> table = [] {
    const tsr_api_t* a = tsr::api();
    if (!TSR_HAS_FIELD(a, tsr_api_t, op_arg))
      throw tsr::Error(TSR_FAILED_PRECONDITION, "tessera: the Node binding needs a core of ABI 1.4 or later (op_arg)");
    tsr_runtime_t* r = rt();
    std::vector<OpInfo> ops;
    size_t n = a->op_count(r);
    for (size_t i = 0; i < n; ++i) {
      OpInfo info;
      info.op = a->op_at(r, i);
      if (!info.op) continue;
      info.name = a->op_name(info.op);
      info.schema = a->op_schema(info.op);
      info.num_outputs = a->op_num_outputs(info.op);
      size_t nargs = a->op_num_args(info.op);
      for (size_t j = 0; j < nargs; ++j) {
        tsr_op_arg_t arg{};
        arg.struct_size = sizeof arg;
        tsr::check(a->op_arg(info.op, j, &arg));
        info.args.push_back(arg);
      }
      ops.push_back(std::move(info));
    }
    return ops;
  }();
  return table;
}

const char* arg_kind_name(int32_t kind) {
  switch (kind) {
    case TSR_ARG_TENSOR:
      return "Tensor";
    case TSR_ARG_INT:
      return "int";
    case TSR_ARG_FLOAT:
      return "float";
    case TSR_ARG_BOOL:
      return "bool";
    case TSR_ARG_INT_LIST:
      return "int[]";
    case TSR_ARG_STRING:
      return "str";
    case TSR_ARG_DTYPE:
      return "ScalarType";
    case TSR_ARG_DEVICE:
      return "Device";
    case TSR_ARG_SCALAR:
      return "Scalar";
    case TSR_ARG_TENSOR_LIST:
      return "Tensor[]";
    default:
      return "?";
  }
}

Napi::Value value_to_js(Napi::Env env, const tsr_value_t& v) {
  switch (v.tag) {
    case TSR_VALUE_INT:
      return Napi::Number::New(env, static_cast<double>(v.u.i));
    case TSR_VALUE_DOUBLE:
      return Napi::Number::New(env, v.u.d);
    case TSR_VALUE_BOOL:
      return Napi::Boolean::New(env, v.u.b != 0);
    case TSR_VALUE_STRING:
      return Napi::String::New(env, v.u.str ? v.u.str : "");
    case TSR_VALUE_DTYPE:
      return Napi::String::New(env, dtype_js_name(static_cast<tsr_dtype_t>(v.u.dtype)));
    case TSR_VALUE_DEVICE:
      return Napi::String::New(env, device_string(v.u.device));
    case TSR_VALUE_INT_LIST: {
      Napi::Array a = Napi::Array::New(env, static_cast<size_t>(v.u.ints.len));
      for (int64_t i = 0; i < v.u.ints.len; ++i)
        a.Set(static_cast<uint32_t>(i), Napi::Number::New(env, static_cast<double>(v.u.ints.data[i])));
      return a;
    }
    default:
      return env.Null();
  }
}

namespace {

tsr_value_t none() {
  tsr_value_t v{};
  v.tag = TSR_VALUE_NONE;
  return v;
}

// JS has one number type: integral values are ints (so alpha=2 keeps an int tensor's dtype, as
// the SDK's scalar_arg does), others doubles.
bool integral(double d) { return std::isfinite(d) && d == std::trunc(d) && std::fabs(d) < 9.2e18; }

tsr_value_t scalar_value(const Napi::Value& v) {
  tsr_value_t out{};
  if (v.IsBoolean()) {
    out.tag = TSR_VALUE_BOOL;
    out.u.b = v.As<Napi::Boolean>().Value() ? 1 : 0;
  } else if (v.IsBigInt()) {
    bool lossless = false;
    out.tag = TSR_VALUE_INT;
    out.u.i = v.As<Napi::BigInt>().Int64Value(&lossless);
  } else {
    double d = v.As<Napi::Number>().DoubleValue();
    if (integral(d)) {
      out.tag = TSR_VALUE_INT;
      out.u.i = static_cast<int64_t>(d);
    } else {
      out.tag = TSR_VALUE_DOUBLE;
      out.u.d = d;
    }
  }
  return out;
}

bool is_scalar_js(const Napi::Value& v) { return v.IsNumber() || v.IsBoolean() || v.IsBigInt(); }

}  // namespace

BoxedArgs::BoxedArgs(Napi::Env env, const OpInfo& op, const Napi::Array& args, bool retain_inputs) {
  const uint32_t given = args.Length();
  if (given > op.args.size())
    throw_type_error(env, op.name + ": expected at most " + std::to_string(op.args.size()) + " arguments, got " +
                              std::to_string(given) + " (schema: " + op.schema + ")");
  // Up to the last argument given, or the last one without a default (an optional argument
  // with no default is passed as None; a required one missing is a TypeError): the core fills
  // the trailing defaults itself.
  size_t n = 0;
  for (size_t i = 0; i < op.args.size(); ++i)
    if ((i < given && !args.Get(static_cast<uint32_t>(i)).IsUndefined()) || !op.args[i].has_default) n = i + 1;
  vals_.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    Napi::Value v = i < given ? args.Get(static_cast<uint32_t>(i)) : env.Undefined();
    vals_.push_back(convert(env, op, i, v, retain_inputs));
  }
}

tsr_tensor_t* BoxedArgs::wrapped_scalar(const Napi::Value& v) {
  tsr_value_t s = scalar_value(v);
  tsr_tensor_t* out = nullptr;
  // A wrapped number promotes like a Python scalar: 2 * int32 tensor stays int32.
  tsr::check(tsr::api()->tensor_scalar(rt(), &s, TSR_DTYPE_UNDEFINED, tsr_device_t{TSR_DEVICE_TYPE_CPU, 0}, 1, &out));
  keep_.push_back(tsr::Tensor::adopt(out));
  return out;
}

tsr_value_t BoxedArgs::convert(Napi::Env env, const OpInfo& op, size_t i, const Napi::Value& v, bool retain) {
  const tsr_op_arg_t& spec = op.args[i];
  auto fail = [&](const char* expected) {
    throw_type_error(env, op.name + ": argument '" + spec.name + "' expects " + expected + ", got " +
                              describe_js(env, v) + " (schema: " + op.schema + ")");
  };
  if (v.IsUndefined()) {
    if (spec.has_default) return spec.default_value;
    if (spec.optional) return none();
    throw_type_error(env, op.name + ": missing required argument '" + spec.name + "' (schema: " + op.schema + ")");
  }
  if (v.IsNull()) {
    if (spec.optional) return none();
    if (spec.has_default && spec.default_value.tag == TSR_VALUE_NONE) return none();
    fail("a value (it is not optional)");
  }
  tsr_value_t out{};
  switch (spec.kind) {
    case TSR_ARG_TENSOR: {
      out.tag = TSR_VALUE_TENSOR;
      if (TensorWrap* w = TensorWrap::unwrap(env, v)) {
        out.u.tensor = w->tensor().get();
        if (retain) keep_.push_back(w->tensor());
      } else if (is_scalar_js(v)) {
        out.u.tensor = wrapped_scalar(v);
      } else {
        fail("a Tensor or a number");
      }
      return out;
    }
    case TSR_ARG_TENSOR_LIST: {
      if (!v.IsArray()) fail("an array of Tensors");
      Napi::Array a = v.As<Napi::Array>();
      std::vector<tsr_tensor_t*>& hs = tensor_lists_.emplace_back();
      for (uint32_t k = 0; k < a.Length(); ++k) {
        TensorWrap* w = TensorWrap::unwrap(env, a.Get(k));
        if (!w) fail("an array of Tensors");
        hs.push_back(w->tensor().get());
        if (retain) keep_.push_back(w->tensor());
      }
      out.tag = TSR_VALUE_TENSOR_LIST;
      out.u.tensors.data = hs.data();
      out.u.tensors.len = static_cast<int64_t>(hs.size());
      return out;
    }
    case TSR_ARG_INT:
      if (!(v.IsNumber() && integral(v.As<Napi::Number>().DoubleValue())) && !v.IsBigInt()) fail("an integer");
      out.tag = TSR_VALUE_INT;
      out.u.i = to_int(env, v, op.name);
      return out;
    case TSR_ARG_FLOAT:
      if (v.IsNumber()) {
        out.tag = TSR_VALUE_DOUBLE;
        out.u.d = v.As<Napi::Number>().DoubleValue();
      } else if (v.IsBigInt()) {
        out.tag = TSR_VALUE_DOUBLE;
        bool lossless = false;
        out.u.d = static_cast<double>(v.As<Napi::BigInt>().Int64Value(&lossless));
      } else {
        fail("a number");
      }
      return out;
    case TSR_ARG_BOOL:
      if (!v.IsBoolean()) fail("a boolean");
      out.tag = TSR_VALUE_BOOL;
      out.u.b = v.As<Napi::Boolean>().Value() ? 1 : 0;
      return out;
    case TSR_ARG_SCALAR:
      if (!is_scalar_js(v)) fail("a number or a boolean");
      return scalar_value(v);
    case TSR_ARG_INT_LIST: {
      if ((v.IsNumber() && integral(v.As<Napi::Number>().DoubleValue())) || v.IsBigInt()) {
        out.tag = TSR_VALUE_INT;  // the core repeats a single int ("int[2] stride=1")
        out.u.i = to_int(env, v, op.name);
        return out;
      }
      if (!v.IsArray()) fail("an array of integers");
      Napi::Array a = v.As<Napi::Array>();
      std::vector<int64_t>& l = lists_.emplace_back();
      for (uint32_t k = 0; k < a.Length(); ++k) {
        Napi::Value e = a.Get(k);
        if (!(e.IsNumber() && integral(e.As<Napi::Number>().DoubleValue())) && !e.IsBigInt())
          fail("an array of integers");
        l.push_back(to_int(env, e, op.name));
      }
      out.tag = TSR_VALUE_INT_LIST;
      out.u.ints.data = l.data();
      out.u.ints.len = static_cast<int64_t>(l.size());
      return out;
    }
    case TSR_ARG_STRING: {
      if (!v.IsString()) fail("a string");
      std::string& s = strings_.emplace_back(v.As<Napi::String>().Utf8Value());
      out.tag = TSR_VALUE_STRING;
      out.u.str = s.c_str();
      return out;
    }
    case TSR_ARG_DTYPE:
      out.tag = TSR_VALUE_DTYPE;
      out.u.dtype = parse_dtype(env, v, op.name + ": argument '" + spec.name + "'");
      return out;
    case TSR_ARG_DEVICE:
      out.tag = TSR_VALUE_DEVICE;
      out.u.device = parse_device(env, v, op.name + ": argument '" + spec.name + "'");
      return out;
    default:
      throw make_error(env, TSR_UNIMPLEMENTED,
                       op.name + ": argument '" + spec.name + "' has a kind this binding does not know (" +
                           std::to_string(spec.kind) + ")");
  }
}

}  // namespace tsrnode
