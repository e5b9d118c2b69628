// Devices, streams, events, precision settings and foreign-memory tensors (ABI 1.2) inside the
// core: the per-thread current stream and device, and the api entries of those sections.
#pragma once

#include <cstddef>
#include <string>

#include "runtime/runtime.hpp"

namespace tsr::core {

// The calling thread's current stream of `device` in `rt` (NULL = the default stream). On the
// op-call hot path: a thread-local table keyed by (runtime serial, device), no lock, no
// allocation; a thread that never set a stream pays one thread-local load and a branch.
tsr_stream_t* current_stream(const Runtime* rt, tsr_device_t device);

// After a copy between host memory and an asynchronous device on `stream`: waits for it, so
// that the host sees (or may reuse) its memory as with a synchronous copy (PyTorch's
// non_blocking=False). No-op for devices without streams.
tsr_status_t sync_after_host_copy(Runtime* rt, tsr_device_t device, tsr_stream_t* stream, const char* op);

// The reserved-bytes limit for memory fraction f of the device's total memory, with the text
// OOM messages quote. FAILED_PRECONDITION when the backend reports no total memory.
tsr_status_t fraction_limit(Runtime* rt, tsr_device_t device, double f, size_t* limit, std::string* why);

// Reads TESSERA_ALLOW_TF32 into a new runtime's precision switches.
void init_precision(Runtime* rt);

// The api table entries (api/api.cpp).
namespace stream_api {
tsr_status_t device_properties(tsr_runtime_t* rt, tsr_device_t device, tsr_device_properties_t* out);
tsr_status_t device_get_current(tsr_runtime_t* rt, int32_t type, int32_t* index);
tsr_status_t device_set_current(tsr_runtime_t* rt, tsr_device_t device);
tsr_status_t stream_create(tsr_runtime_t* rt, tsr_device_t device, int32_t priority, tsr_stream_t** out);
tsr_status_t stream_destroy(tsr_runtime_t* rt, tsr_device_t device, tsr_stream_t* stream);
tsr_status_t stream_get_current(tsr_runtime_t* rt, tsr_device_t device, tsr_stream_t** out);
tsr_status_t stream_set_current(tsr_runtime_t* rt, tsr_device_t device, tsr_stream_t* stream);
tsr_status_t stream_synchronize(tsr_runtime_t* rt, tsr_device_t device, tsr_stream_t* stream);
tsr_status_t stream_query(tsr_runtime_t* rt, tsr_device_t device, tsr_stream_t* stream, int32_t* done);
tsr_status_t stream_wait_event(tsr_runtime_t* rt, tsr_device_t device, tsr_stream_t* stream, tsr_event_t* event);
tsr_status_t event_create(tsr_runtime_t* rt, tsr_device_t device, uint32_t flags, tsr_event_t** out);
tsr_status_t event_destroy(tsr_runtime_t* rt, tsr_device_t device, tsr_event_t* event);
tsr_status_t event_record(tsr_runtime_t* rt, tsr_device_t device, tsr_event_t* event, tsr_stream_t* stream);
tsr_status_t event_synchronize(tsr_runtime_t* rt, tsr_device_t device, tsr_event_t* event);
tsr_status_t event_query(tsr_runtime_t* rt, tsr_device_t device, tsr_event_t* event, int32_t* done);
tsr_status_t event_elapsed_ms(tsr_runtime_t* rt, tsr_device_t device, tsr_event_t* start, tsr_event_t* end, float* ms);
tsr_status_t tensor_record_stream(tsr_tensor_t* tensor, tsr_stream_t* stream);
tsr_status_t memory_set_fraction(tsr_runtime_t* rt, tsr_device_t device, double fraction);
tsr_status_t memory_pool_create(tsr_runtime_t* rt, tsr_device_t device, uint64_t* pool);
tsr_status_t memory_pool_begin(tsr_runtime_t* rt, tsr_device_t device, uint64_t pool, tsr_stream_t* stream);
tsr_status_t memory_pool_end(tsr_runtime_t* rt, tsr_device_t device, uint64_t pool, tsr_stream_t* stream);
tsr_status_t memory_pool_release(tsr_runtime_t* rt, tsr_device_t device, uint64_t pool);
tsr_status_t precision_set(tsr_runtime_t* rt, tsr_precision_setting_t setting, int32_t enabled);
int32_t precision_get(tsr_runtime_t* rt, tsr_precision_setting_t setting);
tsr_status_t tensor_from_blob(tsr_runtime_t* rt, void* data, int32_t ndim, const int64_t* sizes, const int64_t* strides,
                              tsr_dtype_t dtype, tsr_device_t device, void (*deleter)(void* ctx, void* data), void* ctx,
                              tsr_tensor_t** out);
}  // namespace stream_api

}  // namespace tsr::core
