#include <cstdlib>
#include <cstring>

#include "ops/op_impl.hpp"
#include "plugins/registrar.hpp"
#include "runtime/status.hpp"
#include "runtime/streams.hpp"
#include "tessera/ext_dispatch_trace.h"
#include "tessera/ext_model.h"

namespace tsr::core {

int32_t find_device_type(const Runtime* rt, const std::string& name) {
  for (int32_t t = 0; t < rt->num_device_types.load(); ++t)
    if (rt->device_types[t].name == name && rt->device_types[t].def.copy) return t;
  return -1;
}

std::string device_str(Runtime* rt, tsr_device_t device) {
  if (device.type == TSR_DEVICE_TYPE_HOST) return "host";
  std::string name =
      (device.type >= 0 && device.type < rt->num_device_types.load() && !rt->device_types[device.type].name.empty())
          ? rt->device_types[device.type].name
          : "device_type_" + std::to_string(device.type);
  return name + ":" + std::to_string(device.index);
}

tsr_status_t check_device(Runtime* rt, tsr_device_t device, const char* op) {
  if (device.type < 0 || device.type >= rt->num_device_types.load() || !rt->device_types[device.type].def.copy) {
    std::string known;
    for (int32_t t = 0; t < rt->num_device_types.load(); ++t)
      if (rt->device_types[t].def.copy)
        known += (known.empty() ? "" : ", ") + rt->device_types[t].name + " (" +
                 std::to_string(rt->device_types[t].count) + ")";
    return make_status(TSR_INVALID_ARGUMENT,
                       std::string(op) + ": device " + device_str(rt, device) +
                           " is not available (loaded device types: " + (known.empty() ? "none" : known) + ")");
  }
  if (device.index < 0 || device.index >= rt->device_types[device.type].count)
    return make_status(TSR_INVALID_ARGUMENT, std::string(op) + ": device " + device_str(rt, device) +
                                                 " does not exist (" + rt->device_types[device.type].name + " has " +
                                                 std::to_string(rt->device_types[device.type].count) + " device(s))");
  return nullptr;
}

tsr_status_t device_allocator(Runtime* rt, tsr_device_t device, const char* op, DeviceAllocator** out) {
  TSR_RETURN_IF_ERROR(check_device(rt, device, op));
  DeviceAllocator* a = rt->device_types[device.type].allocators[device.index].get();
  if (!a)
    return make_status(TSR_FAILED_PRECONDITION,
                       std::string(op) + ": no allocator is registered for " + device_str(rt, device));
  *out = a;
  return nullptr;
}

tsr_status_t new_tensor(Runtime* rt, int ndim, const int64_t* sizes, tsr_dtype_t dtype, tsr_device_t device,
                        const char* op, Tensor** out) {
  int64_t numel = 0;
  TSR_RETURN_IF_ERROR(check_shape(op, ndim, sizes, &numel));
  if (!dtype_valid(dtype))
    return make_status(TSR_INVALID_ARGUMENT, std::string(op) + ": invalid dtype " + std::to_string(dtype));
  DeviceAllocator* alloc = nullptr;
  TSR_RETURN_IF_ERROR(device_allocator(rt, device, op, &alloc));
  return new_tensor_trusted(rt, ndim, sizes, numel, dtype, device, alloc, op, out);
}

tsr_status_t new_tensor_trusted(Runtime* rt, int ndim, const int64_t* sizes, int64_t numel, tsr_dtype_t dtype,
                                tsr_device_t device, DeviceAllocator* alloc, const char* op, Tensor** out) {
  size_t nbytes = static_cast<size_t>(numel) * dtype_size(dtype);
  tsr_stream_t* stream = current_stream(rt, device);
  const bool in_block = nbytes <= TensorBlock::kInlineBytes && alloc->small_tensors_inline;
  void* data = nullptr;
  if (!in_block)
    if (tsr_status_t st = alloc->allocate(nbytes, stream, &data)) return prefix_status(st, op);
  TensorBlock* block;
  try {
    block = new_tensor_block();
  } catch (const std::bad_alloc&) {
    alloc->deallocate(data);
    return make_status(TSR_RESOURCE_EXHAUSTED, std::string(op) + ": out of host memory");
  }
  Storage* storage = &block->storage;
  storage->data = in_block ? (nbytes ? block->inline_data : nullptr) : data;
  storage->nbytes = nbytes;
  storage->allocator = in_block ? nullptr : alloc;
  storage->device = device;
  storage->stream = stream;
  storage->free_block = &TensorBlock::free_block;
  Tensor* t = &block->tensor;
  t->in_block = true;
  t->runtime = rt;
  t->storage = storage;
  t->dtype = dtype;
  t->device = device;
  t->ndim = ndim;
  if (ndim > 0) std::memcpy(t->sizes, sizes, sizeof(int64_t) * static_cast<size_t>(ndim));
  contiguous_strides(ndim, sizes, t->strides);
  t->numel = numel;
  t->contiguous = true;
  *out = t;
  return nullptr;
}

// ---- extensions the core publishes itself --------------------------------------------------

static tsr_status_t set_dispatch_observer(tsr_runtime_t* rt, tsr_dispatch_observer_fn_t fn, void* user) {
  if (!rt) return make_status(TSR_INVALID_ARGUMENT, "dispatch_trace set_observer: runtime is NULL");
  std::lock_guard<std::mutex> lock(rt->observer_mutex);
  if (!fn) {
    // Every observer record lives as long as the runtime: a dispatch racing with the removal may
    // still read the old one.
    rt->dispatch_observer.store(nullptr, std::memory_order_release);
    return nullptr;
  }
  if (rt->dispatch_observer.load(std::memory_order_acquire))
    return make_status(TSR_FAILED_PRECONDITION,
                       "dispatch_trace set_observer: another observer is installed on this runtime (remove it first)");
  rt->observer_storage.push_back(std::make_unique<Runtime::DispatchObserver>(Runtime::DispatchObserver{fn, user}));
  rt->dispatch_observer.store(rt->observer_storage.back().get(), std::memory_order_release);
  return nullptr;
}

static const tsr_dispatch_trace_t kDispatchTrace = {sizeof(tsr_dispatch_trace_t), 0, set_dispatch_observer};

const void* model_extension();  // api/model_api.cpp

void publish_core_extensions(Runtime* rt) {
  rt->extensions[TSR_DISPATCH_TRACE_EXTENSION] = &kDispatchTrace;
  rt->extensions[TSR_MODEL_EXTENSION] = model_extension();
}

tsr_status_t device_memcpy(Runtime* rt, tsr_device_t dst_dev, void* dst, tsr_device_t src_dev, const void* src,
                                  size_t nbytes, const char* op) {
  if (nbytes == 0) return nullptr;
  // The non-cpu side's device type knows how to reach host memory.
  int32_t type = dst_dev.type;
  if (type == TSR_DEVICE_TYPE_CPU || type == TSR_DEVICE_TYPE_HOST) type = src_dev.type;
  if (type == TSR_DEVICE_TYPE_HOST) type = TSR_DEVICE_TYPE_CPU;
  tsr_device_t owner{type, type == dst_dev.type ? dst_dev.index : src_dev.index};
  TSR_RETURN_IF_ERROR(check_device(rt, owner, op));
  const tsr_device_type_def_t& def = rt->device_types[type].def;
  tsr_stream_t* stream = current_stream(rt, owner);
  tsr_status_t st = def.copy(def.self, dst_dev, dst, src_dev, src, nbytes, stream);
  // A copy with host memory on one side completes before returning, as PyTorch's blocking copy.
  if (!st && (dst_dev.type != type || src_dev.type != type)) st = sync_after_host_copy(rt, owner, stream, op);
  return prefix_status(
      st, std::string(op) + ": copy " + device_str(rt, src_dev) + " -> " + device_str(rt, dst_dev) + " failed");
}

tsr_status_t copy_into(Tensor* dst, Tensor* src, const char* op) {
  Runtime* rt = dst->runtime;
  if (dst->numel == 0) return nullptr;
  dst->bump_version();
  bool same_dev = dst->device.type == src->device.type && dst->device.index == src->device.index;
  bool same_shape = dst->ndim == src->ndim && std::equal(dst->sizes, dst->sizes + dst->ndim, src->sizes);
  if (!same_dev) {
    // Across devices: bring a dense copy of src (same dtype) onto dst's device first.
    Tensor* dense = nullptr;
    TSR_RETURN_IF_ERROR(make_contiguous(rt, src, op, &dense));
    Tensor* staged = nullptr;
    tsr_status_t st = nullptr;
    if (same_shape && dst->contiguous && dst->dtype == src->dtype) {
      st = device_memcpy(rt, dst->device, dst->data(), dense->device, dense->data(),
                         static_cast<size_t>(dense->numel) * dtype_size(dense->dtype), op);
      dense->release();
      return st;
    }
    st = new_tensor(rt, dense->ndim, dense->sizes, dense->dtype, dst->device, op, &staged);
    if (!st)
      st = device_memcpy(rt, staged->device, staged->data(), dense->device, dense->data(),
                         static_cast<size_t>(dense->numel) * dtype_size(dense->dtype), op);
    dense->release();
    if (!st) st = copy_into(dst, staged, op);
    if (staged) staged->release();
    return st;
  }
  // Same device: the "_copy" kernel converts dtype and handles strides and broadcasting.
  int nd = dst->ndim;
  if (src->ndim > nd)
    return make_status(TSR_INVALID_ARGUMENT,
                       std::string(op) + ": cannot copy " + describe(rt, src) + " into " + describe(rt, dst));
  for (int d = 0; d < src->ndim; ++d) {
    int64_t s = src->sizes[d], o = dst->sizes[nd - src->ndim + d];
    if (s != o && s != 1)
      return make_status(TSR_INVALID_ARGUMENT, std::string(op) + ": cannot copy " + describe(rt, src) + " into " +
                                                   describe(rt, dst) + " (shapes do not broadcast)");
  }
  tsr_iter_t it;
  Tensor* ops[2] = {dst, src};
  build_iter(ops, 2, 1, nd, dst->sizes, 0, &it);
  tsr_value_t arg;
  arg.tag = TSR_VALUE_TENSOR;
  arg.u.tensor = src;
  tsr_status_t st = launch_op(rt, rt->op_copy, dst->device, dst->dtype, &arg, 1, &src, 1, &dst, 1, &it);
  return prefix_status(st, op);
}

}  // namespace tsr::core

