/* Tessera C ABI: streams and events (the handle types are declared in device.h, beside the
 * device type that implements them).
 *
 * Streams and events are the backend's handles (see tsr_device_type_def_t), so every call
 * names the device they belong to; a NULL stream is the device's default stream. On a device
 * type without streams (cpu) work is synchronous: stream_create returns a dummy handle, events
 * are always complete and elapsed time is UNIMPLEMENTED.
 * The "current stream" is per thread and per device: ops on that device run on it (kernel
 * calls receive it) and new tensors are allocated for it. Errors of every entry below:
 * INVALID_ARGUMENT for a NULL runtime or out pointer or an unknown device; any status the
 * backend reports (including errors from earlier asynchronous work, naming the op).
 * Thread-safe. Everything here appeared in 1.2.
 * Conventions (ownership, out parameters, errors, threads): tessera/tessera.h.
 */
#ifndef TESSERA_STREAM_H
#define TESSERA_STREAM_H

#include "tessera/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Event creation flags. Since 1.2. */
#define TSR_EVENT_DEFAULT 0u
#define TSR_EVENT_TIMING 1u /* the event records a timestamp (event_elapsed_ms) */

/* ---- Entries of tsr_api_t (api.h) ------------------------------------------------------- */

/* stream_create: a new stream in *out, owned by the caller (destroy it after the work on it
 * no longer matters and before the runtime). priority: 0 normal, negative higher. Since 1.2. */
typedef tsr_status_t (*tsr_stream_create_fn_t)(tsr_runtime_t* runtime, tsr_device_t device, int32_t priority,
                                               tsr_stream_t** out);
/* stream_destroy: destroys a stream from stream_create. Since 1.2. */
typedef tsr_status_t (*tsr_stream_destroy_fn_t)(tsr_runtime_t* runtime, tsr_device_t device, tsr_stream_t* stream);
/* stream_get_current: the calling thread's current stream of `device` into *out (NULL: the
 * default stream). Borrowed. Since 1.2. */
typedef tsr_status_t (*tsr_stream_get_current_fn_t)(tsr_runtime_t* runtime, tsr_device_t device, tsr_stream_t** out);
/* stream_set_current: makes `stream` the calling thread's current stream of `device` (NULL:
 * the default). Since 1.2. */
typedef tsr_status_t (*tsr_stream_set_current_fn_t)(tsr_runtime_t* runtime, tsr_device_t device, tsr_stream_t* stream);
/* stream_synchronize: blocks until all work enqueued on the stream has finished. Since 1.2. */
typedef tsr_status_t (*tsr_stream_synchronize_fn_t)(tsr_runtime_t* runtime, tsr_device_t device, tsr_stream_t* stream);
/* stream_query: *done = 1 when all work enqueued on the stream has finished, else 0 (never
 * blocks). Since 1.2. */
typedef tsr_status_t (*tsr_stream_query_fn_t)(tsr_runtime_t* runtime, tsr_device_t device, tsr_stream_t* stream,
                                              int32_t* done);
/* stream_wait_event: later work on `stream` waits for the event's recorded point (the host
 * does not block). Since 1.2. */
typedef tsr_status_t (*tsr_stream_wait_event_fn_t)(tsr_runtime_t* runtime, tsr_device_t device, tsr_stream_t* stream,
                                                   tsr_event_t* event);
/* event_create: a new event in *out, owned by the caller (event_destroy). flags:
 * TSR_EVENT_DEFAULT, or TSR_EVENT_TIMING to allow event_elapsed_ms. Since 1.2. */
typedef tsr_status_t (*tsr_event_create_fn_t)(tsr_runtime_t* runtime, tsr_device_t device, uint32_t flags,
                                              tsr_event_t** out);
/* event_destroy: destroys an event from event_create. Since 1.2. */
typedef tsr_status_t (*tsr_event_destroy_fn_t)(tsr_runtime_t* runtime, tsr_device_t device, tsr_event_t* event);
/* event_record: records the current end of `stream`'s work (NULL: the default stream) in the
 * event. Since 1.2. */
typedef tsr_status_t (*tsr_event_record_fn_t)(tsr_runtime_t* runtime, tsr_device_t device, tsr_event_t* event,
                                              tsr_stream_t* stream);
/* event_synchronize: blocks until the recorded work has finished. Since 1.2. */
typedef tsr_status_t (*tsr_event_synchronize_fn_t)(tsr_runtime_t* runtime, tsr_device_t device, tsr_event_t* event);
/* event_query: *done = 1 when the recorded work has finished (also for a never-recorded
 * event), else 0 (never blocks). Since 1.2. */
typedef tsr_status_t (*tsr_event_query_fn_t)(tsr_runtime_t* runtime, tsr_device_t device, tsr_event_t* event,
                                             int32_t* done);
/* event_elapsed_ms: milliseconds between two recorded TSR_EVENT_TIMING events (end after
 * start) into *ms. UNIMPLEMENTED on a device without events. Since 1.2. */
typedef tsr_status_t (*tsr_event_elapsed_ms_fn_t)(tsr_runtime_t* runtime, tsr_device_t device, tsr_event_t* start,
                                                  tsr_event_t* end, float* ms);
/* tensor_record_stream: marks the tensor's memory as used by work on `stream` (a stream other
 * than the one it was allocated for): when the tensor is freed, the caching allocator reuses
 * the block only after the work enqueued on `stream` up to that moment has finished (as
 * PyTorch's record_stream). Since 1.2. */
typedef tsr_status_t (*tsr_tensor_record_stream_fn_t)(tsr_tensor_t* tensor, tsr_stream_t* stream);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_STREAM_H */
