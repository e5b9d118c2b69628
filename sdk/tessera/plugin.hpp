// Tessera SDK, vendor side: everything a backend or op-library plugin needs to talk to the core
// through the C ABI alone (header-only; includes only abi/ and sdk/ headers).
//
//   TSR_DEFINE_PLUGIN(name, version, description, score_fn, init_fn, shutdown_fn)
//       defines the exported `tsr_plugin_query`. Each hook may be nullptr, and is one of:
//         score_fn:    int32_t(const tsr_api_t*, std::string& reason)
//                      | int32_t(const tsr_api_t*, char* reason, size_t reason_len)   (null: 1)
//         init_fn:     void(tsr::Registrar&) | void*(tsr::Registrar&)  (returns the state)
//                      | tsr_status_t(const tsr_api_t*, tsr_runtime_t*, tsr_registrar_t*, void**)
//         shutdown_fn: void(const tsr_api_t*, void* state) | void(void* state)
//       The hooks may throw: the generated C functions convert exceptions to statuses (init) or
//       to a score of 0 with the message as reason (score), and swallow them (shutdown).
//   tsr::KernelCall         typed accessors over const tsr_kernel_call_t*.
//   tsr::make_kernel<&f>()  turns `void f(tsr::KernelCall&)` (which may throw) into a
//                           tsr_kernel_fn_t; TSR_KERNEL(f) is the same.
//   tsr::MetaCall, tsr::make_meta<&f>()  the same for meta functions of plugin-defined ops.
//   tsr::Registrar          registration helpers that throw tsr::Error on failure.
//   tsr::fail(code, parts...) / TSR_CHECK(cond, code, parts...)  throw with a formatted message.
#pragma once

#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>

#include "tessera/api.h"
#include "tessera/dtype.hpp"
#include "tessera/error.hpp"

namespace tsr {

// ---- errors ------------------------------------------------------------------------------------

template <class... Parts>
inline std::string str_cat(const Parts&... parts) {
  std::ostringstream os;
  (void)(os << ... << parts);
  return os.str();
}

// Throws tsr::Error(code, concatenation of parts).
template <class... Parts>
[[noreturn]] inline void fail(tsr_code_t code, const Parts&... parts) {
  throw Error(code, str_cat(parts...));
}

#define TSR_CHECK(cond, code, ...)                 \
  do {                                             \
    if (!(cond)) ::tsr::fail((code), __VA_ARGS__); \
  } while (0)

// ---- kernel calls ------------------------------------------------------------------------------

// A list argument (int[]).
struct IntList {
  const int64_t* data;
  int64_t len;
  const int64_t* begin() const { return data; }
  const int64_t* end() const { return data + len; }
  int64_t size() const { return len; }
  int64_t operator[](int64_t i) const { return data[i]; }
};

namespace detail {
// The schema-notation name of a boxed value's tag ("Tensor", "int[]", ...), for error messages; the
// core's argument checks use it too.
inline const char* value_tag_name(int32_t tag) {
  switch (tag) {
    case TSR_VALUE_NONE:
      return "None";
    case TSR_VALUE_TENSOR:
      return "Tensor";
    case TSR_VALUE_INT:
      return "int";
    case TSR_VALUE_DOUBLE:
      return "float";
    case TSR_VALUE_BOOL:
      return "bool";
    case TSR_VALUE_INT_LIST:
      return "int[]";
    case TSR_VALUE_DTYPE:
      return "ScalarType";
    case TSR_VALUE_STRING:
      return "str";
    case TSR_VALUE_DEVICE:
      return "Device";
    case TSR_VALUE_TENSOR_LIST:
      return "Tensor[]";
    default:
      return "invalid value";
  }
}

// Shared accessors over a boxed argument array.
class ArgsView {
 public:
  ArgsView(const char* op, const tsr_value_t* args, size_t nargs) : op_(op), args_(args), nargs_(nargs) {}

