/* Tessera C ABI: what a backend registers (device types, raw allocators, kernels, ops) and
 * what a kernel receives when it is called. */
#ifndef TESSERA_KERNEL_H
#define TESSERA_KERNEL_H

#include "tessera/types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct tsr_api_t;

/* ---- Kernels ---------------------------------------------------------------------------- */

/* What a kernel receives. The core has already validated arguments, promoted dtypes,
 * broadcast shapes and allocated outputs: kernels compute and nothing else.
 *  - args/nargs: the op's boxed arguments in schema order, defaults filled in. Tensor
 *    arguments appear here as handles; their views are in `inputs` (same order, tensors only).
 *  - outputs: views of the output tensors (already allocated, correct shape and dtype).
 *  - iter: for elementwise and reduction ops, the canonical iteration over outputs+inputs
 *    (then prefer it over the views); NULL for other ops.
 *  - dtype: the dtype the kernel was selected for.
 *  - stream: the calling thread's current stream of `device` (the backend's own handle, NULL
 *    for the default stream): a kernel of an asynchronous device enqueues its work there and
 *    returns; errors found later are reported by the next synchronizing call.
 * Everything is borrowed for the duration of the call. Kernels may run concurrently on
 * several threads and must be re-entrant. */
typedef struct tsr_kernel_call_t {
  size_t struct_size;
  const struct tsr_api_t* api;
  tsr_runtime_t* runtime;
  const char* op_name;
  tsr_device_t device;
  tsr_stream_t* stream;
  int32_t dtype;
  int32_t reserved;
  const tsr_value_t* args;
  size_t nargs;
  const tsr_tensor_view_t* inputs;
  size_t ninputs;
  const tsr_tensor_view_t* outputs;
  size_t noutputs;
  const tsr_iter_t* iter;
  void* user_data;
} tsr_kernel_call_t;

typedef tsr_status_t (*tsr_kernel_fn_t)(const tsr_kernel_call_t* call);

/* Optional predicate: return nonzero when the kernel can run on `device` (for example, only on
 * compute capability 10.x). Called on the dispatch path; must be cheap and thread-safe. */
typedef int (*tsr_device_predicate_fn_t)(tsr_device_t device, void* user_data);

/* A kernel registration. Strings are copied by the core. Among kernels for the same op and
 * device type whose dtype_mask contains the dispatch dtype (0 = every dtype) and whose
 * predicate accepts the device, the highest priority wins; ties go to the latest registered. */
typedef struct tsr_kernel_def_t {
  size_t struct_size;
  const char* op_name;     /* e.g. "add" */
  const char* kernel_name; /* for diagnostics, e.g. "cpu::add" */
  int32_t device_type;
  int32_t priority;
  uint32_t dtype_mask; /* OR of TSR_DTYPE_BIT(); 0 accepts every dtype */
  uint32_t reserved;
  tsr_device_predicate_fn_t predicate; /* optional */
  tsr_kernel_fn_t fn;
  void* user_data;
} tsr_kernel_def_t;

/* ---- Ops defined by plugins -------------------------------------------------------------- */

/* Output description filled by a meta function. */
typedef struct tsr_tensor_spec_t {
  int32_t dtype;
  int32_t ndim;
  tsr_device_t device;
  int64_t sizes[TSR_MAX_DIMS];
} tsr_tensor_spec_t;

/* A meta (shape/dtype inference) call: validate args, fill outputs[0..noutputs) and set
 * *dispatch_dtype. Return a status naming the op and the offending shapes on bad input. */
typedef struct tsr_meta_call_t {
  size_t struct_size;
  const struct tsr_api_t* api;
  tsr_runtime_t* runtime;
  const char* op_name;
  const tsr_value_t* args;
  size_t nargs;
  tsr_tensor_spec_t* outputs;
  size_t noutputs;
  int32_t* dispatch_dtype;
  void* user_data;
} tsr_meta_call_t;

typedef tsr_status_t (*tsr_meta_fn_t)(const tsr_meta_call_t* call);

/* A new operator. The schema uses PyTorch's notation, e.g.
 *   "example::gemm_bias_act(Tensor a, Tensor b, Tensor? bias=None, str act='none') -> Tensor"
 * Argument types: Tensor, Tensor?, int, int?, float, float?, bool, int[], int[]?, str,
 * ScalarType?, Device?, Scalar, Scalar?. The core fills defaults, checks kinds and devices,
 * runs `meta`, allocates outputs (or checks out= tensors) and dispatches to a kernel. */
typedef struct tsr_op_def_t {
  size_t struct_size;
  const char* schema;
  tsr_meta_fn_t meta;
  void* user_data;
} tsr_op_def_t;

/* ---- Raw allocators ---------------------------------------------------------------------- */

/* Flags of a raw allocator. */
#define TSR_ALLOCATOR_CACHES_ITSELF 1u /* the core must not put its caching allocator above */

/* A device memory allocator. The core's caching allocator sits above it unless
 * TSR_ALLOCATOR_CACHES_ITSELF is set. Must be thread-safe. */
typedef struct tsr_raw_allocator_t {
  size_t struct_size;
  const char* name; /* selected through TESSERA_ALLOC_CONF "allocator:NAME" */
  int32_t device_type;
  uint32_t flags;
  void* self;
  /* Allocate nbytes (> 0) aligned to at least 64 bytes. Out of memory: return a status with
   * code TSR_RESOURCE_EXHAUSTED, never abort. */
  tsr_status_t (*alloc)(void* self, tsr_device_t device, size_t nbytes, void** out);
  void (*free)(void* self, tsr_device_t device, void* ptr, size_t nbytes);
  /* --- 1.2 (optional; check TSR_HAS_FIELD): stream-ordered allocation ------------------------
   * For allocators that order memory on a stream themselves (cudaMallocAsync): the memory may
   * be used by work enqueued on `stream` after the call, and free_async returns it once the
   * work enqueued on `stream` before the call is done. The core calls these instead of
   * alloc/free when present, with the stream the tensor is allocated on. */
  tsr_status_t (*alloc_async)(void* self, tsr_device_t device, size_t nbytes, tsr_stream_t* stream, void** out);
  void (*free_async)(void* self, tsr_device_t device, void* ptr, size_t nbytes, tsr_stream_t* stream);
} tsr_raw_allocator_t;

/* ---- Device types ------------------------------------------------------------------------ */

/* A device type registered by a backend. Streams and events are optional: a device type
 * without them executes synchronously in the calling thread. */
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

  /* --- 1.2 (optional; check TSR_HAS_FIELD): properties, streams and events ------------------
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

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_KERNEL_H */
