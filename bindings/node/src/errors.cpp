// Errors and names: Tessera statuses become JS Errors with `code`, dtypes and devices become
// strings and back.
#include "common.hpp"
#include "tensor.hpp"

namespace tsrnode {

const char* code_name(tsr_code_t code) {
  switch (code) {
    case TSR_OK:
      return "OK";
    case TSR_CANCELLED:
      return "CANCELLED";
    case TSR_UNKNOWN:
      return "UNKNOWN";
    case TSR_INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case TSR_DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    case TSR_NOT_FOUND:
      return "NOT_FOUND";
    case TSR_ALREADY_EXISTS:
      return "ALREADY_EXISTS";
    case TSR_PERMISSION_DENIED:
      return "PERMISSION_DENIED";
    case TSR_RESOURCE_EXHAUSTED:
      return "RESOURCE_EXHAUSTED";
    case TSR_FAILED_PRECONDITION:
      return "FAILED_PRECONDITION";
    case TSR_ABORTED:
      return "ABORTED";
    case TSR_OUT_OF_RANGE:
      return "OUT_OF_RANGE";
    case TSR_UNIMPLEMENTED:
      return "UNIMPLEMENTED";
    case TSR_INTERNAL:
      return "INTERNAL";
    case TSR_UNAVAILABLE:
      return "UNAVAILABLE";
    case TSR_DATA_LOSS:
      return "DATA_LOSS";
  }
  return "UNKNOWN";
}

Napi::Error make_error(Napi::Env env, tsr_code_t code, const std::string& message) {
  Napi::Error e = Napi::Error::New(env, message);
  e.Set("code", Napi::String::New(env, code_name(code)));
  return e;
}

std::string describe_js(Napi::Env env, const Napi::Value& v) {
  if (v.IsUndefined()) return "undefined";
  if (v.IsNull()) return "null";
  if (v.IsBoolean()) return v.As<Napi::Boolean>().Value() ? "true" : "false";
  if (v.IsNumber()) return "a number (" + v.ToString().Utf8Value() + ")";
  if (v.IsBigInt()) return "a BigInt";
  if (v.IsString()) return "a string ('" + v.As<Napi::String>().Utf8Value() + "')";
  if (v.IsTypedArray()) return "a TypedArray";
  if (v.IsArray()) return "an array";
  if (v.IsFunction()) return "a function";
  if (TensorWrap::unwrap(env, v)) return "a Tensor";
  if (v.IsObject()) return "an object";
  return "a symbol";
}

void throw_type_error(Napi::Env env, const std::string& message) { throw Napi::TypeError::New(env, message); }

const char* dtype_js_name(tsr_dtype_t dt) { return tsr::dtype_name(dt); }

tsr_dtype_t parse_dtype(Napi::Env env, const Napi::Value& v, const std::string& what) {
  if (!v.IsString())
    throw_type_error(env, what + ": a dtype is a string such as 'float32', got " + describe_js(env, v));
  std::string s = v.As<Napi::String>().Utf8Value();
  static const struct {
    const char* name;
    tsr_dtype_t dt;
  } names[] = {{"bool", TSR_BOOL},   {"uint8", TSR_U8},    {"int8", TSR_I8},     {"int16", TSR_I16},
               {"short", TSR_I16},   {"int32", TSR_I32},   {"int", TSR_I32},     {"int64", TSR_I64},
               {"long", TSR_I64},    {"float16", TSR_F16}, {"half", TSR_F16},    {"bfloat16", TSR_BF16},
               {"float32", TSR_F32}, {"float", TSR_F32},   {"float64", TSR_F64}, {"double", TSR_F64},
               {"float8_e4m3fn", TSR_F8_E4M3FN}, {"float8_e5m2", TSR_F8_E5M2}, {"float8_e8m0fnu", TSR_F8_E8M0FNU},
               {"float4_e2m1fn_x2", TSR_F4_E2M1FN_X2}};
  for (const auto& n : names)
    if (s == n.name) return n.dt;
  throw_type_error(env, what + ": unknown dtype '" + s +
                            "' (expected bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64, "
                            "float8_e4m3fn, float8_e5m2, float8_e8m0fnu or float4_e2m1fn_x2)");
}

tsr_device_t parse_device(Napi::Env env, const Napi::Value& v, const std::string& what) {
  if (!v.IsString())
    throw_type_error(env, what + ": a device is a string such as 'cpu' or 'cpu:1', got " + describe_js(env, v));
  std::string s = v.As<Napi::String>().Utf8Value();
  tsr_device_t d{};
  tsr_status_t st = tsr::api()->device_parse(rt(), s.c_str(), &d);
  if (st) {
    tsr_code_t code = tsr::api()->status_code(st);
    std::string msg = tsr::api()->status_message(st);
    tsr::api()->status_free(st);
    throw make_error(env, code, what + ": " + msg);
  }
  return d;
}

std::string device_string(tsr_device_t d) {
  const char* n = tsr::api()->device_type_name(rt(), d.type);
  return std::string(n ? n : "?") + ":" + std::to_string(d.index);
}

}  // namespace tsrnode