  size_t num_args() const { return nargs_; }
  const tsr_value_t& arg(size_t i) const {
    if (i >= nargs_) fail(TSR_INTERNAL, op_, ": argument ", i, " missing (", nargs_, " given)");
    return args_[i];
  }
  bool arg_is_none(size_t i) const { return i >= nargs_ || args_[i].tag == TSR_VALUE_NONE; }
  int64_t arg_int(size_t i) const {
    const tsr_value_t& v = arg(i);
    if (v.tag == TSR_VALUE_INT) return v.u.i;
    if (v.tag == TSR_VALUE_BOOL) return v.u.b != 0;
    bad(i, "int");
  }
  double arg_double(size_t i) const {
    const tsr_value_t& v = arg(i);
    if (v.tag == TSR_VALUE_DOUBLE) return v.u.d;
    if (v.tag == TSR_VALUE_INT) return static_cast<double>(v.u.i);
    if (v.tag == TSR_VALUE_BOOL) return v.u.b != 0 ? 1.0 : 0.0;
    bad(i, "float");
  }
  bool arg_bool(size_t i) const {
    const tsr_value_t& v = arg(i);
    if (v.tag == TSR_VALUE_BOOL) return v.u.b != 0;
    if (v.tag == TSR_VALUE_INT) return v.u.i != 0;
    bad(i, "bool");
  }
  const char* arg_str(size_t i) const {
    const tsr_value_t& v = arg(i);
    if (v.tag == TSR_VALUE_STRING) return v.u.str ? v.u.str : "";
    bad(i, "str");
  }
  IntList arg_ints(size_t i) const {
    const tsr_value_t& v = arg(i);
    if (v.tag == TSR_VALUE_INT_LIST) return IntList{v.u.ints.data, v.u.ints.len};
    if (v.tag == TSR_VALUE_NONE) return IntList{nullptr, 0};
    bad(i, "int[]");
  }
  tsr_dtype_t arg_dtype(size_t i) const {
    const tsr_value_t& v = arg(i);
    if (v.tag == TSR_VALUE_DTYPE) return static_cast<tsr_dtype_t>(v.u.dtype);
    if (v.tag == TSR_VALUE_NONE) return TSR_DTYPE_UNDEFINED;
    bad(i, "ScalarType");
  }
  tsr_tensor_t* arg_tensor(size_t i) const {
    const tsr_value_t& v = arg(i);
    if (v.tag == TSR_VALUE_TENSOR) return v.u.tensor;
    if (v.tag == TSR_VALUE_NONE) return nullptr;
    bad(i, "Tensor");
  }
  // A Scalar argument (INT, DOUBLE or BOOL) converted to T (any element type).
  template <class T>
  T arg_scalar(size_t i) const {
    const tsr_value_t& v = arg(i);
    switch (v.tag) {
      case TSR_VALUE_INT:
        return convert<T>(v.u.i);
      case TSR_VALUE_DOUBLE:
        return convert<T>(v.u.d);
      case TSR_VALUE_BOOL:
        return convert<T>(v.u.b != 0);
      default:
        bad(i, "Scalar");
    }
  }

 protected:
  [[noreturn]] void bad(size_t i, const char* want) const {
    fail(TSR_INVALID_ARGUMENT, op_, ": argument ", i, " is ", value_tag_name(args_[i].tag), ", expected ", want);
  }
  const char* op_;
  const tsr_value_t* args_;
  size_t nargs_;
};
}  // namespace detail

class KernelCall : public detail::ArgsView {
 public:
  explicit KernelCall(const tsr_kernel_call_t* c)
      : ArgsView(c->op_name ? c->op_name : "kernel", c->args, c->nargs), c_(c) {}

  const tsr_kernel_call_t* raw() const { return c_; }
  const tsr_api_t* api() const { return c_->api; }
  tsr_runtime_t* runtime() const { return c_->runtime; }
  const char* op_name() const { return op_; }
  tsr_device_t device() const { return c_->device; }
  tsr_stream_t* stream() const { return c_->stream; }
  tsr_dtype_t dtype() const { return static_cast<tsr_dtype_t>(c_->dtype); }
  void* user_data() const { return c_->user_data; }

