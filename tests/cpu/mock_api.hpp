// A minimal stand-in for the core's tsr_api_t (statuses, registration and scratch memory), so that the
// vendor SDK and the CPU plugin can be tested without libtessera. Test-only.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tessera/api.h"

struct tsr_status_s {
  tsr_code_t code;
  std::string message;
};

struct tsr_registrar_s {
  struct DeviceType {
    std::string name;
    tsr_device_type_def_t def;
  };
  struct Kernel {
    std::string op, name;
    tsr_kernel_def_t def;
  };
  std::vector<DeviceType> device_types;
  std::vector<tsr_raw_allocator_t> allocators;
  std::vector<Kernel> kernels;
  std::vector<std::string> op_schemas;
  std::map<std::string, const void*> extensions;
  bool fail_kernels = false;  // make register_kernel fail, to test error paths

  const Kernel* find(const std::string& op, int32_t dtype) const {
    const Kernel* best = nullptr;
    for (const Kernel& k : kernels)
      if (k.op == op && (k.def.dtype_mask == 0 || (k.def.dtype_mask & TSR_DTYPE_BIT(dtype))))
        if (!best || k.def.priority >= best->def.priority) best = &k;
    return best;
  }
};

namespace mock {

inline tsr_status_t status_create(tsr_code_t code, const char* msg) { return new tsr_status_s{code, msg ? msg : ""}; }
inline tsr_code_t status_code(tsr_status_t s) { return s ? s->code : TSR_OK; }
inline const char* status_message(tsr_status_t s) { return s ? s->message.c_str() : ""; }
inline void status_free(tsr_status_t s) { delete s; }

inline tsr_status_t register_device_type(tsr_registrar_t* reg, const tsr_device_type_def_t* def, int32_t* out) {
  for (size_t i = 0; i < reg->device_types.size(); ++i)
    if (reg->device_types[i].name == def->name) return status_create(TSR_ALREADY_EXISTS, "device type exists");
  // "cpu" always gets id 0; others follow.
  const int32_t id = std::string(def->name) == "cpu" ? 0 : static_cast<int32_t>(reg->device_types.size()) + 1;
  reg->device_types.push_back({def->name, *def});
  reg->device_types.back().def.name = reg->device_types.back().name.c_str();
  if (out) *out = id;
  return nullptr;
}
inline tsr_status_t register_allocator(tsr_registrar_t* reg, const tsr_raw_allocator_t* def) {
  if (!def->alloc || !def->free) return status_create(TSR_INVALID_ARGUMENT, "allocator without alloc/free");
  reg->allocators.push_back(*def);
  return nullptr;
}
inline tsr_status_t register_op(tsr_registrar_t* reg, const tsr_op_def_t* def) {
  reg->op_schemas.push_back(def->schema);
  return nullptr;
}
inline tsr_status_t register_kernel(tsr_registrar_t* reg, const tsr_kernel_def_t* def) {
  if (reg->fail_kernels)
    return status_create(TSR_NOT_FOUND, (std::string("no op named '") + def->op_name + "'").c_str());
  if (!def->fn) return status_create(TSR_INVALID_ARGUMENT, "kernel without fn");
  reg->kernels.push_back({def->op_name, def->kernel_name, *def});
  return nullptr;
}
inline tsr_status_t register_extension(tsr_registrar_t* reg, const char* name, const void* table) {
  reg->extensions[name] = table;
  return nullptr;
}

// Every op exists here (the mock registers kernels for any op name), so Registrar::has_op is
// true: the plugin registers what it would register in a current core. The handle is opaque
// to plugins and never dereferenced.
inline tsr_status_t op_find(tsr_runtime_t*, const char*, tsr_op_t** out) {
  static char any_op;
  *out = reinterpret_cast<tsr_op_t*>(&any_op);
  return nullptr;
}

// Host memory for the kernels' scratch (tsr::Scratch: a 1-D u8 tensor whose data they use, e.g.
// oneDNN's scratchpad); other shapes and dtypes are not needed here. The handle is a byte vector.
inline tsr_status_t tensor_empty(tsr_runtime_t*, int32_t ndim, const int64_t* sizes, tsr_dtype_t dtype, tsr_device_t,
                                 tsr_tensor_t** out) {
  if (ndim != 1 || dtype != TSR_U8 || sizes[0] < 0)
    return status_create(TSR_UNIMPLEMENTED, "the mock core allocates 1-D u8 tensors only");
  *out = reinterpret_cast<tsr_tensor_t*>(new std::vector<unsigned char>(size_t(sizes[0])));
  return nullptr;
}
inline void* tensor_data(const tsr_tensor_t* t) {
  return reinterpret_cast<std::vector<unsigned char>*>(const_cast<tsr_tensor_t*>(t))->data();
}
inline void tensor_release(tsr_tensor_t* t) { delete reinterpret_cast<std::vector<unsigned char>*>(t); }

inline const tsr_api_t* api() {
  static const tsr_api_t table = [] {
    tsr_api_t t{};
    t.struct_size = sizeof(tsr_api_t);
    t.abi_version = TSR_ABI_VERSION;
    t.status_create = &status_create;
    t.status_code = &status_code;
    t.status_message = &status_message;
    t.status_free = &status_free;
    t.register_device_type = &register_device_type;
    t.register_allocator = &register_allocator;
    t.register_op = &register_op;
    t.register_kernel = &register_kernel;
    t.op_find = &op_find;
    t.register_extension = &register_extension;
    t.tensor_empty = &tensor_empty;
    t.tensor_data = &tensor_data;
    t.tensor_release = &tensor_release;
    return t;
  }();
  return &table;
}

// Takes ownership of s; returns "" for OK, else "CODE: message".
inline std::string take(tsr_status_t s) {
  if (!s) return "";
  std::string r = std::to_string(int(s->code)) + ": " + s->message;
  delete s;
  return r;
}

}  // namespace mock
