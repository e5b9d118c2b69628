// The runtime's module functions: seed, devices, plugins, uninitialised tensors and
// safetensors files (abi/tessera/io.h).
#include "runtime.hpp"

#include "tensor.hpp"

namespace tsrnode {

// manualSeed(n: number | bigint)
Napi::Value manual_seed(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1) throw_type_error(env, "manualSeed: expected a seed");
  uint64_t seed = 0;
  if (info[0].IsBigInt()) {
    bool lossless = false;
    seed = info[0].As<Napi::BigInt>().Uint64Value(&lossless);
  } else {
    seed = static_cast<uint64_t>(to_int(env, info[0], "manualSeed"));
  }
  tsr::api()->manual_seed(rt(), seed);
  return env.Undefined();
}

// devices() -> ["cpu:0", ...]
Napi::Value devices(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const tsr_api_t* a = tsr::api();
  Napi::Array out = Napi::Array::New(env);
  uint32_t k = 0;
  for (int32_t type = 0; type < a->device_type_count(rt()); ++type)
    for (int32_t i = 0; i < a->device_count(rt(), type); ++i) out.Set(k++, device_string(tsr_device_t{type, i}));
  return out;
}

// plugins() -> [{name, version, path, loaded, reason}]
Napi::Value plugins(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    const tsr_api_t* a = tsr::api();
    Napi::Array out = Napi::Array::New(env);
    size_t n = a->plugin_count(rt());
    for (size_t i = 0; i < n; ++i) {
      tsr_plugin_record_t r{};
      r.struct_size = sizeof r;
      tsr::check(a->plugin_record(rt(), i, &r));
      Napi::Object o = Napi::Object::New(env);
      o.Set("name", r.name ? r.name : "");
      o.Set("version", r.version ? r.version : "");
      o.Set("path", r.path ? r.path : "");
      o.Set("loaded", Napi::Boolean::New(env, r.loaded != 0));
      o.Set("reason", r.reason ? r.reason : "");
      out.Set(static_cast<uint32_t>(i), o);
    }
    return out;
  });
}

// empty(shape, dtype, device) -> an uninitialised contiguous tensor
Napi::Value empty(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&] {
    if (info.Length() < 1 || !info[0].IsArray()) throw_type_error(env, "empty: expected a shape array");
    std::vector<int64_t> sizes = int_list_args(info, 0, "empty");
    tsr_dtype_t dt = info.Length() > 1 && info[1].IsString() ? parse_dtype(env, info[1], "empty") : TSR_F32;
    tsr_device_t dev = info.Length() > 2 && info[2].IsString() ? parse_device(env, info[2], "empty") : tsr_device_t{};
    return TensorWrap::wrap(env, tsr::empty(sizes, dt, tsr::Device(dev)));
  });
}

// save(path, names[], tensors[], metaKeys[], metaValues[])
Napi::Value save(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 5 || !info[0].IsString() || !info[1].IsArray() || !info[2].IsArray() || !info[3].IsArray() ||
      !info[4].IsArray())
    throw_type_error(env, "save(path, names, tensors, metaKeys, metaValues)");
  std::string path = info[0].As<Napi::String>().Utf8Value();
  Napi::Array names = info[1].As<Napi::Array>(), tensors = info[2].As<Napi::Array>();
  Napi::Array keys = info[3].As<Napi::Array>(), values = info[4].As<Napi::Array>();
  std::vector<std::string> name_s, key_s, value_s;
  std::vector<tsr_tensor_t*> handles;
  for (uint32_t i = 0; i < names.Length(); ++i) {
    TensorWrap* w = TensorWrap::unwrap(env, tensors.Get(i));
    if (!w) throw_type_error(env, "save: '" + names.Get(i).ToString().Utf8Value() + "' is not a Tensor");
    name_s.push_back(names.Get(i).ToString().Utf8Value());
    handles.push_back(w->tensor().get());
  }
  for (uint32_t i = 0; i < keys.Length(); ++i) {
    if (!values.Get(i).IsString()) throw_type_error(env, "save: metadata values must be strings");
    key_s.push_back(keys.Get(i).ToString().Utf8Value());
    value_s.push_back(values.Get(i).As<Napi::String>().Utf8Value());
  }
  auto cstrs = [](const std::vector<std::string>& v) {
    std::vector<const char*> r;
    for (const auto& s : v) r.push_back(s.c_str());
    return r;
  };
  auto n = cstrs(name_s), k = cstrs(key_s), v = cstrs(value_s);
  guard(env, [&] {
    tsr::check(tsr::api()->safetensors_save(rt(), path.c_str(), handles.size(), n.data(), handles.data(), k.size(),
                                            k.data(), v.data()));
  });
  return env.Undefined();
}

// load(path, device?) -> {tensors: {name: Tensor} in file order, metadata: {key: value}}
Napi::Value load(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsString()) throw_type_error(env, "load: expected a path");
  std::string path = info[0].As<Napi::String>().Utf8Value();
  tsr_device_t dev{};
  if (info.Length() > 1 && info[1].IsString()) dev = parse_device(env, info[1], "load");
  return guard(env, [&]() -> Napi::Value {
    const tsr_api_t* a = tsr::api();
    tsr_safetensors_t* f = nullptr;
    tsr::check(a->safetensors_open(rt(), path.c_str(), &f));
    // Closed on every path out (the tensors loaded are copies: they outlive the handle).
    std::unique_ptr<tsr_safetensors_t, void (*)(tsr_safetensors_t*)> file(f, a->safetensors_close);
    Napi::Object tensors = Napi::Object::New(env), meta = Napi::Object::New(env);
    for (size_t i = 0; i < a->safetensors_count(f); ++i) {
      const char* name = nullptr;
      tsr::check(a->safetensors_entry(f, i, &name, nullptr, nullptr, nullptr));
      tsr_tensor_t* t = nullptr;
      tsr::check(a->safetensors_load(f, i, dev, &t));
      tensors.Set(name, TensorWrap::wrap(env, tsr::Tensor::adopt(t)));
    }
    for (size_t i = 0; i < a->safetensors_metadata_count(f); ++i) {
      const char *k = nullptr, *v = nullptr;
      tsr::check(a->safetensors_metadata_at(f, i, &k, &v));
      meta.Set(k, v);
    }
    Napi::Object out = Napi::Object::New(env);
    out.Set("tensors", tensors);
    out.Set("metadata", meta);
    return out;
  });
}

}  // namespace tsrnode
