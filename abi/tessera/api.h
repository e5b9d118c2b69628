/* Tessera C ABI: the core's function table.
 *
 * The core exports one entry point, tsr_get_api(TSR_ABI_VERSION), which returns a pointer to a
 * static, immutable table (never freed), or NULL when the requested major differs. A host that
 * dlopen()s libtessera needs this one dlsym; plugins receive the same table in init.
 * The table only grows at its end: check TSR_HAS_FIELD(api, tsr_api_t, fn) before calling a
 * function added after the minor you were built against.
 *
 * Ownership: functions returning tsr_tensor_t** give the caller one reference (release it with
 * tensor_release). Borrowed pointers returned by getters live as long as the object.
 * Thread-safety: all functions are thread-safe unless noted; a single tensor may be read by
 * many threads, and written by one at a time (as in PyTorch).
 */
#ifndef TESSERA_API_H
#define TESSERA_API_H

#include "tessera/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tsr_log_level_t {
  TSR_LOG_ERROR = 0,
  TSR_LOG_WARN = 1,
  TSR_LOG_INFO = 2,
  TSR_LOG_DEBUG = 3
} tsr_log_level_t;

/* Options of runtime_create. Zero/NULL fields take the documented defaults. */
typedef struct tsr_runtime_options_t {
  size_t struct_size;
  /* Colon-separated plugin directories searched first (default: $TESSERA_PLUGIN_PATH). */
  const char* plugin_path;
  /* Nonzero: do not search the plugins/ directory installed beside the core. */
  int32_t no_default_plugins;
  int32_t reserved;
  /* Allocator configuration (default: $TESSERA_ALLOC_CONF). */
  const char* alloc_conf;
} tsr_runtime_options_t;

/* One loaded or refused plugin, as the loader recorded it. Strings live as long as the runtime. */
typedef struct tsr_plugin_record_t {
  size_t struct_size;
  const char* name;
  const char* version;
  const char* path;
  int32_t loaded; /* 1 loaded, 0 refused */
  int32_t score;
  const char* reason; /* why it was refused or shadowed ("" when loaded) */
} tsr_plugin_record_t;

/* One registered kernel, for introspection. */
typedef struct tsr_kernel_info_t {
  size_t struct_size;
  const char* kernel_name;
  const char* plugin_name;
  int32_t device_type;
  int32_t priority;
  uint32_t dtype_mask;
  int32_t has_predicate;
} tsr_kernel_info_t;

/* Allocator statistics of one device (bytes unless noted). */
typedef struct tsr_memory_stats_t {
  size_t struct_size;
  int64_t allocated_bytes; /* in live tensors' blocks */
  int64_t peak_allocated_bytes;
  int64_t reserved_bytes; /* obtained from the raw allocator (cached + live) */
  int64_t peak_reserved_bytes;
  int64_t num_allocs; /* allocation requests served */
  int64_t num_frees;
  int64_t num_raw_allocs; /* calls into the raw allocator */
  int64_t num_raw_frees;
  int64_t num_cache_hits; /* requests served from cached blocks */
  int64_t num_splits;
  int64_t num_ooms;
  int64_t num_segments; /* segments currently held */
  int64_t limit_bytes;  /* configured cap; 0 = none */
} tsr_memory_stats_t;

/* Numerical precision switches (precision_set / precision_get). Values are fixed forever. */
typedef enum tsr_precision_setting_t {
  TSR_PRECISION_MATMUL_ALLOW_TF32 = 1,            /* f32 GEMMs may use TF32 tensor cores */
  TSR_PRECISION_CONV_ALLOW_TF32 = 2,              /* f32 convolutions may use TF32 */
  TSR_PRECISION_MATMUL_F16_REDUCED_REDUCTION = 3, /* f16 GEMMs may accumulate in f16 */
  TSR_PRECISION_MATMUL_BF16_REDUCED_REDUCTION = 4 /* bf16 GEMMs may reduce in bf16 */
} tsr_precision_setting_t;

