/* Tessera C ABI: devices. A device is a (type, index) pair; device types are registered by
 * backends (tsr_device_type_def_t, with their copies, synchronization, properties, streams and
 * events) and named at run time ("cpu", "cuda"). The stream and event entries are in stream.h.
 * Conventions (ownership, out parameters, errors, threads): tessera/tessera.h.
 */
#ifndef TESSERA_DEVICE_H
#define TESSERA_DEVICE_H

#include "tessera/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Device type ids are handed out at run time by name (device_type_lookup).
 * The name "cpu" always receives id 0, so a zero-initialised tsr_device_t is cpu:0.
 * TSR_DEVICE_TYPE_HOST names plain host memory that no device owns (copy sources/targets).
 * Since 1.0. */
#define TSR_DEVICE_TYPE_CPU 0
#define TSR_DEVICE_TYPE_HOST (-1)

/* Since 1.0. */
typedef struct tsr_device_t {
  int32_t type;  /* device type id */
  int32_t index; /* ordinal within the type */
} tsr_device_t;

/* A device's streams and events: the backend's own opaque handles (see
 * tsr_device_type_def_t); NULL means the device's default stream. Since 1.0. */
typedef struct tsr_stream_s tsr_stream_t;
typedef struct tsr_event_s tsr_event_t; /* marker recorded on a stream */

/* Properties of one device. Strings are copied in; absent facts are 0. Since 1.2. */
typedef struct tsr_device_properties_t {
  size_t struct_size;
  char name[256];        /* "NVIDIA H200", "cpu" */
  int32_t compute_major; /* compute capability (GPUs), else 0 */
  int32_t compute_minor;
  int64_t total_memory_bytes;   /* device memory (0 = unknown / host memory) */
  int32_t multiprocessor_count; /* SMs (GPUs), cores (CPUs) */
  int32_t max_threads_per_block;
  int32_t warp_size;
  int32_t async_engines; /* copy engines (0: copies are synchronous) */
  int64_t l2_cache_bytes;
  int32_t memory_bus_width_bits;
  int32_t integrated; /* 1: shares memory with the host */
  int32_t pci_bus_id;
  int32_t pci_device_id;
  int32_t pci_domain_id;
  int32_t reserved;
} tsr_device_properties_t;

/* ---- What a backend registers (register_device_type, plugin.h) -------------------------- */

/* A device type registered by a backend. Streams and events are optional: a device type
 * without them executes synchronously in the calling thread. The core copies the struct (its
 * first struct_size bytes) and the name; `self` and the functions must stay valid until the
 * plugin's shutdown. Since 1.0. */
typedef struct tsr_device_type_def_t {
  size_t struct_size;
  const char* name; /* "cpu", "cuda", ... (lower case, no ':') */
  int32_t device_count;
  int32_t reserved;
  void* self;
  /* Copy nbytes between memories. One side is a device of this type; the other is a device
   * of this type, a cpu device or TSR_DEVICE_TYPE_HOST. Asynchronous on `stream` if the
   * device is. Required. */
  tsr_status_t (*copy)(void* self, tsr_device_t dst_device, void* dst, tsr_device_t src_device, const void* src,
                       size_t nbytes, tsr_stream_t* stream);
  /* Wait for all work on the device. Optional (NULL: synchronous device). */
  tsr_status_t (*synchronize)(void* self, tsr_device_t device);
  /* Human-readable device name into buf. Optional. */
  void (*describe)(void* self, tsr_device_t device, char* buf, size_t buf_len);

  /* --- Since 1.2 (optional; check TSR_HAS_FIELD): properties, streams and events ----------
   * Streams and events are the BACKEND's own handles: the core never dereferences them, it
   * only hands back what stream_create/event_create returned (NULL stream = the device's
   * default stream, always valid). A backend offers either all of stream_create ..
   * event_elapsed_ms or none (then the device is synchronous and the core emulates streams
   * and events as no-ops that are always complete).
   * Every call returns a status: an error from earlier asynchronous work may surface in any of
   * them (the backend names the op that failed). All must be thread-safe. */
  tsr_status_t (*properties)(void* self, tsr_device_t device, tsr_device_properties_t* out);
  /* priority: 0 = normal, negative = higher (as CUDA). */
  tsr_status_t (*stream_create)(void* self, tsr_device_t device, int32_t priority, tsr_stream_t** out);
  tsr_status_t (*stream_destroy)(void* self, tsr_device_t device, tsr_stream_t* stream);
  tsr_status_t (*stream_synchronize)(void* self, tsr_device_t device, tsr_stream_t* stream);
  /* *done = 1 when all work enqueued on the stream has finished. */
  tsr_status_t (*stream_query)(void* self, tsr_device_t device, tsr_stream_t* stream, int32_t* done);
  /* Later work on `stream` waits for the event's recorded point (no host block). */
  tsr_status_t (*stream_wait_event)(void* self, tsr_device_t device, tsr_stream_t* stream, tsr_event_t* event);
  /* flags: TSR_EVENT_TIMING to allow event_elapsed_ms. */
  tsr_status_t (*event_create)(void* self, tsr_device_t device, uint32_t flags, tsr_event_t** out);
  tsr_status_t (*event_destroy)(void* self, tsr_device_t device, tsr_event_t* event);
  tsr_status_t (*event_record)(void* self, tsr_device_t device, tsr_event_t* event, tsr_stream_t* stream);
  tsr_status_t (*event_synchronize)(void* self, tsr_device_t device, tsr_event_t* event);
  /* *done = 1 when the recorded work has finished (also for a never-recorded event). */
  tsr_status_t (*event_query)(void* self, tsr_device_t device, tsr_event_t* event, int32_t* done);
  tsr_status_t (*event_elapsed_ms)(void* self, tsr_device_t device, tsr_event_t* start, tsr_event_t* end, float* ms);
} tsr_device_type_def_t;