  size_t num_inputs() const { return c_->ninputs; }
  size_t num_outputs() const { return c_->noutputs; }
  const tsr_tensor_view_t& input(size_t i) const {
    if (i >= c_->ninputs) fail(TSR_INTERNAL, op_, ": input ", i, " missing (", c_->ninputs, " given)");
    return c_->inputs[i];
  }
  const tsr_tensor_view_t& output(size_t i) const {
    if (i >= c_->noutputs) fail(TSR_INTERNAL, op_, ": output ", i, " missing (", c_->noutputs, " given)");
    return c_->outputs[i];
  }
  bool has_iter() const { return c_->iter != nullptr; }
  const tsr_iter_t& iter() const {
    if (!c_->iter) fail(TSR_INTERNAL, op_, ": kernel expects an iteration, got none");
    return *c_->iter;
  }

  // Throws TSR_UNIMPLEMENTED naming the op and the dtype.
  [[noreturn]] void unsupported_dtype() const {
    fail(TSR_UNIMPLEMENTED, op_, ": unsupported dtype ", dtype_name(c_->dtype));
  }

 private:
  const tsr_kernel_call_t* c_;
};

namespace detail {
template <void (*Fn)(KernelCall&)>
tsr_status_t kernel_thunk(const tsr_kernel_call_t* call) noexcept {
  try {
    KernelCall kc(call);
    Fn(kc);
    return nullptr;
  } catch (...) {
    return status_from_current_exception(call->api, call->op_name ? call->op_name : "kernel");
  }
}
}  // namespace detail

template <void (*Fn)(KernelCall&)>
constexpr tsr_kernel_fn_t make_kernel() {
  return &detail::kernel_thunk<Fn>;
}
#define TSR_KERNEL(fn) (::tsr::make_kernel<&(fn)>())

// ---- meta functions (plugin-defined ops) -------------------------------------------------------

class MetaCall : public detail::ArgsView {
 public:
  explicit MetaCall(const tsr_meta_call_t* c) : ArgsView(c->op_name ? c->op_name : "meta", c->args, c->nargs), c_(c) {}
  const tsr_meta_call_t* raw() const { return c_; }
  const tsr_api_t* api() const { return c_->api; }
  tsr_runtime_t* runtime() const { return c_->runtime; }
  const char* op_name() const { return op_; }
  void* user_data() const { return c_->user_data; }

  // Facts about a tensor argument (throws if arg i is not a tensor).
  tsr_dtype_t tensor_dtype(size_t i) const { return c_->api->tensor_dtype(tensor(i)); }
  int32_t tensor_ndim(size_t i) const { return c_->api->tensor_ndim(tensor(i)); }
  const int64_t* tensor_sizes(size_t i) const { return c_->api->tensor_sizes(tensor(i)); }
  tsr_device_t tensor_device(size_t i) const { return c_->api->tensor_device(tensor(i)); }

  size_t num_outputs() const { return c_->noutputs; }
  void set_output(size_t i, tsr_dtype_t dtype, tsr_device_t device, int32_t ndim, const int64_t* sizes) {
    if (i >= c_->noutputs) fail(TSR_INTERNAL, op_, ": output ", i, " out of range");
    if (ndim < 0 || ndim > TSR_MAX_DIMS) fail(TSR_INVALID_ARGUMENT, op_, ": output rank ", ndim, " out of range");
    tsr_tensor_spec_t& s = c_->outputs[i];
    s.dtype = dtype;
    s.device = device;
    s.ndim = ndim;
    for (int32_t d = 0; d < ndim; ++d) s.sizes[d] = sizes[d];
  }
  void set_dispatch_dtype(tsr_dtype_t dtype) {
    if (c_->dispatch_dtype) *c_->dispatch_dtype = dtype;
  }