/* An open safetensors file (safetensors_open); immutable, owned by whoever opened it. */
typedef struct tsr_safetensors_s tsr_safetensors_t;

typedef struct tsr_api_t {
  size_t struct_size;
  uint32_t abi_version;
  uint32_t reserved;
  const char* (*version_string)(void);

  /* --- status --- */
  tsr_status_t (*status_create)(tsr_code_t code, const char* message);
  tsr_code_t (*status_code)(tsr_status_t status);
  const char* (*status_message)(tsr_status_t status); /* borrowed; "" for NULL */
  void (*status_free)(tsr_status_t status);           /* NULL is a no-op */

  /* --- runtime --- */
  /* A new runtime: loads plugins per options. Destroy after releasing all its tensors. */
  tsr_status_t (*runtime_create)(const tsr_runtime_options_t* options, tsr_runtime_t** out);
  void (*runtime_destroy)(tsr_runtime_t* runtime);
  /* The process-wide runtime created on first use from the environment (never destroyed). */
  tsr_status_t (*runtime_default)(tsr_runtime_t** out);
  void (*manual_seed)(tsr_runtime_t* runtime, uint64_t seed);
  /* Plugins seen by the loader, loaded and refused, in the order the loader decided on them
   * (refusals found while scanning directories come before any load). */
  size_t (*plugin_count)(tsr_runtime_t* runtime);
  tsr_status_t (*plugin_record)(tsr_runtime_t* runtime, size_t index, tsr_plugin_record_t* out);
  /* Named extension tables a plugin published (e.g. "cuda.graphs"); NULL if none. */
  const void* (*get_extension)(tsr_runtime_t* runtime, const char* name);
  void (*log)(tsr_log_level_t level, const char* message);

  /* --- devices --- */
  tsr_status_t (*device_type_lookup)(tsr_runtime_t* runtime, const char* name, int32_t* out);
  const char* (*device_type_name)(tsr_runtime_t* runtime, int32_t type); /* NULL if unknown */
  int32_t (*device_type_count)(tsr_runtime_t* runtime);                  /* ids are 0..count-1 */
  int32_t (*device_count)(tsr_runtime_t* runtime, int32_t type);
  tsr_status_t (*device_synchronize)(tsr_runtime_t* runtime, tsr_device_t device);
  /* Parses "cpu", "cpu:1", "cuda:0". */
  tsr_status_t (*device_parse)(tsr_runtime_t* runtime, const char* text, tsr_device_t* out);

  /* --- tensors: creation --- */
  tsr_status_t (*tensor_empty)(tsr_runtime_t* runtime, int32_t ndim, const int64_t* sizes, tsr_dtype_t dtype,
                               tsr_device_t device, tsr_tensor_t** out);
  /* Copies nbytes = numel*itemsize from host memory `data` (row-major) into a new tensor. */
  tsr_status_t (*tensor_from_host)(tsr_runtime_t* runtime, const void* data, int32_t ndim, const int64_t* sizes,
                                   tsr_dtype_t dtype, tsr_device_t device, tsr_tensor_t** out);
  /* A 0-dim tensor holding `value` (INT, DOUBLE or BOOL). `wrapped`=1 marks it as a wrapped
   * number (a C++/Python scalar) for type promotion. dtype UNDEFINED infers i64/f32/bool. */
  tsr_status_t (*tensor_scalar)(tsr_runtime_t* runtime, const tsr_value_t* value, tsr_dtype_t dtype,
                                tsr_device_t device, int32_t wrapped, tsr_tensor_t** out);
  void (*tensor_retain)(tsr_tensor_t* tensor);
  void (*tensor_release)(tsr_tensor_t* tensor); /* NULL is a no-op */

  /* --- tensors: inspection (borrowed results, valid while the tensor lives) --- */
  tsr_runtime_t* (*tensor_runtime)(const tsr_tensor_t* tensor);
  tsr_dtype_t (*tensor_dtype)(const tsr_tensor_t* tensor);
  tsr_device_t (*tensor_device)(const tsr_tensor_t* tensor);
  int32_t (*tensor_ndim)(const tsr_tensor_t* tensor);
  const int64_t* (*tensor_sizes)(const tsr_tensor_t* tensor);
  const int64_t* (*tensor_strides)(const tsr_tensor_t* tensor); /* in elements */
  int64_t (*tensor_offset)(const tsr_tensor_t* tensor);         /* in elements */
  int64_t (*tensor_numel)(const tsr_tensor_t* tensor);
  void* (*tensor_data)(const tsr_tensor_t* tensor); /* first element (device memory) */
  int32_t (*tensor_is_contiguous)(const tsr_tensor_t* tensor);
  int32_t (*tensor_shares_storage)(const tsr_tensor_t* a, const tsr_tensor_t* b);
  /* Copies the tensor's elements in row-major order into host memory dst (nbytes must equal
   * numel*itemsize). Synchronizes the device. */
  tsr_status_t (*tensor_copy_to_host)(const tsr_tensor_t* tensor, void* dst, size_t nbytes);

  /* --- tensors: views (share storage; new reference in *out) --- */
  tsr_status_t (*tensor_as_strided)(tsr_tensor_t* t, int32_t ndim, const int64_t* sizes, const int64_t* strides,
                                    int64_t offset, tsr_tensor_t** out);
  /* view: never copies; fails when the strides cannot express the shape. -1 infers a size. */
  tsr_status_t (*tensor_view)(tsr_tensor_t* t, int32_t ndim, const int64_t* sizes, tsr_tensor_t** out);
  /* reshape: a view when possible, otherwise a contiguous copy. */
  tsr_status_t (*tensor_reshape)(tsr_tensor_t* t, int32_t ndim, const int64_t* sizes, tsr_tensor_t** out);
  tsr_status_t (*tensor_transpose)(tsr_tensor_t* t, int64_t dim0, int64_t dim1, tsr_tensor_t** out);
  tsr_status_t (*tensor_permute)(tsr_tensor_t* t, int32_t ndim, const int64_t* dims, tsr_tensor_t** out);
  tsr_status_t (*tensor_expand)(tsr_tensor_t* t, int32_t ndim, const int64_t* sizes, tsr_tensor_t** out);
  /* Python-style slice along dim: start/end clamped, negative wrap, step >= 1. */
  tsr_status_t (*tensor_slice)(tsr_tensor_t* t, int64_t dim, int64_t start, int64_t end, int64_t step,
                               tsr_tensor_t** out);
  tsr_status_t (*tensor_select)(tsr_tensor_t* t, int64_t dim, int64_t index, tsr_tensor_t** out);
  tsr_status_t (*tensor_narrow)(tsr_tensor_t* t, int64_t dim, int64_t start, int64_t length, tsr_tensor_t** out);
  /* dim = TSR_ALL_DIMS squeezes every size-1 dim. */
  tsr_status_t (*tensor_squeeze)(tsr_tensor_t* t, int64_t dim, tsr_tensor_t** out);
  tsr_status_t (*tensor_unsqueeze)(tsr_tensor_t* t, int64_t dim, tsr_tensor_t** out);
  /* Same tensor (new reference) when already contiguous, else a contiguous copy. */
  tsr_status_t (*tensor_contiguous)(tsr_tensor_t* t, tsr_tensor_t** out);
  /* Copy to dtype/device (a new tensor, or a new reference when nothing changes and
   * copy == 0). dtype UNDEFINED keeps the dtype. */
  tsr_status_t (*tensor_to)(tsr_tensor_t* t, tsr_dtype_t dtype, tsr_device_t device, int32_t copy, tsr_tensor_t** out);
  /* dst[...] = src with broadcasting, dtype conversion and cross-device copy. */
  tsr_status_t (*tensor_copy_)(tsr_tensor_t* dst, tsr_tensor_t* src);

  /* --- ops --- */
  tsr_status_t (*op_find)(tsr_runtime_t* runtime, const char* name, tsr_op_t** out);
  /* Call an op. args: in schema order (missing trailing args take defaults). outs[i]: NULL on
   * entry to allocate a new output (the caller then owns the reference), or an existing tensor
   * to write into (out=; it must already have the right shape, dtype and device, and keeps the
   * caller's reference). On error, outs that were NULL stay NULL and out= tensors are not
   * written. Lock-free: no global lock and no string lookup on this path. */
  tsr_status_t (*op_call)(tsr_op_t* op, const tsr_value_t* args, size_t nargs, tsr_tensor_t** outs, size_t nouts);
  const char* (*op_name)(const tsr_op_t* op);
  const char* (*op_schema)(const tsr_op_t* op);
  size_t (*op_num_outputs)(const tsr_op_t* op);
  size_t (*op_count)(tsr_runtime_t* runtime);
  tsr_op_t* (*op_at)(tsr_runtime_t* runtime, size_t index);
  size_t (*op_kernel_count)(const tsr_op_t* op);
  tsr_status_t (*op_kernel_info)(const tsr_op_t* op, size_t index, tsr_kernel_info_t* out);

  /* --- memory --- */
  tsr_status_t (*memory_stats)(tsr_runtime_t* runtime, tsr_device_t device, tsr_memory_stats_t* out);
  /* JSON snapshot of segments and blocks; free *out with string_free. */
  tsr_status_t (*memory_snapshot)(tsr_runtime_t* runtime, tsr_device_t device, char** out);
  tsr_status_t (*empty_cache)(tsr_runtime_t* runtime, tsr_device_t device);
  void (*string_free)(char* s);

  /* --- registration (only with the registrar handed to a plugin's init) --- */
  tsr_status_t (*register_device_type)(tsr_registrar_t* reg, const tsr_device_type_def_t* def, int32_t* type_out);
  tsr_status_t (*register_allocator)(tsr_registrar_t* reg, const tsr_raw_allocator_t* def);
  tsr_status_t (*register_op)(tsr_registrar_t* reg, const tsr_op_def_t* def);
  tsr_status_t (*register_kernel)(tsr_registrar_t* reg, const tsr_kernel_def_t* def);
  /* Publish a named extension table (static storage owned by the plugin). */
  tsr_status_t (*register_extension)(tsr_registrar_t* reg, const char* name, const void* table);

  /* --- added after the first draft of 1.0 (still 1.0) --- */
  /* A number unique to this runtime within the process (never reused, unlike its address):
   * caches keyed by runtime use it to notice a destroyed-and-recreated runtime. */
  uint64_t (*runtime_serial)(const tsr_runtime_t* runtime);
  /* Human-readable description of a device from its backend (e.g. "cpu:0 (2 threads)") into
   * buf (always NUL-terminated); the plain "type:index" when the backend gives none. */
  tsr_status_t (*device_describe)(tsr_runtime_t* runtime, tsr_device_t device, char* buf, size_t buf_len);
  /* Name of the allocator serving a device, e.g. "caching(cpu)" or "passthrough(tracking)";
   * borrowed, lives as long as the runtime. NULL when the device has none. */
  const char* (*device_allocator_name)(tsr_runtime_t* runtime, tsr_device_t device);
  /* The plugin directories this runtime searched, in order (borrowed; NULL past the end). */
  const char* (*plugin_search_dir)(tsr_runtime_t* runtime, size_t index);

  /* --- autograd (1.0) ---------------------------------------------------------------------
   * Reverse-mode automatic differentiation recorded by the core: an op called while grad mode
   * is on (per thread, default on) with any floating input that requires grad records a graph
   * node; its floating outputs then require grad. Gradients flow to leaves (tensors whose
   * requires_grad was set by the user) and accumulate in their .grad. Backward formulas are
   * written with ops, so they run on the tensors' own device.
   * Thread-safety: a graph may be built from several threads; one backward pass must not run
   * concurrently with another over the same graph. Grad and inference modes are per thread. */
  int32_t (*tensor_requires_grad)(const tsr_tensor_t* tensor);
  /* Leaves only (a non-leaf's flag follows from its inputs); floating dtypes only. */
  tsr_status_t (*tensor_set_requires_grad)(tsr_tensor_t* tensor, int32_t requires_grad);
  int32_t (*tensor_is_leaf)(const tsr_tensor_t* tensor);
  /* The accumulated gradient (a new reference) or *out = NULL when there is none. */
  tsr_status_t (*tensor_grad)(const tsr_tensor_t* tensor, tsr_tensor_t** out);
  /* Replaces the gradient (retained); NULL clears it (zero_grad with set_to_none). */
  tsr_status_t (*tensor_set_grad)(tsr_tensor_t* tensor, tsr_tensor_t* grad);
  /* Name of the node that produced the tensor ("MulBackward"), NULL for leaves and tensors
   * outside any graph. Borrowed, valid while the tensor lives. */
  const char* (*tensor_grad_fn_name)(const tsr_tensor_t* tensor);
  /* A new tensor sharing storage, outside the graph (requires_grad false). */
  tsr_status_t (*tensor_detach)(tsr_tensor_t* tensor, tsr_tensor_t** out);
  /* Keep .grad for a non-leaf tensor during backward (no-op for leaves). */
  tsr_status_t (*tensor_retain_grad)(tsr_tensor_t* tensor);
  /* Calls fn on the gradient of `tensor` each time one is computed, before it is accumulated
   * or passed on; fn may set *replacement to a new reference that replaces the gradient.
   * free_user (may be NULL) is called with user when the hook is dropped. */
  tsr_status_t (*tensor_register_hook)(tsr_tensor_t* tensor,
                                       tsr_status_t (*fn)(void* user, tsr_tensor_t* grad, tsr_tensor_t** replacement),
                                       void* user, void (*free_user)(void* user));
  /* Counter bumped by every in-place write to the tensor's storage (shared by its views). */
  uint32_t (*tensor_version)(const tsr_tensor_t* tensor);
  /* Backpropagates from n tensors; grads[i] may be NULL for a one-element tensor (implicit
   * ones) or grads itself NULL. retain_graph keeps saved tensors for another pass;
   * create_graph records the backward itself (higher-order gradients). */
  tsr_status_t (*autograd_backward)(size_t n, tsr_tensor_t* const* tensors, tsr_tensor_t* const* grads,
                                    int32_t retain_graph, int32_t create_graph);
  /* Gradients of outputs with respect to inputs, returned in grads_out[ninputs] (new
   * references) instead of accumulated in .grad. An input the outputs do not depend on is an
   * error unless allow_unused (then its slot is NULL). */
  tsr_status_t (*autograd_grad)(size_t noutputs, tsr_tensor_t* const* outputs, tsr_tensor_t* const* grad_outputs,
                                size_t ninputs, tsr_tensor_t* const* inputs, int32_t retain_graph, int32_t create_graph,
                                int32_t allow_unused, tsr_tensor_t** grads_out);
  int32_t (*grad_mode_enabled)(void);
  void (*set_grad_mode)(int32_t enabled); /* this thread */
  /* Inference mode: no recording whatever grad mode says (lower per-op overhead). This
   * thread. */
  int32_t (*inference_mode_enabled)(void);
  void (*set_inference_mode)(int32_t enabled);

  /* --- 1.1: random-number state ------------------------------------------------------------
   * Random ops draw from a counter-based Philox stream: (seed, offset) is the whole state of a
   * runtime's generator (manual_seed sets seed and resets offset to 0; every random op
   * advances offset by the counter blocks it used). Saving and restoring the pair replays the
   * same numbers, which is what a resumed training run needs. The pair is read and written as
   * two atomics: a random op running concurrently in another thread may see a mix, as with
   * manual_seed. Errors: INVALID_ARGUMENT for a NULL runtime or out pointer. */
  tsr_status_t (*rng_get_state)(tsr_runtime_t* runtime, uint64_t* seed, uint64_t* offset);
  tsr_status_t (*rng_set_state)(tsr_runtime_t* runtime, uint64_t seed, uint64_t offset);

  /* --- 1.1: safetensors files -----------------------------------------------------------------
   * The format (https://github.com/huggingface/safetensors): an 8-byte little-endian header
   * length N, N bytes of a JSON object {name: {"dtype": "F32", "shape": [2, 3],
   * "data_offsets": [begin, end]}, ..., "__metadata__": {string: string}}, then the data
   * section: row-major little-endian tensor bytes, offsets relative to its start.
   * Dtype names: BOOL U8 I8 I16 I32 I64 F16 BF16 F32 F64.
   *
   * safetensors_save writes n tensors (any device, any strides: copied to host) under names
   * (unique, not "__metadata__"), in the given order, with nmeta metadata strings. It writes a
   * temporary file beside `path`, syncs it and renames it over `path`: a crash leaves either
   * the old file or the complete new one. Nothing is written when an argument is invalid.
   * Errors: INVALID_ARGUMENT (NULL, duplicate or reserved names, strings that are not UTF-8),
   * PERMISSION_DENIED / NOT_FOUND / UNAVAILABLE from the file system, with the path. */
  tsr_status_t (*safetensors_save)(tsr_runtime_t* runtime, const char* path, size_t n, const char* const* names,
                                   tsr_tensor_t* const* tensors, size_t nmeta, const char* const* meta_keys,
                                   const char* const* meta_values);
  /* Opens a file for reading: maps it and validates the whole header before returning (header
   * length within the file, a JSON object, known dtypes, non-negative shapes whose byte size
   * does not overflow, data_offsets inside the data section and matching the shape, entries
   * neither overlapping nor leaving holes, unique names without NUL characters, metadata of
   * strings only). A malformed file is DATA_LOSS (UNIMPLEMENTED for a dtype safetensors
   * defines but Tessera lacks, such as F8_E4M3) with a message naming the path and the entry;
   * it never crashes the process. Tensor bytes are only read by safetensors_load.
   * The handle is immutable: any thread may use it concurrently; close it once, after the
   * last use, and before destroying the runtime. The file must not be truncated while open
   * (the mapping would fault; save replaces files by rename, which is safe). */
  tsr_status_t (*safetensors_open)(tsr_runtime_t* runtime, const char* path, tsr_safetensors_t** out);
  void (*safetensors_close)(tsr_safetensors_t* file); /* NULL is a no-op */
  /* Entries in the order of the file's header (excluding __metadata__). */
  size_t (*safetensors_count)(const tsr_safetensors_t* file);
  /* Name, dtype and shape of entry `index` without reading its data; any out may be NULL.
   * name and sizes are borrowed, valid until close. OUT_OF_RANGE past the end. */
  tsr_status_t (*safetensors_entry)(const tsr_safetensors_t* file, size_t index, const char** name, tsr_dtype_t* dtype,
                                    int32_t* ndim, const int64_t** sizes);
  /* Index of the entry called name; NOT_FOUND naming it when there is none. */
  tsr_status_t (*safetensors_find)(const tsr_safetensors_t* file, const char* name, size_t* index);
  /* Copies entry `index` out of the mapping into a new contiguous tensor on `device` (the
   * caller owns the reference; it outlives the handle). DATA_LOSS for a BOOL entry holding a
   * byte other than 0 or 1. */
  tsr_status_t (*safetensors_load)(const tsr_safetensors_t* file, size_t index, tsr_device_t device,
                                   tsr_tensor_t** out);
  /* The __metadata__ strings, in file order; key and value are borrowed, valid until close. */
  size_t (*safetensors_metadata_count)(const tsr_safetensors_t* file);
  tsr_status_t (*safetensors_metadata_at)(const tsr_safetensors_t* file, size_t index, const char** key,
                                          const char** value);
  /* The value of a metadata key (borrowed), or NULL when absent. */
  const char* (*safetensors_metadata_get)(const tsr_safetensors_t* file, const char* key);

  /* --- 1.2: devices, streams and events ----------------------------------------------------
   * Streams and events are the backend's handles (see tsr_device_type_def_t), so every call
   * names the device they belong to; a NULL stream is the device's default stream. On a device
   * type without streams (cpu) work is synchronous: stream_create returns a dummy handle, events
   * are always complete and elapsed time is UNIMPLEMENTED.
   * The "current stream" is per thread and per device: ops on that device run on it (kernel
   * calls receive it) and new tensors are allocated for it. Errors: INVALID_ARGUMENT for an
   * unknown device; any status the backend reports (including errors from earlier
   * asynchronous work, naming the op). Thread-safe. */
  /* Device facts from the backend (zeros where it has none); struct_size is set by the core. */
  tsr_status_t (*device_properties)(tsr_runtime_t* runtime, tsr_device_t device, tsr_device_properties_t* out);
  /* The calling thread's current device index of a type (default 0), and setting it (checked
   * against the device count). The SDK uses it for defaults such as "cuda" = "cuda:<current>". */
  tsr_status_t (*device_get_current)(tsr_runtime_t* runtime, int32_t type, int32_t* index);
  tsr_status_t (*device_set_current)(tsr_runtime_t* runtime, tsr_device_t device);
  /* A new stream owned by the caller (destroy it after the work on it no longer matters and
   * before the runtime). priority: 0 normal, negative higher. */
  tsr_status_t (*stream_create)(tsr_runtime_t* runtime, tsr_device_t device, int32_t priority, tsr_stream_t** out);
  tsr_status_t (*stream_destroy)(tsr_runtime_t* runtime, tsr_device_t device, tsr_stream_t* stream);
  tsr_status_t (*stream_get_current)(tsr_runtime_t* runtime, tsr_device_t device, tsr_stream_t** out);
  /* Makes `stream` the calling thread's current stream of `device` (NULL: the default). */
  tsr_status_t (*stream_set_current)(tsr_runtime_t* runtime, tsr_device_t device, tsr_stream_t* stream);
  tsr_status_t (*stream_synchronize)(tsr_runtime_t* runtime, tsr_device_t device, tsr_stream_t* stream);
  tsr_status_t (*stream_query)(tsr_runtime_t* runtime, tsr_device_t device, tsr_stream_t* stream, int32_t* done);
  tsr_status_t (*stream_wait_event)(tsr_runtime_t* runtime, tsr_device_t device, tsr_stream_t* stream,
                                    tsr_event_t* event);
  tsr_status_t (*event_create)(tsr_runtime_t* runtime, tsr_device_t device, uint32_t flags, tsr_event_t** out);
  tsr_status_t (*event_destroy)(tsr_runtime_t* runtime, tsr_device_t device, tsr_event_t* event);
  tsr_status_t (*event_record)(tsr_runtime_t* runtime, tsr_device_t device, tsr_event_t* event, tsr_stream_t* stream);
  tsr_status_t (*event_synchronize)(tsr_runtime_t* runtime, tsr_device_t device, tsr_event_t* event);
  tsr_status_t (*event_query)(tsr_runtime_t* runtime, tsr_device_t device, tsr_event_t* event, int32_t* done);
  /* Milliseconds between two recorded TSR_EVENT_TIMING events (end after start). */
  tsr_status_t (*event_elapsed_ms)(tsr_runtime_t* runtime, tsr_device_t device, tsr_event_t* start, tsr_event_t* end,
                                   float* ms);
  /* Marks the tensor's memory as used by work on `stream` (a stream other than the one it was
   * allocated for): when the tensor is freed, the caching allocator reuses the block only after
   * the work enqueued on `stream` up to that moment has finished (as PyTorch's record_stream). */
  tsr_status_t (*tensor_record_stream)(tsr_tensor_t* tensor, tsr_stream_t* stream);

  /* --- 1.2: allocator controls -------------------------------------------------------------
   * Caps the bytes the caching allocator of `device` may reserve at fraction (0, 1] of the
   * device's total memory (device_properties); beyond it allocation fails with
   * RESOURCE_EXHAUSTED. Also settable as TESSERA_ALLOC_CONF "per_process_memory_fraction:F". */
  tsr_status_t (*memory_set_fraction)(tsr_runtime_t* runtime, tsr_device_t device, double fraction);
  /* Private memory pools (for graph capture): memory_pool_create returns a new pool id (> 0).
   * Between memory_pool_begin and memory_pool_end, allocations the caching allocator makes for
   * `stream` of `device` (from any thread) come from the pool's own segments, and blocks freed
   * into the pool are only reused by the pool. Claims are counted: memory_pool_create holds
   * one, each memory_pool_begin takes another (kept after memory_pool_end, so that a graph
   * owning the memory keeps it), and memory_pool_release drops one; the pool's segments return
   * to the device's cache once no claim is left and all its blocks are free. FAILED_PRECONDITION when the allocator of
   * the device is not the caching one. */
  tsr_status_t (*memory_pool_create)(tsr_runtime_t* runtime, tsr_device_t device, uint64_t* pool);
  tsr_status_t (*memory_pool_begin)(tsr_runtime_t* runtime, tsr_device_t device, uint64_t pool, tsr_stream_t* stream);
  tsr_status_t (*memory_pool_end)(tsr_runtime_t* runtime, tsr_device_t device, uint64_t pool, tsr_stream_t* stream);
  tsr_status_t (*memory_pool_release)(tsr_runtime_t* runtime, tsr_device_t device, uint64_t pool);

  /* --- 1.2: numerical precision settings ------------------------------------------------------
   * Runtime-wide switches that backends read on every call (one atomic load), as PyTorch's
   * torch.backends.cuda.matmul.allow_tf32 and friends. Defaults follow PyTorch: matmul TF32 off,
   * convolution TF32 on, reduced-precision reductions in f16 and bf16 GEMMs on. Also set from
   * the environment at runtime creation: TESSERA_ALLOW_TF32=0|1 sets both TF32 switches.
   * INVALID_ARGUMENT for an unknown setting. */
  tsr_status_t (*precision_set)(tsr_runtime_t* runtime, tsr_precision_setting_t setting, int32_t enabled);
  int32_t (*precision_get)(tsr_runtime_t* runtime, tsr_precision_setting_t setting);

  /* --- 1.2: tensors over foreign memory ------------------------------------------------------
   * A tensor viewing memory the caller owns (PyTorch's from_blob): `data` is the first element
   * on `device`, strides in elements (NULL: contiguous). When the last reference to the tensor
   * and its views is released, deleter(ctx, data) is called (deleter may be NULL: the memory
   * must then outlive every view). The memory is not counted in memory_stats. On error the
   * deleter is NOT called (the caller still owns the memory). */
  tsr_status_t (*tensor_from_blob)(tsr_runtime_t* runtime, void* data, int32_t ndim, const int64_t* sizes,
                                   const int64_t* strides, tsr_dtype_t dtype, tsr_device_t device,
                                   void (*deleter)(void* ctx, void* data), void* ctx, tsr_tensor_t** out);
} tsr_api_t;

#define TSR_ALL_DIMS INT64_MIN

/* The core's only entry point. NULL when the major of abi_version differs from the core's. */
TSR_EXTERN_C TSR_EXPORT const tsr_api_t* tsr_get_api(uint32_t abi_version);
typedef const tsr_api_t* (*tsr_get_api_fn_t)(uint32_t abi_version);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_API_H */
