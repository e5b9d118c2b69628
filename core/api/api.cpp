// The exported function table: thin C entry points over the core's C++ implementation.
// No C++ exception leaves this file.
#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "api/entry_guard.hpp"
#include "autograd/engine.hpp"
#include "graph/trace.hpp"
#include "ops/op_impl.hpp"
#include "plugins/registrar.hpp"
#include "io/dlpack.hpp"
#include "io/safetensors.hpp"
#include "runtime/streams.hpp"
#include "tensor/overlap.hpp"
#include "tensor/views.hpp"

namespace tsr::core {
tsr_status_t runtime_create(const tsr_runtime_options_t* options, tsr_runtime_t** out);
void runtime_destroy(tsr_runtime_t* rt);
}  // namespace tsr::core

using namespace tsr::core;

namespace {

// Nonzero when the device does not exist (no status allocated).
int check_device_quiet(tsr_runtime_t* rt, tsr_device_t d) {
  return d.type < 0 || d.type >= rt->num_device_types.load() || !rt->device_types[d.type].def.copy || d.index < 0 ||
         d.index >= rt->device_types[d.type].count;
}

const char* version_string() { return "0.1.0"; }

tsr_status_t status_create(tsr_code_t code, const char* message) {
  // A code outside the enum (a plugin's own number, garbage) would index past the name tables
  // of every reader: it is kept as UNKNOWN with the number in the message.
  const int c = static_cast<int>(code);  // the enum's underlying type may be unsigned
  if (c == TSR_OK) return make_status(TSR_UNKNOWN, message ? message : "");
  if (c < TSR_CANCELLED || c > TSR_DATA_LOSS)
    return make_status(TSR_UNKNOWN, "(status code " + std::to_string(c) + ") " + (message ? message : ""));
  return make_status(code, message ? message : "");
}
tsr_code_t status_code(tsr_status_t s) { return s ? s->code : TSR_OK; }
const char* status_message(tsr_status_t s) { return s ? s->message.c_str() : ""; }
void status_free(tsr_status_t s) { free_status(s); }

tsr_status_t api_runtime_create(const tsr_runtime_options_t* o, tsr_runtime_t** out) {
  TSR_GUARD("runtime_create", return runtime_create(o, out);)
}

std::once_flag g_default_once;
tsr_runtime_t* g_default = nullptr;
tsr_status_t g_default_status = nullptr;

tsr_status_t runtime_default(tsr_runtime_t** out) {
  TSR_CHECK_ARG(out, "runtime_default", "out is NULL");
  std::call_once(g_default_once, [] { g_default_status = api_runtime_create(nullptr, &g_default); });
  if (g_default_status) return make_status(g_default_status->code, g_default_status->message);
  *out = g_default;
  return nullptr;
}

void manual_seed(tsr_runtime_t* rt, uint64_t seed) {
  assert(rt && "manual_seed: runtime is NULL");
  if (!rt) return;
  rt->seed.store(seed);
  rt->rng_offset.store(0);
}

size_t plugin_count(tsr_runtime_t* rt) { return rt ? rt->plugin_records.size() : 0; }

tsr_status_t plugin_record(tsr_runtime_t* rt, size_t i, tsr_plugin_record_t* out) {
  TSR_CHECK_ARG(rt && out, "plugin_record", "runtime and out are required");
  TSR_CHECK_ARG(i < rt->plugin_records.size(), "plugin_record",
                "index " + std::to_string(i) + " out of range (" + std::to_string(rt->plugin_records.size()) +
                    " plugin records)");
  const PluginRecord& r = rt->plugin_records[i];
  tsr_plugin_record_t rec;
  rec.struct_size = sizeof(rec);
  rec.name = r.name.c_str();
  rec.version = r.version.c_str();
  rec.path = r.path.c_str();
  rec.loaded = r.loaded ? 1 : 0;
  rec.score = r.score;
  rec.reason = r.reason.c_str();
  std::memcpy(out, &rec, std::min(out->struct_size ? out->struct_size : sizeof(rec), sizeof(rec)));
  out->struct_size = std::min(out->struct_size ? out->struct_size : sizeof(rec), sizeof(rec));
  return nullptr;
}

const void* get_extension(tsr_runtime_t* rt, const char* name) {
  if (!rt || !name) return nullptr;
  auto it = rt->extensions.find(name);
  return it == rt->extensions.end() ? nullptr : it->second;
}

void api_log(tsr_log_level_t level, const char* message) { log(level, message ? message : ""); }

// Why a device type may be missing: the plugin of that name was refused (its reason), else the
// refused plugins, so a host learns the cause without running `tessera info`.
std::string refusals(const Runtime* rt, const std::string& type) {
  std::vector<const PluginRecord*> refused;
  for (const PluginRecord& r : rt->plugin_records) {
    if (r.loaded) continue;
    if (r.name == type) return "; the plugin '" + r.name + "' (" + r.path + ") was refused: " + r.reason;
    if (r.reason.rfind("shadowed by", 0) != 0) refused.push_back(&r);
  }
  if (refused.empty()) return "";
  std::string s = "; " + std::to_string(refused.size()) + " plugin" + (refused.size() == 1 ? " was" : "s were") +
                  " refused (tessera info lists them all):";
  for (size_t i = 0; i < refused.size() && i < 3; ++i) s += " " + refused[i]->name + ": " + refused[i]->reason + ";";
  s.pop_back();
  return s;
}

tsr_status_t device_type_lookup(tsr_runtime_t* rt, const char* name, int32_t* out) {
  TSR_CHECK_ARG(rt && name && out, "device_type_lookup", "runtime, name and out are required");
  const int32_t t = find_device_type(rt, name);
  if (t >= 0) {
    *out = t;
    return nullptr;
  }
  return make_status(TSR_NOT_FOUND, std::string("device type '") + name + "' is not registered" + refusals(rt, name));
}

const char* device_type_name(tsr_runtime_t* rt, int32_t type) {
  if (!rt || type < 0 || type >= rt->num_device_types.load()) return nullptr;
  return rt->device_types[type].name.c_str();
}
int32_t device_type_count(tsr_runtime_t* rt) { return rt ? rt->num_device_types.load() : 0; }
int32_t device_count(tsr_runtime_t* rt, int32_t type) {
  if (!rt || type < 0 || type >= rt->num_device_types.load()) return 0;
  return rt->device_types[type].count;
}

tsr_status_t device_synchronize(tsr_runtime_t* rt, tsr_device_t d) {
  TSR_CHECK_ARG(rt, "device_synchronize", "runtime is NULL");
  TSR_RETURN_IF_ERROR(check_device(rt, d, "device_synchronize"));
  const tsr_device_type_def_t& def = rt->device_types[d.type].def;
  return def.synchronize ? def.synchronize(def.self, d) : nullptr;
}

tsr_status_t device_parse(tsr_runtime_t* rt, const char* text, tsr_device_t* out) {
  TSR_CHECK_ARG(rt && text && out, "device_parse", "runtime, text and out are required");
  std::string s = text;
  size_t colon = s.find(':');
  std::string name = s.substr(0, colon);
  int64_t index = 0;
  if (colon != std::string::npos) {
    // Digits only, and an index that fits the device's int32: "cpu:4294967296" is not cpu:0.
    const std::string digits = s.substr(colon + 1);
    bool ok = !digits.empty() && digits.size() <= 10 && digits.find_first_not_of("0123456789") == std::string::npos;
    if (ok) index = std::stoll(digits);
    if (!ok || index > INT32_MAX)
      return make_status(TSR_INVALID_ARGUMENT, "device_parse: invalid device string '" + s + "'");
  }
  int32_t type = 0;
  TSR_RETURN_IF_ERROR(device_type_lookup(rt, name.c_str(), &type));
  tsr_device_t d{type, static_cast<int32_t>(index)};
  TSR_RETURN_IF_ERROR(check_device(rt, d, "device_parse"));
  *out = d;
  return nullptr;
}

tsr_status_t tensor_empty(tsr_runtime_t* rt, int32_t ndim, const int64_t* sizes, tsr_dtype_t dtype, tsr_device_t device,
                          tsr_tensor_t** out) {
  TSR_CHECK_ARG(rt && out, "empty", "runtime and out are required");
  TSR_GUARD("empty", return new_tensor(rt, ndim, sizes, dtype, device, "empty", out);)
}

tsr_status_t tensor_from_host(tsr_runtime_t* rt, const void* data, int32_t ndim, const int64_t* sizes,
                              tsr_dtype_t dtype, tsr_device_t device, tsr_tensor_t** out) {
  TSR_CHECK_ARG(rt && out, "from_host", "runtime and out are required");
  TSR_GUARD("from_host", {
    Tensor* t = nullptr;
    TSR_RETURN_IF_ERROR(new_tensor(rt, ndim, sizes, dtype, device, "from_host", &t));
    size_t nbytes = static_cast<size_t>(t->numel) * dtype_size(dtype);
    if (nbytes > 0) {
      if (!data) {
        t->release();
        return make_status(TSR_INVALID_ARGUMENT, "from_host: data is NULL");
      }
      const tsr_device_type_def_t& def = rt->device_types[device.type].def;
      tsr_stream_t* stream = current_stream(rt, device);
      tsr_status_t st =
          def.copy(def.self, device, t->data(), tsr_device_t{TSR_DEVICE_TYPE_HOST, 0}, data, nbytes, stream);
      // Blocking copy: an asynchronous device waits for its current stream only (as PyTorch).
      if (!st)
        st = rt->device_types[device.type].has_streams ? sync_after_host_copy(rt, device, stream, "from_host")
             : def.synchronize                         ? def.synchronize(def.self, device)
                                                       : nullptr;
      if (st) {
        t->release();
        return st;
      }
    }
    *out = t;
    return nullptr;
  })
}

tsr_status_t tensor_scalar(tsr_runtime_t* rt, const tsr_value_t* value, tsr_dtype_t dtype, tsr_device_t device,
                           int32_t wrapped, tsr_tensor_t** out) {
  TSR_CHECK_ARG(rt && value && out, "scalar_tensor", "runtime, value and out are required");
  if (dtype == TSR_DTYPE_UNDEFINED)
    dtype = value->tag == TSR_VALUE_DOUBLE ? TSR_F64 : value->tag == TSR_VALUE_BOOL ? TSR_BOOL : TSR_I64;
  TSR_CHECK_ARG(value->tag == TSR_VALUE_INT || value->tag == TSR_VALUE_DOUBLE || value->tag == TSR_VALUE_BOOL,
                "scalar_tensor", "value must be an int, float or bool");
  TSR_GUARD("scalar_tensor", {
    Tensor* t = nullptr;
    TSR_RETURN_IF_ERROR(new_tensor(rt, 0, nullptr, dtype, device, "scalar_tensor", &t));
    if (tsr_status_t st = fill_tensor(rt, t, *value, "scalar_tensor")) {
      t->release();
      return st;
    }
    t->wrapped_number = wrapped != 0;
    *out = t;
    return nullptr;
  })
}

// The inspection getters cannot return a status: a valid tensor is their documented
// precondition (tensor.h), checked in debug builds.
const Tensor* inspected(const tsr_tensor_t* t) {
  assert(t && "tensor inspection entry called with a NULL tensor");
  return t;
}

void tensor_retain(tsr_tensor_t* t) {
  if (t) t->retain();
}
void tensor_release(tsr_tensor_t* t) {
  if (t) t->release();
}
tsr_runtime_t* tensor_runtime(const tsr_tensor_t* t) { return inspected(t)->runtime; }
tsr_dtype_t tensor_dtype(const tsr_tensor_t* t) { return inspected(t)->dtype; }
tsr_device_t tensor_device(const tsr_tensor_t* t) { return inspected(t)->device; }
int32_t tensor_ndim(const tsr_tensor_t* t) { return inspected(t)->ndim; }
const int64_t* tensor_sizes(const tsr_tensor_t* t) { return inspected(t)->sizes; }
const int64_t* tensor_strides(const tsr_tensor_t* t) { return inspected(t)->strides; }
int64_t tensor_offset(const tsr_tensor_t* t) { return inspected(t)->offset; }
int64_t tensor_numel(const tsr_tensor_t* t) { return inspected(t)->numel; }
void* tensor_data(const tsr_tensor_t* t) { return inspected(t)->data(); }
int32_t tensor_is_contiguous(const tsr_tensor_t* t) { return inspected(t)->contiguous ? 1 : 0; }
int32_t tensor_shares_storage(const tsr_tensor_t* a, const tsr_tensor_t* b) {
  return a && b && a->storage == b->storage ? 1 : 0;
}

tsr_status_t tensor_copy_to_host(const tsr_tensor_t* ct, void* dst, size_t nbytes) {
  TSR_CHECK_ARG(ct, "copy_to_host", "tensor is NULL");
  Tensor* t = const_cast<Tensor*>(ct);
  size_t want = static_cast<size_t>(t->numel) * dtype_size(t->dtype);
  if (nbytes != want)
    return make_status(TSR_INVALID_ARGUMENT, "copy_to_host: buffer has " + std::to_string(nbytes) + " bytes but " +
                                                 describe(t->runtime, t) + " needs " + std::to_string(want));
  if (want == 0) return nullptr;
  TSR_CHECK_ARG(dst, "copy_to_host", "dst is NULL");
  TSR_GUARD("copy_to_host", {
    Runtime* rt = t->runtime;
    Tensor* dense = nullptr;
    TSR_RETURN_IF_ERROR(make_contiguous(rt, t, "copy_to_host", &dense));
    const tsr_device_type_def_t& def = rt->device_types[t->device.type].def;
    tsr_stream_t* stream = current_stream(rt, dense->device);
    tsr_status_t st =
        def.copy(def.self, tsr_device_t{TSR_DEVICE_TYPE_HOST, 0}, dst, dense->device, dense->data(), want, stream);
    if (!st)
      st = rt->device_types[dense->device.type].has_streams
               ? sync_after_host_copy(rt, dense->device, stream, "copy_to_host")
           : def.synchronize ? def.synchronize(def.self, dense->device)
                             : nullptr;
    dense->release();
    return st;
  })
}

// Views record their autograd history (autograd/views.cpp) when the base requires grad.
template <class Make, class Params>
static tsr_status_t view_entry(const char* name, Tensor* t, Tensor** out, ViewKind kind, Make&& make, Params&& params) {
  try {
    TSR_RETURN_IF_ERROR(make());
    if (!t->autograd) return nullptr;
    tsr_status_t st = record_view(t, *out, kind, params());
    if (st) {
      (*out)->release();
      *out = nullptr;
    }
    return st;
  } catch (const std::bad_alloc&) {
    return make_status(TSR_RESOURCE_EXHAUSTED, std::string(name) + ": out of host memory");
  } catch (const std::exception& e) {
    return make_status(TSR_INTERNAL, std::string(name) + ": " + e.what());
  }
}

// trace: the entry's arguments after the tensor, in its graph builtin's schema order
// (graph/builtins.cpp), recorded when the thread traces (graph/trace.hpp).
#define VIEW_ENTRY(name, params, call, trace, kind, ...)                                         \
  tsr_status_t tensor_##name params {                                                            \
    TSR_CHECK_ARG(t&& out, #name, "tensor and out are required");                                \
    graph::BuiltinScope scope;                                                                   \
    tsr_status_t st_ = view_entry(                                                               \
        #name, t, out, kind, [&]() { return call; }, [&]() { return ViewParams{__VA_ARGS__}; }); \
    if (!st_) scope.record(#name, t, *out, {TSR_UNPAREN trace});                                 \
    return st_;                                                                                  \
  }
#define TSR_UNPAREN(...) __VA_ARGS__

using graph::v_int;
using graph::v_ints;

static int64_t wrapped(int64_t d, int n) { return d < 0 ? d + n : d; }

VIEW_ENTRY(as_strided,
           (tsr_tensor_t * t, int32_t n, const int64_t* s, const int64_t* st, int64_t off, tsr_tensor_t** out),
           view_as_strided(t, n, s, st, off, out), (v_ints(s, n), v_ints(st, n), v_int(off)), ViewKind::AsStrided)
VIEW_ENTRY(view, (tsr_tensor_t * t, int32_t n, const int64_t* s, tsr_tensor_t** out), view_shape(t, n, s, out),
           (v_ints(s, n)), ViewKind::Reshape)
VIEW_ENTRY(reshape, (tsr_tensor_t * t, int32_t n, const int64_t* s, tsr_tensor_t** out), reshape(t, n, s, out),
           (v_ints(s, n)), ViewKind::Reshape)
VIEW_ENTRY(transpose, (tsr_tensor_t * t, int64_t a, int64_t b, tsr_tensor_t** out), transpose(t, a, b, out),
           (v_int(a), v_int(b)), ViewKind::Transpose, a, b)
VIEW_ENTRY(permute, (tsr_tensor_t * t, int32_t n, const int64_t* d, tsr_tensor_t** out), permute(t, n, d, out),
           (v_ints(d, n)), ViewKind::Permute, 0, 0, 0, 0, [&] {
             std::vector<int64_t> v(d, d + n);
             for (auto& x : v) x = wrapped(x, n);
             return v;
           }())
VIEW_ENTRY(expand, (tsr_tensor_t * t, int32_t n, const int64_t* s, tsr_tensor_t** out), expand(t, n, s, out),
           (v_ints(s, n)), ViewKind::Expand)
VIEW_ENTRY(slice, (tsr_tensor_t * t, int64_t d, int64_t a, int64_t b, int64_t s, tsr_tensor_t** out),
           slice(t, d, a, b, s, out), (v_int(d), v_int(a), v_int(b), v_int(s)), ViewKind::Slice, d, a, b, s)
VIEW_ENTRY(select, (tsr_tensor_t * t, int64_t d, int64_t i, tsr_tensor_t** out), select(t, d, i, out),
           (v_int(d), v_int(i)), ViewKind::Select, d, i)
VIEW_ENTRY(narrow, (tsr_tensor_t * t, int64_t d, int64_t a, int64_t l, tsr_tensor_t** out), narrow(t, d, a, l, out),
           (v_int(d), v_int(a), v_int(l)), ViewKind::Slice, d, a < 0 ? a + t->sizes[wrapped(d, t->ndim)] : a,
           (a < 0 ? a + t->sizes[wrapped(d, t->ndim)] : a) + l, 1)
VIEW_ENTRY(squeeze, (tsr_tensor_t * t, int64_t d, tsr_tensor_t** out), squeeze(t, d, out),
           (d == TSR_ALL_DIMS ? tsr_value_t{} : v_int(d)), ViewKind::Reshape)
VIEW_ENTRY(unsqueeze, (tsr_tensor_t * t, int64_t d, tsr_tensor_t** out), unsqueeze(t, d, out), (v_int(d)),
           ViewKind::Reshape)
VIEW_ENTRY(contiguous, (tsr_tensor_t * t, tsr_tensor_t** out), make_contiguous(t->runtime, t, "contiguous", out),
           (), ViewKind::Identity)

static tsr_status_t tensor_to_body(tsr_tensor_t* t, tsr_dtype_t dtype, tsr_device_t device, int32_t copy,
                                   tsr_tensor_t** out);
tsr_status_t tensor_to(tsr_tensor_t* t, tsr_dtype_t dtype, tsr_device_t device, int32_t copy, tsr_tensor_t** out) {
  TSR_CHECK_ARG(t && out, "to", "tensor and out are required");
  if (dtype == TSR_DTYPE_UNDEFINED) dtype = t->dtype;
  graph::BuiltinScope scope;
  tsr_status_t st = tensor_to_body(t, dtype, device, copy, out);
  if (!st) {
    tsr_value_t dt{}, dev{}, cp{};
    dt.tag = TSR_VALUE_DTYPE;
    dt.u.dtype = dtype;
    dev.tag = TSR_VALUE_DEVICE;
    dev.u.device = device;
    cp.tag = TSR_VALUE_BOOL;
    cp.u.b = copy != 0;
    scope.record("to", t, *out, {dt, dev, cp});
  }
  return st;
}

static tsr_status_t tensor_to_body(tsr_tensor_t* t, tsr_dtype_t dtype, tsr_device_t device, int32_t copy,
                                   tsr_tensor_t** out) {
  TSR_GUARD("to", {
    Runtime* rt = t->runtime;
    bool same = dtype == t->dtype && device.type == t->device.type && device.index == t->device.index;
    if (same && !copy) {
      t->retain();
      *out = t;
      return nullptr;
    }
    Tensor* r = nullptr;
    TSR_RETURN_IF_ERROR(new_tensor(rt, t->ndim, t->sizes, dtype, device, "to", &r));
    tsr_status_t st = copy_into(r, t, "to");
    if (!st) st = record_view(t, r, ViewKind::Identity, ViewParams{});
    if (st) {
      r->release();
      return st;
    }
    *out = r;
    return nullptr;
  })
}

static tsr_status_t tensor_copy_body(tsr_tensor_t* dst, tsr_tensor_t* src);
tsr_status_t tensor_copy_(tsr_tensor_t* dst, tsr_tensor_t* src) {
  TSR_CHECK_ARG(dst && src, "copy_", "dst and src are required");
  graph::BuiltinScope scope;
  tsr_status_t st = tensor_copy_body(dst, src);
  if (!st) {
    tsr_value_t s{};
    s.tag = TSR_VALUE_TENSOR;
    s.u.tensor = src;
    scope.record("copy_", dst, nullptr, {s});
  }
  return st;
}

static tsr_status_t tensor_copy_body(tsr_tensor_t* dst, tsr_tensor_t* src) {
  TSR_GUARD("copy_", {
    TSR_RETURN_IF_ERROR(check_copy_allowed(dst, src));
    // As the dispatcher checks every op's written tensors (ops/op_impl.hpp check_overlap): dst
    // must not overlap itself nor partially overlap src; dst.copy_(dst) is allowed.
    TSR_RETURN_IF_ERROR(assert_no_internal_overlap(dst, "copy_", "dst"));
    TSR_RETURN_IF_ERROR(assert_no_partial_overlap(dst, src, "copy_", "dst", "src"));
    TSR_RETURN_IF_ERROR(copy_into(dst, src, "copy_"));
    return record_copy(dst, src);
  })
}

tsr_status_t op_find(tsr_runtime_t* rt, const char* name, tsr_op_t** out) {
  TSR_CHECK_ARG(rt && name && out, "op_find", "runtime, name and out are required");
  std::lock_guard<std::mutex> lock(rt->registry_mutex);
  auto it = rt->op_by_name.find(name);
  if (it == rt->op_by_name.end()) return make_status(TSR_NOT_FOUND, std::string("op_find: no op named '") + name + "'");
  *out = it->second;
  return nullptr;
}

tsr_status_t op_call(tsr_op_t* op, const tsr_value_t* args, size_t nargs, tsr_tensor_t** outs, size_t nouts) {
  TSR_GUARD(op ? op->schema.name.c_str() : "op_call", return call_op(op, args, nargs, outs, nouts);)
}

const char* op_name(const tsr_op_t* op) { return op->schema.name.c_str(); }
const char* op_schema(const tsr_op_t* op) { return op->schema_text.c_str(); }
size_t op_num_outputs(const tsr_op_t* op) { return static_cast<size_t>(op->schema.num_outputs); }
size_t op_count(tsr_runtime_t* rt) { return rt->ops.size(); }
tsr_op_t* op_at(tsr_runtime_t* rt, size_t i) { return i < rt->ops.size() ? rt->ops[i].get() : nullptr; }

size_t op_kernel_count(const tsr_op_t* op) {
  const KernelTable* t = op->kernels.load();
  size_t n = 0;
  if (t)
    for (auto& v : t->by_type) n += v.size();
  return n;
}

tsr_status_t op_kernel_info(const tsr_op_t* op, size_t index, tsr_kernel_info_t* out) {
  TSR_CHECK_ARG(out, "op_kernel_info", "out is NULL");
  const KernelTable* t = op->kernels.load();
  if (t)
    for (auto& v : t->by_type)
      for (const KernelRec& k : v) {
        if (index-- != 0) continue;
        out->struct_size = sizeof(*out);
        out->kernel_name = k.kernel_name.c_str();
        out->plugin_name = k.plugin.c_str();
        out->device_type = k.def.device_type;
        out->priority = k.def.priority;
        out->dtype_mask = k.def.dtype_mask;
        out->has_predicate = k.def.predicate ? 1 : 0;
        return nullptr;
      }
  return make_status(TSR_OUT_OF_RANGE, "op_kernel_info: index out of range");
}

tsr_status_t op_source(const tsr_op_t* op, tsr_op_source_t* out) {
  TSR_CHECK_ARG(op, "op_source", "op is NULL");
  TSR_CHECK_ARG(out, "op_source", "out is NULL");
  *out = tsr_op_source_t{};
  out->struct_size = sizeof(*out);
  out->plugin = op->extra.plugin.empty() ? nullptr : op->extra.plugin.c_str();
  out->file = op->source_file;
  out->line = op->source_line;
  out->composite = op->composite ? 1 : 0;
  out->formula = op->formula_name;
  return nullptr;
}

size_t op_num_args(const tsr_op_t* op) { return op ? op->schema.args.size() : 0; }

tsr_status_t op_arg(const tsr_op_t* op, size_t index, tsr_op_arg_t* out) {
  TSR_CHECK_ARG(op, "op_arg", "op is NULL");
  TSR_CHECK_ARG(out, "op_arg", "out is NULL");
  if (index >= op->schema.args.size())
    return make_status(TSR_OUT_OF_RANGE, "op_arg: " + op->schema.name + " has " +
                                             std::to_string(op->schema.args.size()) + " arguments, not " +
                                             std::to_string(index + 1));
  const ArgSpec& a = op->schema.args[index];
  *out = tsr_op_arg_t{};
  out->struct_size = sizeof(*out);
  out->name = a.name.c_str();
  out->kind = static_cast<int32_t>(arg_kind_abi(a.kind));
  out->optional = a.optional ? 1 : 0;
  out->is_mutable = a.mutable_ ? 1 : 0;
  out->has_default = a.has_default ? 1 : 0;
  out->default_value = a.default_value;
  return nullptr;
}

tsr_status_t memory_stats(tsr_runtime_t* rt, tsr_device_t d, tsr_memory_stats_t* out) {
  TSR_CHECK_ARG(rt && out, "memory_stats", "runtime and out are required");
  DeviceAllocator* a = nullptr;
  TSR_RETURN_IF_ERROR(device_allocator(rt, d, "memory_stats", &a));
  tsr_memory_stats_t s{};
  a->stats(&s);
  size_t n = out->struct_size && out->struct_size < sizeof(s) ? out->struct_size : sizeof(s);
  std::memcpy(out, &s, n);
  out->struct_size = n;
  return nullptr;
}

tsr_status_t memory_snapshot(tsr_runtime_t* rt, tsr_device_t d, char** out) {
  TSR_CHECK_ARG(rt && out, "memory_snapshot", "runtime and out are required");
  DeviceAllocator* a = nullptr;
  TSR_RETURN_IF_ERROR(device_allocator(rt, d, "memory_snapshot", &a));
  TSR_GUARD("memory_snapshot", {
    std::string js = a->snapshot_json();
    char* s = static_cast<char*>(std::malloc(js.size() + 1));
    if (!s) return make_status(TSR_RESOURCE_EXHAUSTED, "memory_snapshot: out of host memory");
    std::memcpy(s, js.c_str(), js.size() + 1);
    *out = s;
    return nullptr;
  })
}

tsr_status_t empty_cache(tsr_runtime_t* rt, tsr_device_t d) {
  TSR_CHECK_ARG(rt, "empty_cache", "runtime is NULL");
  DeviceAllocator* a = nullptr;
  TSR_RETURN_IF_ERROR(device_allocator(rt, d, "empty_cache", &a));
  a->empty_cache();
  return nullptr;
}

void string_free(char* s) { std::free(s); }

tsr_status_t register_device_type(tsr_registrar_t* r, const tsr_device_type_def_t* d, int32_t* out) {
  TSR_GUARD("register_device_type", return reg_device_type(r, d, out);)
}
tsr_status_t register_allocator(tsr_registrar_t* r, const tsr_raw_allocator_t* d) {
  TSR_GUARD("register_allocator", return reg_allocator(r, d);)
}
tsr_status_t register_op(tsr_registrar_t* r, const tsr_op_def_t* d) { TSR_GUARD("register_op", return reg_op(r, d);) }
tsr_status_t register_kernel(tsr_registrar_t* r, const tsr_kernel_def_t* d) {
  TSR_GUARD("register_kernel", return reg_kernel(r, d);)
}
tsr_status_t register_extension(tsr_registrar_t* r, const char* n, const void* t) {
  TSR_GUARD("register_extension", return reg_extension(r, n, t);)
}

uint64_t runtime_serial(const tsr_runtime_t* rt) { return rt ? rt->serial : 0; }

tsr_status_t device_describe(tsr_runtime_t* rt, tsr_device_t d, char* buf, size_t len) {
  TSR_CHECK_ARG(rt && buf && len > 0, "device_describe", "runtime and a non-empty buffer are required");
  TSR_RETURN_IF_ERROR(check_device(rt, d, "device_describe"));
  const tsr_device_type_def_t& def = rt->device_types[d.type].def;
  buf[0] = '\0';
  if (def.describe) def.describe(def.self, d, buf, len);
  buf[len - 1] = '\0';
  if (buf[0] == '\0') std::snprintf(buf, len, "%s", device_str(rt, d).c_str());
  return nullptr;
}

const char* device_allocator_name(tsr_runtime_t* rt, tsr_device_t d) {
  if (!rt || check_device_quiet(rt, d)) return nullptr;
  const DeviceType& dt = rt->device_types[d.type];
  return dt.allocators[d.index] ? dt.allocator_name.c_str() : nullptr;
}

const char* plugin_search_dir(tsr_runtime_t* rt, size_t i) {
  return rt && i < rt->plugin_dirs.size() ? rt->plugin_dirs[i].c_str() : nullptr;
}

tsr_status_t rng_get_state(tsr_runtime_t* rt, uint64_t* seed, uint64_t* offset) {
  TSR_CHECK_ARG(rt && seed && offset, "rng_get_state", "runtime, seed and offset are required");
  *seed = rt->seed.load();
  *offset = rt->rng_offset.load();
  return nullptr;
}

tsr_status_t rng_set_state(tsr_runtime_t* rt, uint64_t seed, uint64_t offset) {
  TSR_CHECK_ARG(rt, "rng_set_state", "runtime is NULL");
  rt->seed.store(seed);
  rt->rng_offset.store(offset);
  return nullptr;
}

tsr_status_t safetensors_save(tsr_runtime_t* rt, const char* path, size_t n, const char* const* names,
                              tsr_tensor_t* const* tensors, size_t nmeta, const char* const* keys,
                              const char* const* values) {
  TSR_GUARD("safetensors_save", return st::save(rt, path, n, names, tensors, nmeta, keys, values);)
}
tsr_status_t safetensors_open(tsr_runtime_t* rt, const char* path, tsr_safetensors_t** out) {
  TSR_GUARD("safetensors_open", return st::open(rt, path, out);)
}
tsr_status_t safetensors_entry(const tsr_safetensors_t* f, size_t i, const char** name, tsr_dtype_t* dtype,
                               int32_t* ndim, const int64_t** sizes) {
  TSR_GUARD("safetensors_entry", return st::entry(f, i, name, dtype, ndim, sizes);)
}
tsr_status_t safetensors_find(const tsr_safetensors_t* f, const char* name, size_t* index) {
  TSR_GUARD("safetensors_find", return st::find(f, name, index);)
}
tsr_status_t safetensors_load(const tsr_safetensors_t* f, size_t i, tsr_device_t device, tsr_tensor_t** out) {
  TSR_GUARD("safetensors_load", return st::load(f, i, device, out);)
}
tsr_status_t safetensors_metadata_at(const tsr_safetensors_t* f, size_t i, const char** key, const char** value) {
  TSR_GUARD("safetensors_metadata_at", return st::metadata_at(f, i, key, value);)
}

const tsr_api_t kApi = {
    sizeof(tsr_api_t),
    TSR_ABI_VERSION,
    0,
    version_string,
    status_create,
    status_code,
    status_message,
    status_free,
    api_runtime_create,
    runtime_destroy,
    runtime_default,
    manual_seed,
    plugin_count,
    plugin_record,
    get_extension,
    api_log,
    device_type_lookup,
    device_type_name,
    device_type_count,
    device_count,
    device_synchronize,
    device_parse,
    tensor_empty,
    tensor_from_host,
    tensor_scalar,
    tensor_retain,
    tensor_release,
    tensor_runtime,
    tensor_dtype,
    tensor_device,
    tensor_ndim,
    tensor_sizes,
    tensor_strides,
    tensor_offset,
    tensor_numel,
    tensor_data,
    tensor_is_contiguous,
    tensor_shares_storage,
    tensor_copy_to_host,
    tensor_as_strided,
    tensor_view,
    tensor_reshape,
    tensor_transpose,
    tensor_permute,
    tensor_expand,
    tensor_slice,
    tensor_select,
    tensor_narrow,
    tensor_squeeze,
    tensor_unsqueeze,
    tensor_contiguous,
    tensor_to,
    tensor_copy_,
    op_find,
    op_call,
    op_name,
    op_schema,
    op_num_outputs,
    op_count,
    op_at,
    op_kernel_count,
    op_kernel_info,
    memory_stats,
    memory_snapshot,
    empty_cache,
    string_free,
    register_device_type,
    register_allocator,
    register_op,
    register_kernel,
    register_extension,
    runtime_serial,
    device_describe,
    device_allocator_name,
    plugin_search_dir,
    ag_api::tensor_requires_grad,
    ag_api::tensor_set_requires_grad,
    ag_api::tensor_is_leaf,
    ag_api::tensor_grad,
    ag_api::tensor_set_grad,
    ag_api::tensor_grad_fn_name,
    ag_api::tensor_detach,
    ag_api::tensor_retain_grad,
    ag_api::tensor_register_hook,
    ag_api::tensor_version,
    ag_api::autograd_backward,
    ag_api::autograd_grad,
    ag_api::grad_mode_enabled,
    ag_api::set_grad_mode,
    ag_api::inference_mode_enabled,
    ag_api::set_inference_mode,
    rng_get_state,
    rng_set_state,
    safetensors_save,
    safetensors_open,
    st::close,
    st::count,
    safetensors_entry,
    safetensors_find,
    safetensors_load,
    st::metadata_count,
    safetensors_metadata_at,
    st::metadata_get,
    // 1.2
    stream_api::device_properties,
    stream_api::device_get_current,
    stream_api::device_set_current,
    stream_api::stream_create,
    stream_api::stream_destroy,
    stream_api::stream_get_current,
    stream_api::stream_set_current,
    stream_api::stream_synchronize,
    stream_api::stream_query,
    stream_api::stream_wait_event,
    stream_api::event_create,
    stream_api::event_destroy,
    stream_api::event_record,
    stream_api::event_synchronize,
    stream_api::event_query,
    stream_api::event_elapsed_ms,
    stream_api::tensor_record_stream,
    stream_api::memory_set_fraction,
    stream_api::memory_pool_create,
    stream_api::memory_pool_begin,
    stream_api::memory_pool_end,
    stream_api::memory_pool_release,
    stream_api::precision_set,
    stream_api::precision_get,
    stream_api::tensor_from_blob,
    op_source,
    op_num_args,
    op_arg,
    tensor_to_dlpack,
    tensor_to_dlpack_legacy,
    tensor_from_dlpack,
    tensor_from_dlpack_legacy,
    // 1.5
    ag_api::tensor_register_post_accumulate_grad_hook,
    ag_api::tensor_remove_post_accumulate_grad_hook,
};

}  // namespace

namespace tsr::core {
const tsr_api_t* api_table() { return &kApi; }
}  // namespace tsr::core

extern "C" TSR_EXPORT const tsr_api_t* tsr_get_api(uint32_t abi_version) {
  if (TSR_ABI_VERSION_MAJOR(abi_version) != TSR_ABI_MAJOR) return nullptr;
  return &kApi;
}
