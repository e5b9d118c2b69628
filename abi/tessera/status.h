/* Tessera C ABI: status handles, the canonical codes and which code to use when.
 *
 * Every fallible call returns tsr_status_t. Success is NULL (test with `if (st)`).
 * A non-NULL status owns a canonical code and a message; it is created by the core
 * (status_create, also for plugins, so memory is freed by the side that made it)
 * and must be released exactly once with status_free by whoever receives it.
 * Status handles are not shared between threads while in use but may be passed to another.
 * Conventions shared by every header (ownership, out parameters, threads): tessera/tessera.h.
 */
#ifndef TESSERA_STATUS_H
#define TESSERA_STATUS_H

#include "tessera/version.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tsr_status_s* tsr_status_t;

/* Canonical codes (values fixed; same meaning as absl/gRPC canonical codes). Since 1.0.
 *
 * Which code to return. Pick the first that fits; write a message that names the op or entry
 * and the offending values ("reshape: shape [2, 3] is invalid for input of size 7"), as the
 * core does. Callers branch on codes (the core's composites fall back to other kernels on
 * UNIMPLEMENTED), so the code is part of a function's contract.
 *
 *   TSR_INVALID_ARGUMENT  The arguments are wrong whatever the state of the runtime: a NULL
 *                         required pointer, a shape, dtype or ndim an op rejects (what meta
 *                         functions return), a dim out of range for the tensor, an unknown or
 *                         out-of-range device, a tensor of another runtime, too many
 *                         arguments for the schema, requires_grad on an integer tensor,
 *                         copy_to_host with the wrong byte count.
 *   TSR_NOT_FOUND         A thing named by the caller does not exist: op_find of an unknown
 *                         op, an unregistered device type name, a safetensors entry, a
 *                         kernel registered for an op nobody defined, a missing file.
 *   TSR_ALREADY_EXISTS    Registering a name already taken: an op, device type or extension
 *                         defined twice.
 *   TSR_OUT_OF_RANGE      A position past the end of something whose size the caller can
 *                         query: op_kernel_info or safetensors_entry past the count, an index
 *                         tensor holding a value outside the indexed dimension (index_select,
 *                         gather), topk's k above the dimension size. (A dim argument outside
 *                         [-ndim, ndim) is INVALID_ARGUMENT.)
 *   TSR_UNIMPLEMENTED     The request is valid but Tessera (or this backend) does not do it:
 *                         no kernel for the op on this device and dtype (the dispatcher's
 *                         error), a derivative not implemented, an in-place op on a view that
 *                         requires grad, event timing on a device without events, a
 *                         safetensors dtype Tessera lacks (F8_E4M3), a size beyond a vendor
 *                         library's limits. A backend kernel that declines an input returns it
 *                         so that a composite can fall back.
 *   TSR_FAILED_PRECONDITION  The arguments are fine but the runtime is not in a state to run
 *                         the call; it fails again until that state changes: backward through
 *                         a graph already freed (retain_graph), a tensor saved for backward
 *                         modified in place, memory pools on a device whose allocator does not
 *                         cache, a memory fraction on a device reporting no total memory,
 *                         synchronizing while a stream captures a graph, a device with no
 *                         allocator registered.
 *   TSR_RESOURCE_EXHAUSTED  Out of memory (TSR_OUT_OF_MEMORY), device or host, including a
 *                         cap set with memory_set_fraction, page-locked memory, or a fixed
 *                         table of the core (too many device types). Raw allocators return it
 *                         and never abort; callers may free caches and retry.
 *   TSR_DATA_LOSS         Stored data is corrupt or unreadable as what it claims to be: a
 *                         malformed safetensors file (header, offsets, a BOOL byte other than
 *                         0 or 1), a checkpoint whose entries do not match.
 *   TSR_PERMISSION_DENIED The operating system refused access (EACCES, EPERM, EROFS).
 *   TSR_UNAVAILABLE       A failure of the environment that retrying may cure: an I/O error
 *                         other than a missing file or a refused access.
 *   TSR_INTERNAL          An invariant is broken: a bug in Tessera or a backend. A C++
 *                         exception escaping a kernel, a kernel receiving what its meta
 *                         function should have excluded, an asynchronous device error, a
 *                         backward formula returning the wrong shape.
 *   TSR_CANCELLED         The caller stopped the work (the SDK's DataLoader loop after the
 *                         loader is destroyed or restarted).
 *   TSR_ABORTED           Work abandoned because of what it found while running (tessera
 *                         train stops when the loss becomes NaN). The core does not use it.
 *   TSR_UNKNOWN           No better code is known: an error from foreign code without a code
 *                         (a std::exception in a DataLoader worker). status_create turns
 *                         TSR_OK into TSR_UNKNOWN.
 *   TSR_DEADLINE_EXCEEDED Reserved for time limits; nothing in Tessera returns it today.
 *   TSR_OK                Never carried by a status: success is NULL.
 */
typedef enum tsr_code_t {
  TSR_OK = 0,
  TSR_CANCELLED = 1,
  TSR_UNKNOWN = 2,
  TSR_INVALID_ARGUMENT = 3,
  TSR_DEADLINE_EXCEEDED = 4,
  TSR_NOT_FOUND = 5,
  TSR_ALREADY_EXISTS = 6,
  TSR_PERMISSION_DENIED = 7,
  TSR_RESOURCE_EXHAUSTED = 8, /* out of memory is reported with this code */
  TSR_FAILED_PRECONDITION = 9,
  TSR_ABORTED = 10,
  TSR_OUT_OF_RANGE = 11,
  TSR_UNIMPLEMENTED = 12,
  TSR_INTERNAL = 13,
  TSR_UNAVAILABLE = 14,
  TSR_DATA_LOSS = 15
} tsr_code_t;

#define TSR_OUT_OF_MEMORY TSR_RESOURCE_EXHAUSTED

/* ---- Entries of tsr_api_t (api.h) ------------------------------------------------------- */

/* status_create: a new status with `code` and a copy of `message` (NULL reads as ""). The
 * caller owns it (status_free, or return it from a plugin callback: the receiver frees it).
 * TSR_OK becomes TSR_UNKNOWN, since a status is never success; a code outside tsr_code_t
 * becomes TSR_UNKNOWN with the number at the front of the message, so readers may index tables
 * by code. Out of host memory gives a
 * static RESOURCE_EXHAUSTED status (status_free ignores it), never NULL. Since 1.0. */
typedef tsr_status_t (*tsr_status_create_fn_t)(tsr_code_t code, const char* message);
/* status_code: the status's code; TSR_OK for NULL. Since 1.0. */
typedef tsr_code_t (*tsr_status_code_fn_t)(tsr_status_t status);
/* status_message: the message, borrowed until status_free; "" for NULL. Since 1.0. */
typedef const char* (*tsr_status_message_fn_t)(tsr_status_t status);
/* status_free: releases a status once; NULL is a no-op. Since 1.0. */
typedef void (*tsr_status_free_fn_t)(tsr_status_t status);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_STATUS_H */