/* ---- Entries of tsr_api_t (api.h) ------------------------------------------------------- */

/* device_type_lookup: the id of the device type called `name` into *out. NOT_FOUND when no
 * plugin registered it. Since 1.0. */
typedef tsr_status_t (*tsr_device_type_lookup_fn_t)(tsr_runtime_t* runtime, const char* name, int32_t* out);
/* device_type_name: the name of a type id (borrowed, lives as long as the runtime); NULL if
 * unknown or for a NULL runtime. Since 1.0. */
typedef const char* (*tsr_device_type_name_fn_t)(tsr_runtime_t* runtime, int32_t type);
/* device_type_count: the number of type ids; ids are 0..count-1 (0 for a NULL runtime).
 * Since 1.0. */
typedef int32_t (*tsr_device_type_count_fn_t)(tsr_runtime_t* runtime);
/* device_count: devices of a type (0 for an unknown type or a NULL runtime). Since 1.0. */
typedef int32_t (*tsr_device_count_fn_t)(tsr_runtime_t* runtime, int32_t type);
/* device_synchronize: waits for all work on the device (every stream); reports errors from
 * earlier asynchronous work. INVALID_ARGUMENT for an unknown device or a NULL runtime.
 * Since 1.0. */
typedef tsr_status_t (*tsr_device_synchronize_fn_t)(tsr_runtime_t* runtime, tsr_device_t device);
/* device_parse: parses "cpu", "cpu:1", "cuda:0" into *out (the index: decimal digits only, at
 * most INT32_MAX). INVALID_ARGUMENT for a NULL runtime, text or out, a malformed string or an
 * index beyond the device count, NOT_FOUND for an unknown type name. *out is written only on
 * success.
 * Since 1.0. */
typedef tsr_status_t (*tsr_device_parse_fn_t)(tsr_runtime_t* runtime, const char* text, tsr_device_t* out);
/* device_describe: a human-readable description of a device from its backend (e.g. "cpu:0
 * (2 threads)") into buf[buf_len] (always NUL-terminated, truncated to fit); the plain
 * "type:index" when the backend gives none. INVALID_ARGUMENT for an unknown device or an empty
 * buffer. Since 1.0 (added after the first draft of 1.0). */
typedef tsr_status_t (*tsr_device_describe_fn_t)(tsr_runtime_t* runtime, tsr_device_t device, char* buf,
                                                 size_t buf_len);
/* device_properties: device facts from the backend into *out (zeros where it has none). Set
 * out->struct_size first (tessera/tessera.h, growable structs). Since 1.2. */
typedef tsr_status_t (*tsr_device_properties_fn_t)(tsr_runtime_t* runtime, tsr_device_t device,
                                                   tsr_device_properties_t* out);
/* device_get_current: the calling thread's current device index of a type (default 0). The
 * SDK uses it for defaults such as "cuda" = "cuda:<current>". INVALID_ARGUMENT for an unknown
 * type. Per thread. Since 1.2. */
typedef tsr_status_t (*tsr_device_get_current_fn_t)(tsr_runtime_t* runtime, int32_t type, int32_t* index);
/* device_set_current: makes `device` the calling thread's current device of its type
 * (checked against the device count). Per thread. Since 1.2. */
typedef tsr_status_t (*tsr_device_set_current_fn_t)(tsr_runtime_t* runtime, tsr_device_t device);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_DEVICE_H */