 private:
  tsr_tensor_t* tensor(size_t i) const {
    tsr_tensor_t* t = arg_tensor(i);
    if (!t) fail(TSR_INVALID_ARGUMENT, op_, ": argument ", i, " is None, expected Tensor");
    return t;
  }
  const tsr_meta_call_t* c_;
};

namespace detail {
template <void (*Fn)(MetaCall&)>
tsr_status_t meta_thunk(const tsr_meta_call_t* call) noexcept {
  try {
    MetaCall mc(call);
    Fn(mc);
    return nullptr;
  } catch (...) {
    return status_from_current_exception(call->api, call->op_name ? call->op_name : "meta");
  }
}
}  // namespace detail

template <void (*Fn)(MetaCall&)>
constexpr tsr_meta_fn_t make_meta() {
  return &detail::meta_thunk<Fn>;
}
#define TSR_META(fn) (::tsr::make_meta<&(fn)>())

// ---- registration ------------------------------------------------------------------------------

class Registrar {
 public:
  Registrar(const tsr_api_t* api, tsr_runtime_t* runtime, tsr_registrar_t* reg)
      : api_(api), runtime_(runtime), reg_(reg) {}

  const tsr_api_t* api() const { return api_; }
  tsr_runtime_t* runtime() const { return runtime_; }
  tsr_registrar_t* raw() const { return reg_; }

  // Registers a device type; returns its id. struct_size is filled in when left 0.
  int32_t device_type(const tsr_device_type_def_t& def) {
    tsr_device_type_def_t d = def;
    if (d.struct_size == 0) d.struct_size = TSR_STRUCT_SIZE(tsr_device_type_def_t);
    int32_t id = -1;
    check(api_, api_->register_device_type(reg_, &d, &id));
    return id;
  }
  void allocator(const tsr_raw_allocator_t& def) {
    tsr_raw_allocator_t d = def;
    if (d.struct_size == 0) d.struct_size = TSR_STRUCT_SIZE(tsr_raw_allocator_t);
    check(api_, api_->register_allocator(reg_, &d));
  }
  void kernel(const char* op_name, const char* kernel_name, int32_t device_type, uint32_t dtype_mask,
              tsr_kernel_fn_t fn, int32_t priority = 0, tsr_device_predicate_fn_t predicate = nullptr,
              void* user_data = nullptr) {
    tsr_kernel_def_t d{};
    d.struct_size = TSR_STRUCT_SIZE(tsr_kernel_def_t);
    d.op_name = op_name;
    d.kernel_name = kernel_name;
    d.device_type = device_type;
    d.priority = priority;
    d.dtype_mask = dtype_mask;
    d.predicate = predicate;
    d.fn = fn;
    d.user_data = user_data;
    check(api_, api_->register_kernel(reg_, &d));
  }
  // Whether the runtime knows op `name`: a plugin built against a newer SDK than the core it is
  // loaded into skips kernels for ops that core does not have (registering one is an error).
  bool has_op(const char* name) const {
    tsr_op_t* op = nullptr;
    tsr_status_t st = api_->op_find(runtime_, name, &op);
    if (st) {
      api_->status_free(st);
      return false;
    }
    return op != nullptr;
  }
  void op(const char* schema, tsr_meta_fn_t meta, void* user_data = nullptr) { op(schema, meta, nullptr, user_data); }
  // With a gradient formula (ABI 1.4; tessera/plugin_backward.hpp writes one with SDK ops). A
  // core older than 1.4 reads the definition without it: the op loads, without a gradient.
  void op(const char* schema, tsr_meta_fn_t meta, tsr_backward_fn_t backward, void* user_data = nullptr) {
    tsr_op_def_t d{};
    d.struct_size = TSR_STRUCT_SIZE(tsr_op_def_t);
    d.schema = schema;
    d.meta = meta;
    d.user_data = user_data;
    d.backward = backward;
    check(api_, api_->register_op(reg_, &d));
  }
  void extension(const char* name, const void* table) { check(api_, api_->register_extension(reg_, name, table)); }

