/* Tessera C ABI: device memory. A backend registers raw allocators (tsr_raw_allocator_t); the
 * core's caching allocator sits above them (as PyTorch's), configured by TESSERA_ALLOC_CONF,
 * and reports statistics, snapshots, caps and private pools through the entries below.
 * Conventions (ownership, out parameters, errors, threads): tessera/tessera.h.
 */
#ifndef TESSERA_MEMORY_H
#define TESSERA_MEMORY_H

#include "tessera/device.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Allocator statistics of one device (bytes unless noted). Since 1.0.
 * CPU tensors of at most 16 bytes (scalars, losses, step counts) keep their data in the host
 * block of their tensor handle, unless guard_bytes is set: they are not in these statistics,
 * in the snapshot or under the limit. */
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

/* ---- What a backend registers (register_allocator, plugin.h) ---------------------------- */

/* Flags of a raw allocator. Since 1.0. */
#define TSR_ALLOCATOR_CACHES_ITSELF 1u /* the core must not put its caching allocator above */

/* A device memory allocator. The core's caching allocator sits above it unless
 * TSR_ALLOCATOR_CACHES_ITSELF is set. The core copies the struct (its first struct_size
 * bytes); `self` and the functions must stay valid until the plugin's shutdown. Must be
 * thread-safe. Since 1.0. */
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
  /* --- Since 1.2 (optional; check TSR_HAS_FIELD): stream-ordered allocation ---------------
   * For allocators that order memory on a stream themselves (cudaMallocAsync): the memory may
   * be used by work enqueued on `stream` after the call, and free_async returns it once the
   * work enqueued on `stream` before the call is done. The core calls these instead of
   * alloc/free when present, with the stream the tensor is allocated on. */
  tsr_status_t (*alloc_async)(void* self, tsr_device_t device, size_t nbytes, tsr_stream_t* stream, void** out);
  void (*free_async)(void* self, tsr_device_t device, void* ptr, size_t nbytes, tsr_stream_t* stream);
} tsr_raw_allocator_t;

/* ---- Entries of tsr_api_t (api.h) ------------------------------------------------------- */

/* Errors of the entries below that name a device: INVALID_ARGUMENT for an unknown device or
 * a NULL out pointer, FAILED_PRECONDITION when no allocator serves the device. */

/* Errors of the three entries below: INVALID_ARGUMENT for a NULL runtime or out pointer or a
 * device that does not exist.
 * memory_stats: the allocator statistics of `device` into *out. Set out->struct_size first
 * (tessera/tessera.h, growable structs). Since 1.0. */
typedef tsr_status_t (*tsr_memory_stats_fn_t)(tsr_runtime_t* runtime, tsr_device_t device, tsr_memory_stats_t* out);
/* memory_snapshot: a JSON snapshot of the device's segments and blocks in *out, a string the
 * caller frees with string_free. Since 1.0. */
typedef tsr_status_t (*tsr_memory_snapshot_fn_t)(tsr_runtime_t* runtime, tsr_device_t device, char** out);
/* empty_cache: returns the cached, unused blocks of the device to its raw allocator.
 * Since 1.0. */
typedef tsr_status_t (*tsr_empty_cache_fn_t)(tsr_runtime_t* runtime, tsr_device_t device);
/* string_free: frees a string the core allocated for the caller (memory_snapshot); NULL is a
 * no-op. Since 1.0. */
typedef void (*tsr_string_free_fn_t)(char* s);
/* device_allocator_name: the name of the allocator serving a device, e.g. "caching(cpu)" or
 * "passthrough(tracking)"; borrowed, lives as long as the runtime. NULL when the device has
 * none or does not exist. Since 1.0 (added after the first draft of 1.0). */
typedef const char* (*tsr_device_allocator_name_fn_t)(tsr_runtime_t* runtime, tsr_device_t device);
/* memory_set_fraction: caps the bytes the caching allocator of `device` may reserve at
 * fraction (0, 1] of the device's total memory (device_properties); beyond it allocation fails
 * with RESOURCE_EXHAUSTED. Also settable as TESSERA_ALLOC_CONF "per_process_memory_fraction:F".
 * INVALID_ARGUMENT for a fraction outside (0, 1]; FAILED_PRECONDITION when the device reports
 * no total memory. Since 1.2. */
typedef tsr_status_t (*tsr_memory_set_fraction_fn_t)(tsr_runtime_t* runtime, tsr_device_t device, double fraction);

/* Private memory pools (for graph capture, ext_graphs.h): memory_pool_create returns a new
 * pool id (> 0). Between memory_pool_begin and memory_pool_end, allocations the caching
 * allocator makes for `stream` of `device` (from any thread) come from the pool's own
 * segments, and blocks freed into the pool are only reused by the pool. Claims are counted:
 * memory_pool_create holds one, each memory_pool_begin takes another (kept after
 * memory_pool_end, so that a graph owning the memory keeps it), and memory_pool_release drops
 * one; the pool's segments return to the device's cache once no claim is left and all its
 * blocks are free. FAILED_PRECONDITION when the allocator of the device is not the caching
 * one. */
/* memory_pool_create: a new pool id in *pool, with one claim held by the caller. Since 1.2. */
typedef tsr_status_t (*tsr_memory_pool_create_fn_t)(tsr_runtime_t* runtime, tsr_device_t device, uint64_t* pool);
/* memory_pool_begin: routes allocations for `stream` into the pool (takes a claim).
 * FAILED_PRECONDITION when another pool is already active for that stream. Since 1.2. */
typedef tsr_status_t (*tsr_memory_pool_begin_fn_t)(tsr_runtime_t* runtime, tsr_device_t device, uint64_t pool,
                                                   tsr_stream_t* stream);
/* memory_pool_end: stops routing allocations for `stream` into the pool. FAILED_PRECONDITION
 * when the pool is not active for that stream. Since 1.2. */
typedef tsr_status_t (*tsr_memory_pool_end_fn_t)(tsr_runtime_t* runtime, tsr_device_t device, uint64_t pool,
                                                 tsr_stream_t* stream);
/* memory_pool_release: drops one claim on the pool. Since 1.2. */
typedef tsr_status_t (*tsr_memory_pool_release_fn_t)(tsr_runtime_t* runtime, tsr_device_t device, uint64_t pool);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_MEMORY_H */
