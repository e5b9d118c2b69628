/* Tessera C ABI extension "tessera.pinned_host": page-locked (pinned) host memory.
 *
 * A device backend whose host<->device copies are faster (or asynchronous) from page-locked
 * memory publishes this table from its plugin init:
 *
 *   static const tsr_pinned_host_t kPinned = {sizeof(tsr_pinned_host_t), 0, my_alloc, my_free,
 *                                             my_tensor_empty};
 *   api->register_extension(reg, TSR_PINNED_HOST_EXTENSION, &kPinned);
 *
 * and hosts find it with api->get_extension(runtime, TSR_PINNED_HOST_EXTENSION) (NULL: no
 * backend offers pinned memory; the CPU backend does not, since host memory is its device
 * memory). The SDK's DataLoader (pin_memory = true) stages each batch in tensors made by
 * tensor_empty, so that the training loop's copy to the device reads page-locked memory.
 *
 * Ownership: memory from alloc is released with free of the same table; a tensor from
 * tensor_empty owns its pinned storage and returns it when its last reference is released
 * (the backend's deleter, not the caller, calls free). The table itself is static storage of
 * the plugin and lives as long as the runtime.
 * Errors: alloc and tensor_empty return a status (RESOURCE_EXHAUSTED when page-locked memory
 * runs out; callers may fall back to ordinary memory) and leave *out untouched.
 * Thread-safety: every function may be called from any thread concurrently.
 * Versioning: fields are only appended; check struct_size (or TSR_PINNED_HOST_HAS) before
 * using a field added later than the ones below. Since 1.0 (the table appeared while the ABI
 * was 1.0; it grows by its own struct_size, see abi/CHANGES.md).
 * Conventions (ownership, out parameters, errors, threads): tessera/tessera.h.
 */
#ifndef TESSERA_EXT_PINNED_HOST_H
#define TESSERA_EXT_PINNED_HOST_H

#include <stddef.h>

#include "tessera/api.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TSR_PINNED_HOST_EXTENSION "tessera.pinned_host"

typedef struct tsr_pinned_host_t {
  size_t struct_size; /* sizeof(tsr_pinned_host_t) as the plugin was built */
  uint32_t flags;     /* reserved, 0 */
  /* nbytes of page-locked host memory, aligned to at least 64 bytes, in *out. nbytes == 0
   * gives a unique non-NULL pointer that free accepts. */
  tsr_status_t (*alloc)(tsr_runtime_t* runtime, size_t nbytes, void** out);
  /* Releases memory from alloc; NULL is a no-op. */
  void (*free)(tsr_runtime_t* runtime, void* ptr);
  /* A new contiguous tensor on the CPU device (cpu:0) whose storage is page-locked: ordinary
   * CPU ops read and write it; copies from it to the backend's device may run asynchronously.
   * One reference in *out. */
  tsr_status_t (*tensor_empty)(tsr_runtime_t* runtime, int32_t ndim, const int64_t* sizes, tsr_dtype_t dtype,
                               tsr_tensor_t** out);
} tsr_pinned_host_t;

#define TSR_PINNED_HOST_HAS(table, field) \
  ((table)->struct_size >= offsetof(tsr_pinned_host_t, field) + sizeof((table)->field))

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_EXT_PINNED_HOST_H */