 private:
  const tsr_api_t* api_;
  tsr_runtime_t* runtime_;
  tsr_registrar_t* reg_;
};

// ---- the plugin entry --------------------------------------------------------------------------

namespace detail {

inline void copy_reason(char* buf, size_t len, const char* msg) {
  if (!buf || len == 0) return;
  std::snprintf(buf, len, "%s", msg ? msg : "");
}

template <class F>
int32_t call_score(F&& f, const tsr_api_t* api, char* reason, size_t reason_len) noexcept {
  try {
    if constexpr (std::is_null_pointer<std::decay_t<F>>::value) {
      (void)api;
      copy_reason(reason, reason_len, "");
      return 1;
    } else if constexpr (std::is_invocable_r<int32_t, F, const tsr_api_t*, std::string&>::value) {
      std::string why;
      int32_t s = f(api, why);
      copy_reason(reason, reason_len, why.c_str());
      return s;
    } else {
      return f(api, reason, reason_len);
    }
  } catch (const std::exception& e) {
    copy_reason(reason, reason_len, e.what());
    return 0;
  } catch (...) {
    copy_reason(reason, reason_len, "unknown C++ exception in score");
    return 0;
  }
}

template <class F>
tsr_status_t call_init(F&& f, const char* plugin, const tsr_api_t* api, tsr_runtime_t* rt, tsr_registrar_t* reg,
                       void** state) noexcept {
  try {
    if (state) *state = nullptr;
    if constexpr (std::is_null_pointer<std::decay_t<F>>::value) {
      (void)plugin, (void)rt, (void)reg;
      return nullptr;
    } else if constexpr (std::is_invocable<F, Registrar&>::value) {
      Registrar r(api, rt, reg);
      if constexpr (std::is_void<std::invoke_result_t<F, Registrar&>>::value) {
        f(r);
      } else {
        void* s = f(r);
        if (state) *state = s;
      }
      return nullptr;
    } else {
      return f(api, rt, reg, state);
    }
  } catch (...) {
    return status_from_current_exception(api, (std::string("plugin '") + plugin + "' init").c_str());
  }
}

template <class F>
void call_shutdown(F&& f, const tsr_api_t* api, void* state) noexcept {
  try {
    if constexpr (std::is_null_pointer<std::decay_t<F>>::value) {
      (void)api, (void)state;
    } else if constexpr (std::is_invocable<F, const tsr_api_t*, void*>::value) {
      f(api, state);
    } else {
      f(state);
    }
  } catch (...) {
  }
}

}  // namespace detail
}  // namespace tsr

// Defines `tsr_plugin_query`. NAME, VERSION, DESCRIPTION: string literals (or expressions
// yielding const char* with static storage). See the top of this file for the hooks.
#define TSR_DEFINE_PLUGIN(NAME, VERSION, DESCRIPTION, SCORE_FN, INIT_FN, SHUTDOWN_FN)                                \
  namespace {                                                                                                        \
  int32_t tsr_plugin_score_thunk_(const tsr_api_t* api, char* reason, size_t reason_len) {                           \
    return ::tsr::detail::call_score(SCORE_FN, api, reason, reason_len);                                             \
  }                                                                                                                  \
  tsr_status_t tsr_plugin_init_thunk_(const tsr_api_t* api, tsr_runtime_t* rt, tsr_registrar_t* reg, void** state) { \
    return ::tsr::detail::call_init(INIT_FN, NAME, api, rt, reg, state);                                             \
  }                                                                                                                  \
  void tsr_plugin_shutdown_thunk_(const tsr_api_t* api, void* state) {                                               \
    ::tsr::detail::call_shutdown(SHUTDOWN_FN, api, state);                                                           \
  }                                                                                                                  \
  }                                                                                                                  \
  extern "C" TSR_EXPORT const tsr_plugin_t* tsr_plugin_query(uint32_t host_abi_version) {                            \
    static const tsr_plugin_t plugin = {TSR_STRUCT_SIZE(tsr_plugin_t),                                               \
                                        TSR_ABI_VERSION,                                                             \
                                        0u,                                                                          \
                                        NAME,                                                                        \
                                        VERSION,                                                                     \
                                        DESCRIPTION,                                                                 \
                                        &tsr_plugin_score_thunk_,                                                    \
                                        &tsr_plugin_init_thunk_,                                                     \
                                        &tsr_plugin_shutdown_thunk_};                                                \
    if (TSR_ABI_VERSION_MAJOR(host_abi_version) != TSR_ABI_MAJOR) return nullptr;                                    \
    return &plugin;                                                                                                  \
  }