using namespace tsr::core;

// ---- runtime lifecycle (exported through the api table in api/api.cpp) ----
namespace tsr::core {

void runtime_destroy(tsr_runtime_t* rt);

// A "TYPE.key" entry for a device type that no plugin provides or offered is most likely a typo
// ("cdua.limit_mb"); it is not an error, since one configuration serves machines with and
// without a GPU (a refused cuda plugin still has a record), but it must not pass unseen.
static void warn_unknown_alloc_conf_devices(Runtime* rt) {
  for (const std::string& prefix : alloc_conf_device_prefixes(rt->alloc_conf)) {
    bool known = false;
    std::string types;
    for (int32_t t = 0; t < rt->num_device_types.load(); ++t) {
      known = known || rt->device_types[t].name == prefix;
      types += (types.empty() ? "" : ", ") + rt->device_types[t].name;
    }
    for (const PluginRecord& r : rt->plugin_records) known = known || r.name == prefix;
    if (!known)
      log(TSR_LOG_WARN, "TESSERA_ALLOC_CONF: '" + prefix + ".' names no device type or plugin (device types: " + types +
                            "); its entries are ignored");
  }
}

tsr_status_t runtime_create(const tsr_runtime_options_t* options, tsr_runtime_t** out) {
  if (!out) return make_status(TSR_INVALID_ARGUMENT, "runtime_create: out is NULL");
  static std::atomic<uint64_t> next_serial{1};
  auto* rt = new tsr_runtime_s;
  rt->serial = next_serial.fetch_add(1);
  rt->device_types[TSR_DEVICE_TYPE_CPU].name = "cpu";  // "cpu" is always id 0
  rt->num_device_types.store(1);
  init_precision(rt);
  const char* conf = options && TSR_HAS_FIELD(options, tsr_runtime_options_t, alloc_conf) && options->alloc_conf
                         ? options->alloc_conf
                         : std::getenv("TESSERA_ALLOC_CONF");
  rt->alloc_conf = conf ? conf : "";
  AllocConf check;
  tsr_status_t st = parse_alloc_conf(rt->alloc_conf, "", &check);
  if (!st) st = register_builtin_ops(rt);
  if (st) {
    delete rt;
    return st;
  }
  rt->op_copy = rt->op_by_name.at("_copy");
  rt->op_fill = rt->op_by_name.at("_fill");
  publish_core_extensions(rt);
  load_plugins(rt, options);
  warn_unknown_alloc_conf_devices(rt);
  if ((st = finalize_allocators(rt))) {
    runtime_destroy(rt);
    return st;
  }
  *out = rt;
  return nullptr;
}

void runtime_destroy(tsr_runtime_t* rt) {
  if (!rt) return;
  // Cached blocks go back through the plugins' raw allocators before the plugins shut down,
  // after the work still enqueued on asynchronous devices is done with them.
  for (int32_t t = 0; t < rt->num_device_types.load(); ++t) {
    const DeviceType& dt = rt->device_types[t];
    if (!dt.has_streams || !dt.def.synchronize) continue;
    for (int32_t i = 0; i < dt.count; ++i) free_status(dt.def.synchronize(dt.def.self, tsr_device_t{t, i}));
  }
  for (auto& dt : rt->device_types)
    for (auto& a : dt.allocators) a.reset();
  shutdown_plugins(rt);
  delete rt;
}

}  // namespace tsr::core
