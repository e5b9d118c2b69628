// Devices, streams, events, precision settings and foreign-memory tensors (ABI 1.2).
//
// Streams and events are the backend's handles; the core validates the device and passes them
// through. Device types without stream callbacks are synchronous: the core hands out unique
// dummy handles that are never dereferenced, and every event is complete.
//
// The current stream and the current device are per thread, per runtime (keyed by the
// runtime's serial, which is never reused, so entries of a destroyed runtime are merely dead)
// and per device. The stream table is on the op-call hot path: a small thread-local array of
// plain structs (constant-initialized, so no TLS guard), scanned linearly; the rare thread
// with more than kInline current streams spills into a vector.
#include "runtime/streams.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "memory/allocator_util.hpp"
#include "ops/op_impl.hpp"
#include "runtime/status.hpp"
#include "runtime/thread_local.hpp"

namespace tsr::core {
namespace {

struct StreamEntry {
  uint64_t serial;
  int32_t type;
  int32_t index;
  tsr_stream_t* stream;
};

constexpr int kInline = 8;
thread_local StreamEntry t_streams[kInline];
TSR_TLS_HOT int t_nstreams = 0;  // read by every allocation (current_stream)
thread_local std::vector<StreamEntry> t_overflow;  // touched only when t_streams is full

struct DeviceEntry {
  uint64_t serial;
  int32_t type;
  int32_t index;
};
thread_local std::vector<DeviceEntry> t_devices;

inline bool matches(const StreamEntry& e, uint64_t serial, tsr_device_t d) {
  return e.serial == serial && e.type == d.type && e.index == d.index;
}

void set_stream_entry(uint64_t serial, tsr_device_t d, tsr_stream_t* stream) {
  for (int i = 0; i < t_nstreams; ++i) {
    if (!matches(t_streams[i], serial, d)) continue;
    if (stream != nullptr) {
      t_streams[i].stream = stream;
      return;
    }
    // Back to the default stream: drop the entry (refill the array from the overflow).
    if (!t_overflow.empty()) {
      t_streams[i] = t_overflow.back();
      t_overflow.pop_back();
    } else {
      t_streams[i] = t_streams[--t_nstreams];
    }
    return;
  }
  for (size_t i = 0; i < t_overflow.size(); ++i) {
    if (!matches(t_overflow[i], serial, d)) continue;
    if (stream != nullptr) {
      t_overflow[i].stream = stream;
    } else {
      t_overflow.erase(t_overflow.begin() + static_cast<std::ptrdiff_t>(i));
    }
    return;
  }
  if (stream == nullptr) return;
  if (t_nstreams < kInline) {
    t_streams[t_nstreams++] = StreamEntry{serial, d.type, d.index, stream};
  } else {
    t_overflow.push_back(StreamEntry{serial, d.type, d.index, stream});  // may throw bad_alloc
  }
}

// Unique non-NULL handles for device types without streams; never dereferenced.
template <class H>
H* dummy_handle() {
  static std::atomic<uintptr_t> next{1};
  return reinterpret_cast<H*>(next.fetch_add(1, std::memory_order_relaxed) * 64);
}

#define TSR_STREAM_GUARD(where, body)                                                        \
  try {                                                                                      \
    body                                                                                     \
  } catch (const std::bad_alloc&) {                                                          \
    return make_status(TSR_RESOURCE_EXHAUSTED, std::string(where) + ": out of host memory"); \
  } catch (const std::exception& e) {                                                        \
    return make_status(TSR_INTERNAL, std::string(where) + ": " + e.what());                  \
  }

tsr_status_t null_arg(const char* where, const char* what) {
  return make_status(TSR_INVALID_ARGUMENT, std::string(where) + ": " + what + " is NULL");
}

// The device type of a valid device, or a status.
tsr_status_t device_def(Runtime* rt, tsr_device_t d, const char* where, const DeviceType** out) {
  if (rt == nullptr) return null_arg(where, "runtime");
  TSR_RETURN_IF_ERROR(check_device(rt, d, where));
  *out = &rt->device_types[d.type];
  return nullptr;
}

}  // namespace

tsr_stream_t* current_stream(const Runtime* rt, tsr_device_t d) {
  const int n = t_nstreams;
  if (n == 0) return nullptr;
  const uint64_t serial = rt->serial;
  for (int i = 0; i < n; ++i) {
    if (matches(t_streams[i], serial, d)) return t_streams[i].stream;
  }
  if (n == kInline) {
    for (const StreamEntry& e : t_overflow) {
      if (matches(e, serial, d)) return e.stream;
    }
  }
  return nullptr;
}

tsr_status_t sync_after_host_copy(Runtime* rt, tsr_device_t device, tsr_stream_t* stream, const char* op) {
  const DeviceType& dt = rt->device_types[device.type];
  if (!dt.has_streams) return nullptr;
  tsr_status_t st = dt.def.stream_synchronize(dt.def.self, device, stream);
  return st ? prefix_status(st, op) : nullptr;
}

tsr_status_t fraction_limit(Runtime* rt, tsr_device_t device, double f, size_t* limit, std::string* why) {
  tsr_device_properties_t p{};
  p.struct_size = sizeof(p);
  TSR_RETURN_IF_ERROR(stream_api::device_properties(rt, device, &p));
  if (p.total_memory_bytes <= 0)
    return make_status(TSR_FAILED_PRECONDITION,
                       "memory fraction: " + device_str(rt, device) +
                           " reports no total memory (device_properties.total_memory_bytes is 0)");
  const double bytes = f * static_cast<double>(p.total_memory_bytes);
  *limit = std::max<size_t>(1, static_cast<size_t>(bytes));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", f);
  *why = std::string("per_process_memory_fraction ") + buf + " of " +
         format_bytes(static_cast<uint64_t>(p.total_memory_bytes)) + " total memory";
  return nullptr;
}

void init_precision(Runtime* rt) {
  const char* env = std::getenv("TESSERA_ALLOW_TF32");
  if (env == nullptr || *env == '\0') return;
  if (std::strcmp(env, "0") == 0 || std::strcmp(env, "1") == 0) {
    const int32_t v = env[0] == '1' ? 1 : 0;
    rt->precision[TSR_PRECISION_MATMUL_ALLOW_TF32].store(v);
    rt->precision[TSR_PRECISION_CONV_ALLOW_TF32].store(v);
  } else {
    log(TSR_LOG_WARN, std::string("TESSERA_ALLOW_TF32='") + env + "' ignored (expected 0 or 1)");
  }
}

namespace stream_api {

tsr_status_t device_properties(tsr_runtime_t* rt, tsr_device_t device, tsr_device_properties_t* out) {
  if (out == nullptr) return null_arg("device_properties", "out");
  TSR_STREAM_GUARD("device_properties", {
    const DeviceType* dt = nullptr;
    TSR_RETURN_IF_ERROR(device_def(rt, device, "device_properties", &dt));
    tsr_device_properties_t p{};
    p.struct_size = sizeof(p);
    if (dt->def.properties) {
      tsr_status_t st = dt->def.properties(dt->def.self, device, &p);
      if (st) return prefix_status(st, "device_properties(" + device_str(rt, device) + ")");
    }
    p.name[sizeof(p.name) - 1] = '\0';
    if (device.type == TSR_DEVICE_TYPE_CPU) {
      if (p.name[0] == '\0') std::snprintf(p.name, sizeof p.name, "cpu");
      if (p.multiprocessor_count == 0)
        p.multiprocessor_count = static_cast<int32_t>(std::max(1u, std::thread::hardware_concurrency()));
      p.integrated = 1;
    } else if (p.name[0] == '\0') {
      std::snprintf(p.name, sizeof p.name, "%s", dt->name.c_str());
    }
    const size_t n = out->struct_size && out->struct_size < sizeof(p) ? out->struct_size : sizeof(p);
    p.struct_size = n;
    std::memcpy(out, &p, n);
    return nullptr;
  })
}

tsr_status_t device_get_current(tsr_runtime_t* rt, int32_t type, int32_t* index) {
  if (rt == nullptr || index == nullptr) return null_arg("device_get_current", "runtime or index");
  if (type < 0 || type >= rt->num_device_types.load() || !rt->device_types[type].def.copy)
    return make_status(TSR_INVALID_ARGUMENT, "device_get_current: unknown device type " + std::to_string(type));
  *index = 0;
  for (const DeviceEntry& e : t_devices) {
    if (e.serial == rt->serial && e.type == type) *index = e.index;
  }
  return nullptr;
}

tsr_status_t device_set_current(tsr_runtime_t* rt, tsr_device_t device){
    TSR_STREAM_GUARD("device_set_current",
                     {
                       const DeviceType* dt = nullptr;
                       TSR_RETURN_IF_ERROR(device_def(rt, device, "device_set_current", &dt));
                       for (DeviceEntry& e : t_devices) {
                         if (e.serial == rt->serial && e.type == device.type) {
                           e.index = device.index;
                           return nullptr;
                         }
                       }
                       t_devices.push_back(DeviceEntry{rt->serial, device.type, device.index});
                       return nullptr;
                     })}

tsr_status_t stream_create(tsr_runtime_t* rt, tsr_device_t device, int32_t priority, tsr_stream_t** out) {
  if (out == nullptr) return null_arg("stream_create", "out");
  const DeviceType* dt = nullptr;
  TSR_RETURN_IF_ERROR(device_def(rt, device, "stream_create", &dt));
  if (!dt->has_streams) {
    *out = dummy_handle<tsr_stream_t>();
    return nullptr;
  }
  tsr_stream_t* s = nullptr;
  tsr_status_t st = dt->def.stream_create(dt->def.self, device, priority, &s);
  if (st) return prefix_status(st, "stream_create(" + device_str(rt, device) + ")");
  *out = s;
  return nullptr;
}

tsr_status_t stream_destroy(tsr_runtime_t* rt, tsr_device_t device, tsr_stream_t* stream) {
  const DeviceType* dt = nullptr;
  TSR_RETURN_IF_ERROR(device_def(rt, device, "stream_destroy", &dt));
  if (stream == nullptr)
    return make_status(TSR_INVALID_ARGUMENT, "stream_destroy: the default stream (NULL) cannot be destroyed");
  // A destroyed stream must not stay current on this thread (other threads: the caller's job).
  if (current_stream(rt, device) == stream) set_stream_entry(rt->serial, device, nullptr);
  if (!dt->has_streams) return nullptr;
  return dt->def.stream_destroy(dt->def.self, device, stream);
}

tsr_status_t stream_get_current(tsr_runtime_t* rt, tsr_device_t device, tsr_stream_t** out) {
  if (out == nullptr) return null_arg("stream_get_current", "out");
  const DeviceType* dt = nullptr;
  TSR_RETURN_IF_ERROR(device_def(rt, device, "stream_get_current", &dt));
  *out = current_stream(rt, device);
  return nullptr;
}

tsr_status_t stream_set_current(tsr_runtime_t* rt, tsr_device_t device, tsr_stream_t* stream){
    TSR_STREAM_GUARD("stream_set_current",
                     {
                       const DeviceType* dt = nullptr;
                       TSR_RETURN_IF_ERROR(device_def(rt, device, "stream_set_current", &dt));
                       set_stream_entry(rt->serial, device, stream);
                       return nullptr;
                     })}

tsr_status_t stream_synchronize(tsr_runtime_t* rt, tsr_device_t device, tsr_stream_t* stream) {
  const DeviceType* dt = nullptr;
  TSR_RETURN_IF_ERROR(device_def(rt, device, "stream_synchronize", &dt));
  if (!dt->has_streams) return dt->def.synchronize ? dt->def.synchronize(dt->def.self, device) : nullptr;
  return dt->def.stream_synchronize(dt->def.self, device, stream);
}

tsr_status_t stream_query(tsr_runtime_t* rt, tsr_device_t device, tsr_stream_t* stream, int32_t* done) {
  if (done == nullptr) return null_arg("stream_query", "done");
  const DeviceType* dt = nullptr;
  TSR_RETURN_IF_ERROR(device_def(rt, device, "stream_query", &dt));
  if (!dt->has_streams) {
    *done = 1;
    return nullptr;
  }
  return dt->def.stream_query(dt->def.self, device, stream, done);
}

tsr_status_t stream_wait_event(tsr_runtime_t* rt, tsr_device_t device, tsr_stream_t* stream, tsr_event_t* event) {
  const DeviceType* dt = nullptr;
  TSR_RETURN_IF_ERROR(device_def(rt, device, "stream_wait_event", &dt));
  if (event == nullptr) return null_arg("stream_wait_event", "event");
  if (!dt->has_streams) return nullptr;
  return dt->def.stream_wait_event(dt->def.self, device, stream, event);
}

tsr_status_t event_create(tsr_runtime_t* rt, tsr_device_t device, uint32_t flags, tsr_event_t** out) {
  if (out == nullptr) return null_arg("event_create", "out");
  const DeviceType* dt = nullptr;
  TSR_RETURN_IF_ERROR(device_def(rt, device, "event_create", &dt));
  if (flags & ~TSR_EVENT_TIMING)
    return make_status(TSR_INVALID_ARGUMENT, "event_create: unknown flags " + std::to_string(flags));
  if (!dt->has_streams) {
    *out = dummy_handle<tsr_event_t>();
    return nullptr;
  }
  tsr_event_t* e = nullptr;
  tsr_status_t st = dt->def.event_create(dt->def.self, device, flags, &e);
  if (st) return prefix_status(st, "event_create(" + device_str(rt, device) + ")");
  *out = e;
  return nullptr;
}

tsr_status_t event_destroy(tsr_runtime_t* rt, tsr_device_t device, tsr_event_t* event) {
  const DeviceType* dt = nullptr;
  TSR_RETURN_IF_ERROR(device_def(rt, device, "event_destroy", &dt));
  if (event == nullptr || !dt->has_streams) return nullptr;
  return dt->def.event_destroy(dt->def.self, device, event);
}

tsr_status_t event_record(tsr_runtime_t* rt, tsr_device_t device, tsr_event_t* event, tsr_stream_t* stream) {
  const DeviceType* dt = nullptr;
  TSR_RETURN_IF_ERROR(device_def(rt, device, "event_record", &dt));
  if (event == nullptr) return null_arg("event_record", "event");
  if (!dt->has_streams) return nullptr;
  return dt->def.event_record(dt->def.self, device, event, stream);
}

tsr_status_t event_synchronize(tsr_runtime_t* rt, tsr_device_t device, tsr_event_t* event) {
  const DeviceType* dt = nullptr;
  TSR_RETURN_IF_ERROR(device_def(rt, device, "event_synchronize", &dt));
  if (event == nullptr) return null_arg("event_synchronize", "event");
  if (!dt->has_streams) return nullptr;
  return dt->def.event_synchronize(dt->def.self, device, event);
}

tsr_status_t event_query(tsr_runtime_t* rt, tsr_device_t device, tsr_event_t* event, int32_t* done) {
  if (done == nullptr) return null_arg("event_query", "done");
  const DeviceType* dt = nullptr;
  TSR_RETURN_IF_ERROR(device_def(rt, device, "event_query", &dt));
  if (event == nullptr) return null_arg("event_query", "event");
  if (!dt->has_streams) {
    *done = 1;
    return nullptr;
  }
  return dt->def.event_query(dt->def.self, device, event, done);
}

tsr_status_t event_elapsed_ms(tsr_runtime_t* rt, tsr_device_t device, tsr_event_t* start, tsr_event_t* end, float* ms) {
  if (ms == nullptr) return null_arg("event_elapsed_ms", "ms");
  const DeviceType* dt = nullptr;
  TSR_RETURN_IF_ERROR(device_def(rt, device, "event_elapsed_ms", &dt));
  if (start == nullptr || end == nullptr) return null_arg("event_elapsed_ms", "start or end event");
  if (!dt->has_streams)
    return make_status(TSR_UNIMPLEMENTED, "event_elapsed_ms: " + device_str(rt, device) +
                                              " has no streams, so its events carry no timestamps");
  return dt->def.event_elapsed_ms(dt->def.self, device, start, end, ms);
}

tsr_status_t tensor_record_stream(tsr_tensor_t* t, tsr_stream_t* stream) {
  if (t == nullptr) return null_arg("tensor_record_stream", "tensor");
  Storage* s = t->storage;
  // Foreign memory (tensor_from_blob) is the caller's to order.
  if (s == nullptr || s->allocator == nullptr || s->data == nullptr) return nullptr;
  tsr_status_t st = s->allocator->record_stream(s->data, stream);
  return st;
}

tsr_status_t memory_set_fraction(tsr_runtime_t* rt, tsr_device_t device, double fraction){
    TSR_STREAM_GUARD("memory_set_fraction",
                     {
                       DeviceAllocator* a = nullptr;
                       if (rt == nullptr) return null_arg("memory_set_fraction", "runtime");
                       TSR_RETURN_IF_ERROR(device_allocator(rt, device, "memory_set_fraction", &a));
                       if (!(fraction > 0.0) || fraction > 1.0)
                         return make_status(TSR_INVALID_ARGUMENT, "memory_set_fraction: fraction " +
                                                                      std::to_string(fraction) + " is not in (0, 1]");
                       size_t limit = 0;
                       std::string why;
                       TSR_RETURN_IF_ERROR(
                           prefix_status(fraction_limit(rt, device, fraction, &limit, &why), "memory_set_fraction"));
                       a->set_limit(limit, why);
                       return nullptr;
                     })}

tsr_status_t memory_pool_create(tsr_runtime_t* rt, tsr_device_t device, uint64_t* pool) {
  if (pool == nullptr) return null_arg("memory_pool_create", "pool");
  if (rt == nullptr) return null_arg("memory_pool_create", "runtime");
  DeviceAllocator* a = nullptr;
  TSR_RETURN_IF_ERROR(device_allocator(rt, device, "memory_pool_create", &a));
  return a->pool_create(pool);
}

tsr_status_t memory_pool_begin(tsr_runtime_t* rt, tsr_device_t device, uint64_t pool, tsr_stream_t* stream) {
  if (rt == nullptr) return null_arg("memory_pool_begin", "runtime");
  DeviceAllocator* a = nullptr;
  TSR_RETURN_IF_ERROR(device_allocator(rt, device, "memory_pool_begin", &a));
  return a->pool_begin(pool, stream);
}

tsr_status_t memory_pool_end(tsr_runtime_t* rt, tsr_device_t device, uint64_t pool, tsr_stream_t* stream) {
  if (rt == nullptr) return null_arg("memory_pool_end", "runtime");
  DeviceAllocator* a = nullptr;
  TSR_RETURN_IF_ERROR(device_allocator(rt, device, "memory_pool_end", &a));
  return a->pool_end(pool, stream);
}

tsr_status_t memory_pool_release(tsr_runtime_t* rt, tsr_device_t device, uint64_t pool) {
  if (rt == nullptr) return null_arg("memory_pool_release", "runtime");
  DeviceAllocator* a = nullptr;
  TSR_RETURN_IF_ERROR(device_allocator(rt, device, "memory_pool_release", &a));
  return a->pool_release(pool);
}

tsr_status_t precision_set(tsr_runtime_t* rt, tsr_precision_setting_t setting, int32_t enabled) {
  if (rt == nullptr) return null_arg("precision_set", "runtime");
  const int s = static_cast<int>(setting);
  if (s < 1 || s > 4) return make_status(TSR_INVALID_ARGUMENT, "precision_set: unknown setting " + std::to_string(s));
  rt->precision[s].store(enabled ? 1 : 0, std::memory_order_relaxed);
  return nullptr;
}

int32_t precision_get(tsr_runtime_t* rt, tsr_precision_setting_t setting) {
  const int s = static_cast<int>(setting);
  if (rt == nullptr || s < 1 || s > 4) return 0;
  return rt->precision[s].load(std::memory_order_relaxed);
}

tsr_status_t tensor_from_blob(tsr_runtime_t* rt, void* data, int32_t ndim, const int64_t* sizes, const int64_t* strides,
                              tsr_dtype_t dtype, tsr_device_t device, void (*deleter)(void* ctx, void* data), void* ctx,
                              tsr_tensor_t** out) {
  const char* op = "from_blob";
  if (rt == nullptr || out == nullptr) return null_arg(op, "runtime or out");
  TSR_STREAM_GUARD(op, {
    int64_t numel = 0;
    TSR_RETURN_IF_ERROR(check_shape(op, ndim, sizes, &numel));
    if (!dtype_valid(dtype))
      return make_status(TSR_INVALID_ARGUMENT, std::string(op) + ": invalid dtype " + std::to_string(dtype));
    TSR_RETURN_IF_ERROR(check_device(rt, device, op));
    int64_t st[TSR_MAX_DIMS];
    if (strides != nullptr) {
      for (int d = 0; d < ndim; ++d) {
        if (strides[d] < 0)
          return make_status(TSR_INVALID_ARGUMENT, std::string(op) + ": negative stride " + std::to_string(strides[d]) +
                                                       " in dimension " + std::to_string(d));
        st[d] = strides[d];
      }
    } else {
      contiguous_strides(ndim, sizes, st);
    }
    // Elements spanned: 1 + sum (size-1)*stride (0 for an empty tensor).
    int64_t extent = numel == 0 ? 0 : 1;
    if (numel != 0)
      for (int d = 0; d < ndim; ++d) extent += (sizes[d] - 1) * st[d];
    if (extent > 0 && data == nullptr) return make_status(TSR_INVALID_ARGUMENT, std::string(op) + ": data is NULL");
    auto storage = std::make_unique<Storage>();
    auto t = std::make_unique<Tensor>();
    storage->data = data;
    storage->nbytes = static_cast<size_t>(extent) * dtype_size(dtype);
    storage->allocator = nullptr;
    storage->device = device;
    storage->stream = current_stream(rt, device);
    storage->deleter = deleter;
    storage->deleter_ctx = ctx;
    t->runtime = rt;
    t->dtype = dtype;
    t->device = device;
    t->ndim = ndim;
    for (int d = 0; d < ndim; ++d) {
      t->sizes[d] = sizes[d];
      t->strides[d] = st[d];
    }
    refresh_layout(t.get());
    t->storage = storage.release();  // nothing throws from here on
    *out = t.release();
    return nullptr;
  })
}

}  // namespace stream_api
}  // namespace tsr::core
